import { Client, Pod, PodDisruptionBudget, ReplicaSet } from 'kubeloop/client';
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

const replicaSet = (name: string, replicas: number): ReplicaSet => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

describe('disruption controller', () => {
  it('reports a minAvailable budget from the pods its selector matches', async () => {
    await client.api(ReplicaSet, 'default').create(replicaSet('web', 3));
    const pdbs = client.api(PodDisruptionBudget, 'default');
    await pdbs.create({
      metadata: { name: 'web' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    });
    const status = await eventually(async () => {
      const s = (await pdbs.get('web')).status;
      return s?.currentHealthy === 3 ? s : undefined;
    });
    expect(status).toMatchObject({
      currentHealthy: 3,
      desiredHealthy: 2,
      expectedPods: 3,
      disruptionsAllowed: 1,
      observedGeneration: 1,
    });
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods' }),
    ]);
    const out = await k.ok(['get', 'pdb', 'web']);
    expect(out).toMatch(/^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\n/);
    expect(out).toMatch(/\nweb\s+2\s+N\/A\s+1\s+\S+\n/);
  });

  it('counts a maxUnavailable percentage against the replicas of the pods controller, and follows pod health', async () => {
    await client.api(ReplicaSet, 'default').create(replicaSet('api', 4));
    const pdbs = client.api(PodDisruptionBudget, 'default');
    await pdbs.create({
      metadata: { name: 'api' },
      spec: { maxUnavailable: '50%', selector: { matchLabels: { app: 'api' } } },
    });
    await eventually(async () => {
      const s = (await pdbs.get('api')).status;
      return (
        s?.currentHealthy === 4 &&
        s.expectedPods === 4 &&
        s.desiredHealthy === 2 &&
        s.disruptionsAllowed === 2
      );
    });
    // Scaling the ReplicaSet down changes the expected count, and the budget follows.
    await k.ok(['scale', 'rs', 'api', '--replicas=2']);
    const s = await eventually(async () => {
      const st = (await pdbs.get('api')).status;
      return st?.expectedPods === 2 && st.currentHealthy === 2 ? st : undefined;
    });
    expect(s).toMatchObject({ desiredHealthy: 1, disruptionsAllowed: 1 });
  });

  it('allows no disruption and says why when the budget cannot be met', async () => {
    const pdbs = client.api(PodDisruptionBudget, 'default');
    await pdbs.create({
      metadata: { name: 'none' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'nothing' } } },
    });
    const s = await eventually(async () =>
      (await pdbs.get('none')).status?.conditions?.length ? (await pdbs.get('none')).status : undefined,
    );
    expect(s).toMatchObject({ currentHealthy: 0, desiredHealthy: 1, expectedPods: 0, disruptionsAllowed: 0 });
    expect(s?.conditions?.[0]).toMatchObject({
      type: 'DisruptionAllowed',
      status: 'False',
      reason: 'InsufficientPods',
    });
    // A pod that matches later counts as soon as it is Ready.
    await client.api(Pod, 'default').create({
      metadata: { name: 'lonely', labels: { app: 'nothing' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    await eventually(async () => (await pdbs.get('none')).status?.currentHealthy === 1);
    const events = await k.ok([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=none',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    expect(events).toContain('NoPods');
  });
});
