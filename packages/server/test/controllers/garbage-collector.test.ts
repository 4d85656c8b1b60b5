import { Client, ClusterRole, ConfigMap, Event, isNotFound, Namespace, ReplicaSet } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;
let seq = 0;

beforeAll(async () => {
  k = await startKubectlEnv();
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

interface Ref {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}
interface Meta {
  metadata?: { name?: string; uid?: string };
}

const HOLD = 'test.kubeloop.dev/hold';

async function newNamespace(): Promise<string> {
  const name = `gc-${++seq}`;
  await client.api(Namespace).create({ metadata: { name } });
  return name;
}

const cmRef = (o: Meta, extra: Partial<Ref> = {}): Ref => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  name: o.metadata?.name ?? '',
  uid: o.metadata?.uid ?? '',
  ...extra,
});

async function gone(get: () => Promise<unknown>): Promise<boolean> {
  try {
    await get();
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

describe('garbage collector', () => {
  it('deletes dependents in the background once their owner is gone', async () => {
    const ns = await newNamespace();
    const cms = client.api(ConfigMap, ns);
    const owner = await cms.create({ metadata: { name: 'owner' } });
    await cms.create({ metadata: { name: 'child', ownerReferences: [cmRef(owner)] } });
    await cms.create({ metadata: { name: 'grandchild', ownerReferences: [cmRef(await cms.get('child'))] } });
    await cms.create({ metadata: { name: 'unrelated' } });
    await cms.delete('owner');
    await eventually(() => gone(() => cms.get('grandchild')), 10_000, 'the grandchild deleted');
    expect(await gone(() => cms.get('child'))).toBe(true);
    expect((await cms.get('unrelated')).metadata?.name).toBe('unrelated');
  });

  it('treats a reference whose UID differs from the current owner of that name as gone', async () => {
    const ns = await newNamespace();
    const cms = client.api(ConfigMap, ns);
    await cms.create({ metadata: { name: 'owner' } });
    await cms.create({
      metadata: {
        name: 'stale',
        ownerReferences: [cmRef({ metadata: { name: 'owner', uid: 'not-the-owner' } })],
      },
    });
    await eventually(() => gone(() => cms.get('stale')), 10_000, 'the dependent of a stale UID deleted');
    expect((await cms.get('owner')).metadata?.name).toBe('owner');
  });

  it('removes references to owners that are gone while another owner remains', async () => {
    const ns = await newNamespace();
    const cms = client.api(ConfigMap, ns);
    const a = await cms.create({ metadata: { name: 'a' } });
    const b = await cms.create({ metadata: { name: 'b' } });
    await cms.create({ metadata: { name: 'shared', ownerReferences: [cmRef(a), cmRef(b)] } });
    await cms.delete('a');
    const refs = await eventually(async () => {
      const r = (await cms.get('shared')).metadata?.ownerReferences ?? [];
      return r.length === 1 ? r : undefined;
    }, 10_000);
    expect(refs[0]?.uid).toBe(b.metadata?.uid);
    await cms.delete('b');
    await eventually(() => gone(() => cms.get('shared')), 10_000, 'the last owner gone');
  });

  it('deletes namespaced dependents of a cluster-scoped owner', async () => {
    const ns = await newNamespace();
    const cms = client.api(ConfigMap, ns);
    const roles = client.api(ClusterRole);
    const role = await roles.create({ metadata: { name: `gc-owner-${ns}` } });
    await cms.create({
      metadata: {
        name: 'of-cluster-owner',
        ownerReferences: [
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRole',
            name: role.metadata?.name ?? '',
            uid: role.metadata?.uid ?? '',
          },
        ],
      },
    });
    await cms.create({ metadata: { name: 'anchor' } });
    await roles.delete(role.metadata?.name ?? '');
    await eventually(() => gone(() => cms.get('of-cluster-owner')), 10_000);
    expect((await cms.get('anchor')).metadata?.name).toBe('anchor');
  });

  it('does not honour owner references across namespaces', async () => {
    const ns1 = await newNamespace();
    const ns2 = await newNamespace();
    const owner = await client.api(ConfigMap, ns1).create({ metadata: { name: 'owner' } });
    // The reference resolves in the dependent's namespace, where no such owner exists.
    await client
      .api(ConfigMap, ns2)
      .create({ metadata: { name: 'elsewhere', ownerReferences: [cmRef(owner)] } });
    await eventually(() => gone(() => client.api(ConfigMap, ns2).get('elsewhere')), 10_000);
    expect((await client.api(ConfigMap, ns1).get('owner')).metadata?.uid).toBe(owner.metadata?.uid);
  });

  it('leaves Events alone, as kube-controller-manager ignores them', async () => {
    const ns = await newNamespace();
    const cms = client.api(ConfigMap, ns);
    const owner = await cms.create({ metadata: { name: 'owner' } });
    await client.api(Event, ns).create({
      metadata: { name: 'owned-event', ownerReferences: [cmRef(owner)] },
      involvedObject: { kind: 'ConfigMap', name: 'owner', namespace: ns },
      reason: 'Test',
    });
    await cms.create({ metadata: { name: 'child', ownerReferences: [cmRef(owner)] } });
    await cms.delete('owner');
    // The collector has acted on the owner's deletion: the ConfigMap it owned is gone, the Event not.
    await eventually(() => gone(() => cms.get('child')), 10_000, 'the dependent ConfigMap collected');
    expect((await client.api(Event, ns).get('owned-event')).metadata?.name).toBe('owned-event');
  });

  it('foreground: the owner stays until blocking dependents are gone', async () => {
    const ns = await newNamespace();
    const cms = client.api(ConfigMap, ns);
    const owner = await cms.create({ metadata: { name: 'owner' } });
    await cms.create({
      metadata: {
        name: 'blocker',
        finalizers: [HOLD],
        ownerReferences: [cmRef(owner, { blockOwnerDeletion: true })],
      },
    });
    await cms.create({ metadata: { name: 'plain', ownerReferences: [cmRef(owner)] } });
    await cms.delete('owner', { propagationPolicy: 'Foreground' });

    // The GC deleted the blocker (it waits on its own finalizer) and the plain dependent…
    await eventually(async () => (await cms.get('blocker')).metadata?.deletionTimestamp, 10_000);
    await eventually(() => gone(() => cms.get('plain')), 10_000);
    // …while the owner is held by its foregroundDeletion finalizer.
    const waiting = await cms.get('owner');
    expect(waiting.metadata?.deletionTimestamp).toBeDefined();
    expect(waiting.metadata?.finalizers).toContain('foregroundDeletion');

    await cms.patch('blocker', { metadata: { finalizers: null } });
    await eventually(() => gone(() => cms.get('owner')), 10_000, 'the owner deleted after its dependents');
  });

  it('foreground: dependents that do not block the owner do not hold it', async () => {
    const ns = await newNamespace();
    const cms = client.api(ConfigMap, ns);
    const owner = await cms.create({ metadata: { name: 'owner' } });
    await cms.create({ metadata: { name: 'slow', finalizers: [HOLD], ownerReferences: [cmRef(owner)] } });
    await cms.delete('owner', { propagationPolicy: 'Foreground' });
    await eventually(() => gone(() => cms.get('owner')), 10_000);
    const slow = await cms.get('slow');
    expect(slow.metadata?.deletionTimestamp).toBeDefined();
    await cms.patch('slow', { metadata: { finalizers: null } });
  });

  it('orphan: dependents lose their reference to the owner and stay', async () => {
    const ns = await newNamespace();
    const cms = client.api(ConfigMap, ns);
    const owner = await cms.create({ metadata: { name: 'owner' } });
    const other = await cms.create({ metadata: { name: 'other' } });
    await cms.create({ metadata: { name: 'kept', ownerReferences: [cmRef(owner, { controller: true })] } });
    await cms.create({ metadata: { name: 'co-owned', ownerReferences: [cmRef(owner), cmRef(other)] } });
    await cms.delete('owner', { propagationPolicy: 'Orphan' });
    await eventually(() => gone(() => cms.get('owner')), 10_000);
    expect((await cms.get('kept')).metadata?.ownerReferences).toBeUndefined();
    expect((await cms.get('co-owned')).metadata?.ownerReferences?.map((r) => r.name)).toEqual(['other']);
  });

  it('kubectl delete --cascade=background|foreground|orphan', async () => {
    const ns = await newNamespace();
    const rss = client.api(ReplicaSet, ns);
    const makeRs = async (deploy: string) => {
      const uid = (await k.ok(['-n', ns, 'get', 'deploy', deploy, '-o', 'jsonpath={.metadata.uid}'])).trim();
      await rss.create({
        metadata: {
          name: `${deploy}-rs`,
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: deploy,
              uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          selector: { matchLabels: { app: deploy } },
          template: {
            metadata: { labels: { app: deploy } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      });
    };
    for (const d of ['bg', 'fg', 'orphan']) {
      await k.ok(['-n', ns, 'create', 'deployment', d, '--image=nginx']);
      await makeRs(d);
    }

    expect(await k.ok(['-n', ns, 'delete', 'deploy', 'bg', '--cascade=background'])).toContain(
      'deployment.apps "bg" deleted',
    );
    await eventually(() => gone(() => rss.get('bg-rs')), 10_000);

    // kubectl waits until the deployment is gone, which the GC allows once its ReplicaSet is.
    expect(await k.ok(['-n', ns, 'delete', 'deploy', 'fg', '--cascade=foreground'])).toContain(
      'deployment.apps "fg" deleted',
    );
    expect(await gone(() => rss.get('fg-rs'))).toBe(true);

    await k.ok(['-n', ns, 'delete', 'deploy', 'orphan', '--cascade=orphan']);
    await eventually(async () => (await k.run(['-n', ns, 'get', 'deploy', 'orphan'])).code !== 0, 10_000);
    const kept = await rss.get('orphan-rs');
    expect(kept.metadata?.ownerReferences).toBeUndefined();
  });
});
