/**
 * The eviction subresource as `kubectl drain` and operators use it: a pod goes when its
 * PodDisruptionBudget allows, and a budget with no disruption left answers 429 until the pods
 * that replace the evicted ones are ready elsewhere. Two simulated nodes, the built-in
 * controllers (ReplicaSets, the scheduler, kubelets, the disruption controller) running.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { manifest } from './support.js';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv({ nodes: { count: 2 } });
});
afterAll(async () => {
  await env?.stop();
});

const NS = 'default';

/** The pods of `app`, as `name node phase ready` rows. */
async function pods(
  app: string,
): Promise<{ name: string; node: string; ready: boolean; deleting: boolean }[]> {
  const list = JSON.parse(await env.ok(['get', 'pods', '-n', NS, '-l', `app=${app}`, '-o', 'json']));
  return list.items.map((p: any) => ({
    name: p.metadata.name,
    node: p.spec.nodeName ?? '',
    ready: (p.status.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'),
    deleting: Boolean(p.metadata.deletionTimestamp),
  }));
}

/** POSTs an Eviction of `pod` through `kubectl create --raw`, returning kubectl's result. */
const evict = (pod: string) =>
  env.run(['create', '--raw', `/api/v1/namespaces/${NS}/pods/${pod}/eviction`, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: pod, namespace: NS },
    }),
  });

describe('pods/eviction', () => {
  it('spends the budget, refuses with 429 when none is left, and marks the evicted pod', async () => {
    await env.ok(['create', 'deployment', 'guarded', '--image=nginx', '--replicas=2', '-n', NS]);
    await env.ok([
      'create',
      'poddisruptionbudget',
      'guarded',
      '--selector=app=guarded',
      '--min-available=2',
      '-n',
      NS,
    ]);
    await env.ok(['rollout', 'status', 'deployment/guarded', '-n', NS, '--timeout=30s']);
    await eventually(async () => {
      const pdb = JSON.parse(await env.ok(['get', 'pdb', 'guarded', '-n', NS, '-o', 'json']));
      expect(pdb.status.currentHealthy).toBe(2);
      expect(pdb.status.disruptionsAllowed).toBe(0);
      return true;
    });
    const [first] = await pods('guarded');
    const refused = await evict(first!.name);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Cannot evict pod as it would violate the pod');
    expect((await pods('guarded')).find((p) => p.name === first!.name)?.deleting).toBe(false);

    // One disruption allowed: the first eviction passes and spends it. With both nodes cordoned
    // its replacement cannot become ready, so the next eviction waits, whatever the timing.
    await env.ok(['patch', 'pdb', 'guarded', '-n', NS, '--type=merge', '-p', '{"spec":{"minAvailable":1}}']);
    await eventually(async () => {
      const pdb = JSON.parse(await env.ok(['get', 'pdb', 'guarded', '-n', NS, '-o', 'json']));
      expect(pdb.status.disruptionsAllowed).toBe(1);
      return true;
    });
    await env.ok(['cordon', 'kubeloop-node-1', 'kubeloop-node-2']);
    const names = (await pods('guarded')).map((p) => p.name);
    const allowed = await evict(names[0]!);
    expect(allowed.code, allowed.stderr).toBe(0);
    const gone = await env.run(['get', 'pod', names[0]!, '-n', NS, '-o', 'json']);
    if (gone.code === 0) {
      // Still terminating: it carries the condition the eviction put on it.
      const pod = JSON.parse(gone.stdout);
      expect(pod.metadata.deletionTimestamp).toBeDefined();
      expect(pod.status.conditions).toContainEqual(
        expect.objectContaining({
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'EvictionByEvictionAPI',
        }),
      );
    }
    const second = await evict(names[1]!);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('Cannot evict pod as it would violate the pod');
    // Once the replacement runs elsewhere, the budget has a disruption to give again.
    await env.ok(['uncordon', 'kubeloop-node-1', 'kubeloop-node-2']);
    await eventually(async () => (await evict(names[1]!)).code === 0, 20_000, 'the second eviction');
    await env.ok(['delete', 'deployment', 'guarded', '-n', NS]);
    await env.ok(['delete', 'pdb', 'guarded', '-n', NS]);
  });

  it('lets kubectl drain empty a node without going below the budget', async () => {
    await env.ok(['create', 'deployment', 'drained', '--image=nginx', '--replicas=3', '-n', NS]);
    await env.ok(['apply', '-f', '-'], {
      input: manifest({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'drained', namespace: NS },
        spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'drained' } } },
      }),
    });
    await env.ok(['rollout', 'status', 'deployment/drained', '-n', NS, '--timeout=30s']);
    const node = 'kubeloop-node-1';
    const drained = await env.run(
      [
        'drain',
        node,
        '--ignore-daemonsets',
        '--delete-emptydir-data',
        '--timeout=90s',
        '--pod-selector=app=drained',
      ],
      { timeoutMs: 120_000 },
    );
    expect(drained.code, drained.stderr).toBe(0);
    expect(drained.stdout).toContain(`node/${node} drained`);
    await eventually(async () => {
      const now = await pods('drained');
      expect(now.filter((p) => !p.deleting && p.ready && p.node !== node)).toHaveLength(3);
      expect(now.filter((p) => p.node === node)).toEqual([]);
      return true;
    }, 30_000);
    await env.ok(['uncordon', node]);
  });
});
