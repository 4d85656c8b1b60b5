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
});
