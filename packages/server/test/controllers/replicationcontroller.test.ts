import { Client, Pod, ReplicationController } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 1 } });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

const activePods = async (app: string) =>
  (await client.api(Pod, 'default').list({ labelSelector: { app } })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );

describe('ReplicationController controller', () => {
  it('creates the pods of a ReplicationController, owned by it, and reports them ready', async () => {
    const rcs = client.api(ReplicationController, 'default');
    const rc = await rcs.create({
      metadata: { name: 'legacy' },
      spec: {
        replicas: 2,
        selector: { app: 'legacy' },
        template: {
          metadata: { labels: { app: 'legacy' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    const status = await eventually(async () => {
      const s = (await rcs.get('legacy')).status;
      return s?.readyReplicas === 2 ? s : undefined;
    });
    expect(status).toMatchObject({
      replicas: 2,
      fullyLabeledReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 1,
    });
    const pods = await activePods('legacy');
    expect(pods).toHaveLength(2);
    for (const p of pods)
      expect(p.metadata?.ownerReferences).toEqual([
        {
          apiVersion: 'v1',
          kind: 'ReplicationController',
          name: 'legacy',
          uid: rc.metadata?.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    const events = await k.ok([
      'get',
      'events',
      '--field-selector',
      'involvedObject.kind=ReplicationController',
      '-o',
      'jsonpath={range .items[*]}{.reason} {.source.component}{"\\n"}{end}',
    ]);
    expect(events).toContain('SuccessfulCreate replication-controller');
  });

  it('scales with kubectl and adopts an orphan pod it selects', async () => {
    await client.api(Pod, 'default').create({
      metadata: { name: 'stray', labels: { app: 'old' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    await k.ok(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'old' },
        spec: {
          replicas: 2,
          selector: { app: 'old' },
          template: {
            metadata: { labels: { app: 'old' } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      }),
    });
    const pods = await eventually(async () => {
      const ps = await activePods('old');
      return ps.length === 2 && ps.every((p) => p.metadata?.ownerReferences?.[0]?.name === 'old')
        ? ps
        : undefined;
    });
    expect(pods.map((p) => p.metadata?.name)).toContain('stray');
    await k.ok(['scale', 'rc', 'old', '--replicas=3']);
    await eventually(
      async () => (await client.api(ReplicationController, 'default').get('old')).status?.readyReplicas === 3,
    );
    await k.ok(['scale', 'rc', 'old', '--replicas=0']);
    await eventually(async () => (await activePods('old')).length === 0);
  });
});
