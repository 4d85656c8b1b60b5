import { Client, Pod, ReplicaSet } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 2 } });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

const replicaSet = (name: string, replicas: number): ReplicaSet => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

const activePods = async (app: string) =>
  (await client.api(Pod, 'default').list({ labelSelector: { app } })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );

describe('ReplicaSet controller', () => {
  it('creates the pods of a ReplicaSet, which run, and reports them ready', async () => {
    const sets = client.api(ReplicaSet, 'default');
    const rs = await sets.create(replicaSet('web', 3));
    const status = await eventually(async () => {
      const s = (await sets.get('web')).status;
      return s?.readyReplicas === 3 ? s : undefined;
    });
    expect(status).toMatchObject({
      replicas: 3,
      fullyLabeledReplicas: 3,
      availableReplicas: 3,
      observedGeneration: 1,
    });
    const pods = await activePods('web');
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      expect(p.metadata?.name).toMatch(/^web-[a-z0-9]{5}$/);
      expect(p.metadata?.ownerReferences).toEqual([
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web',
          uid: rs.metadata?.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(p.status?.phase).toBe('Running');
    }
  });

  it('replaces a deleted pod, and scales with kubectl', async () => {
    const sets = client.api(ReplicaSet, 'default');
    await sets.create(replicaSet('api', 2));
    const first = await eventually(async () => {
      const pods = await activePods('api');
      return pods.length === 2 ? pods : undefined;
    });
    await client.api(Pod, 'default').delete(first[0]?.metadata?.name ?? '');
    await eventually(async () => {
      const pods = await activePods('api');
      return pods.length === 2 && !pods.some((p) => p.metadata?.uid === first[0]?.metadata?.uid);
    });

    await k.ok(['scale', 'rs', 'api', '--replicas=4']);
    await eventually(async () => (await sets.get('api')).status?.readyReplicas === 4);
    await k.ok(['scale', 'rs', 'api', '--replicas=1']);
    await eventually(async () => {
      const s = (await sets.get('api')).status;
      return s?.replicas === 1 && (await activePods('api')).length === 1;
    });
  });

  it('loses its pods to the garbage collector when deleted', async () => {
    await client.api(ReplicaSet, 'default').create(replicaSet('gone', 2));
    await eventually(async () => (await activePods('gone')).length === 2);
    await k.ok(['delete', 'rs', 'gone']);
    await eventually(
      async () =>
        (await client.api(Pod, 'default').list({ labelSelector: { app: 'gone' } })).items.length === 0,
    );
  });

  it('adopts orphan pods its selector matches and releases pods whose labels stop matching', async () => {
    const podsApi = client.api(Pod, 'default');
    // An orphan that matches before the ReplicaSet exists, and one that does not.
    await podsApi.create({
      metadata: { name: 'stray', labels: { app: 'adopt' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    await podsApi.create({
      metadata: { name: 'other', labels: { app: 'other' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    const rs = await client.api(ReplicaSet, 'default').create(replicaSet('adopt', 2));
    const controller = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'adopt',
      uid: rs.metadata?.uid,
      controller: true,
      blockOwnerDeletion: true,
    };
    // The stray pod counts as one of its two: one more is created, not two.
    await eventually(
      async () => (await client.api(ReplicaSet, 'default').get('adopt')).status?.replicas === 2,
    );
    expect((await podsApi.get('stray')).metadata?.ownerReferences).toEqual([controller]);
    expect((await podsApi.get('other')).metadata?.ownerReferences).toBeUndefined();
    expect((await activePods('adopt')).length).toBe(2);

    // Relabelled out of the selector: released, and replaced.
    await k.ok(['label', 'pod', 'stray', 'app=gone', '--overwrite']);
    await eventually(async () => (await podsApi.get('stray')).metadata?.ownerReferences === undefined);
    await eventually(async () => (await activePods('adopt')).length === 2);
    expect((await podsApi.get('stray')).metadata?.deletionTimestamp).toBeUndefined();

    // An orphan created later that matches is adopted, and the surplus pod deleted.
    await podsApi.create({
      metadata: { name: 'late', labels: { app: 'adopt' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    await eventually(async () => {
      const live = await activePods('adopt');
      return (
        live.length === 2 &&
        live.every((p) => JSON.stringify(p.metadata?.ownerReferences) === JSON.stringify([controller]))
      );
    });
  });

  it('records SuccessfulCreate and SuccessfulDelete events (kubectl describe)', async () => {
    await client.api(ReplicaSet, 'default').create(replicaSet('told', 2));
    await eventually(async () => (await activePods('told')).length === 2);
    await k.ok(['scale', 'rs', 'told', '--replicas=1']);
    const described = await eventually(async () => {
      const out = await k.ok(['describe', 'rs', 'told']);
      return out.includes('SuccessfulDelete') ? out : undefined;
    });
    expect(described).toMatch(
      /Normal\s+SuccessfulCreate\s+\S+\s+replicaset-controller\s+Created pod: told-[a-z0-9]{5}/,
    );
    expect(described).toMatch(
      /Normal\s+SuccessfulDelete\s+\S+\s+replicaset-controller\s+Deleted pod: told-[a-z0-9]{5}/,
    );
    const events = await k.ok([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=told,reason=SuccessfulCreate',
      '-o',
      'json',
    ]);
    const items = JSON.parse(events).items as Array<{
      involvedObject: object;
      source: object;
      count: number;
    }>;
    expect(items).toHaveLength(2);
    expect(items[0]).toMatchObject({
      involvedObject: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'told', namespace: 'default' },
      source: { component: 'replicaset-controller' },
      count: 1,
    });
  });
});
