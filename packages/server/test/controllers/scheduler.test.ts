import { Client, Node, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { httpClient } from '../http.js';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

const pod = (name: string, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec },
});

/** Waits until the simulated nodes are registered and Ready, so that messages count them all. */
const readyNodes = (client: Client, n: number) =>
  eventually(async () => {
    const nodes = (await client.api(Node).list()).items;
    return (
      nodes.filter((x) => x.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        .length === n
    );
  });

const scheduledCondition = async (client: Client, name: string) =>
  eventually(async () => {
    const p = await client.api(Pod, 'default').get(name);
    return p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable');
  });

describe('scheduler', () => {
  let env: ControlPlane;
  let client: Client;
  beforeAll(async () => {
    env = await startTestEnv({ nodes: { count: 3, labels: { pool: 'general' } } });
    client = new Client(env.clientConfig);
    await readyNodes(client, 3);
  });
  afterAll(async () => {
    await client.close();
    await env.stop();
  });

  it('binds a pending pod to a node, which then runs it', async () => {
    const pods = client.api(Pod, 'default');
    await pods.create(pod('placed'));
    const running = await eventually(async () => {
      const p = await pods.get('placed');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    expect(running.spec?.nodeName).toMatch(/^kubeloop-node-[123]$/);
    expect(running.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
  });

  it('spreads pods over the nodes', async () => {
    const pods = client.api(Pod, 'default');
    for (let i = 0; i < 6; i++) await pods.create(pod(`spread-${i}`, { nodeSelector: { pool: 'general' } }));
    const nodes = await eventually(async () => {
      const list = await pods.list({ labelSelector: {} });
      const placed = list.items.filter((p) => p.metadata?.name?.startsWith('spread-') && p.spec?.nodeName);
      return placed.length === 6 ? placed.map((p) => p.spec?.nodeName) : undefined;
    });
    expect(new Set(nodes).size).toBe(3);
  });

  it('marks a pod no node selects Unschedulable, and binds it once a node matches', async () => {
    await client.api(Pod, 'default').create(pod('picky', { nodeSelector: { disk: 'ssd' } }));
    const c = await scheduledCondition(client, 'picky');
    expect(c).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    expect(c.message).toBe(
      "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    );
    await client.api(Node).patch('kubeloop-node-2', { metadata: { labels: { disk: 'ssd' } } });
    const placed = await eventually(
      async () => (await client.api(Pod, 'default').get('picky')).spec?.nodeName,
    );
    expect(placed).toBe('kubeloop-node-2');
  });

  it('honours required node affinity', async () => {
    await client.api(Pod, 'default').create(
      pod('affine', {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    { key: 'kubernetes.io/hostname', operator: 'In', values: ['kubeloop-node-3'] },
                  ],
                },
              ],
            },
          },
        },
      }),
    );
    expect(
      await eventually(async () => (await client.api(Pod, 'default').get('affine')).spec?.nodeName),
    ).toBe('kubeloop-node-3');
  });

  it('counts resource requests against allocatable', async () => {
    const big = (name: string, cpu: string) =>
      pod(name, { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu } } }] });
    await client.api(Pod, 'default').create(big('huge', '10'));
    const c = await scheduledCondition(client, 'huge');
    expect(c.message).toBe(
      '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..',
    );
    // 3 CPUs fit on a 4-CPU node once; a second 3-CPU pod on the same pinned node does not.
    const pinned = (name: string) => ({
      ...big(name, '3'),
      spec: { ...big(name, '3').spec!, nodeSelector: { 'kubernetes.io/hostname': 'kubeloop-node-1' } },
    });
    await client.api(Pod, 'default').create(pinned('first'));
    await eventually(async () => (await client.api(Pod, 'default').get('first')).spec?.nodeName);
    await client.api(Pod, 'default').create(pinned('second'));
    const second = await scheduledCondition(client, 'second');
    expect(second.message).toBe(
      "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod., 2 Preemption is not helpful for scheduling.",
    );
    // Room freed: the waiting pod is placed.
    await client.api(Pod, 'default').delete('first', { gracePeriodSeconds: 0 });
    expect(
      await eventually(async () => (await client.api(Pod, 'default').get('second')).spec?.nodeName),
    ).toBe('kubeloop-node-1');
  });
});

describe('scheduler and taints', () => {
  let env: ControlPlane;
  let client: Client;
  beforeAll(async () => {
    env = await startTestEnv({
      nodes: { count: 2, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
    });
    client = new Client(env.clientConfig);
    await readyNodes(client, 2);
  });
  afterAll(async () => {
    await client.close();
    await env.stop();
  });

  it('leaves out nodes whose taints the pod does not tolerate', async () => {
    await client.api(Pod, 'default').create(pod('intolerant'));
    const c = await scheduledCondition(client, 'intolerant');
    expect(c.message).toBe(
      '0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    );
    await client.api(Pod, 'default').create(
      pod('tolerant', {
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
      }),
    );
    expect(
      await eventually(async () => (await client.api(Pod, 'default').get('tolerant')).spec?.nodeName),
    ).toMatch(/^kubeloop-node-[12]$/);
  });
});

describe('pods/binding', () => {
  let env: ControlPlane;
  beforeAll(async () => {
    env = await startTestEnv();
  });
  afterAll(async () => {
    await env.stop();
  });

  it('binds a pod once, like kube-apiserver', async () => {
    const http = httpClient(env);
    const base = '/api/v1/namespaces/default/pods';
    expect((await http.post(base, pod('b'))).status).toBe(201);
    const binding = (name: string, node: string) => ({
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name },
      target: { apiVersion: 'v1', kind: 'Node', name: node },
    });

    const mismatch = await http.post(`${base}/b/binding`, binding('other', 'n1'));
    expect(mismatch.status).toBe(400);
    expect(mismatch.json).toMatchObject({
      reason: 'BadRequest',
      message: 'name in URL does not match name in Binding object',
    });

    const ok = await http.post(`${base}/b/binding`, binding('b', 'n1'));
    expect(ok.status).toBe(201);
    expect(ok.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const bound = (await http.get(`${base}/b`)).json as Pod;
    expect(bound.spec?.nodeName).toBe('n1');
    expect(bound.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');

    const again = await http.post(`${base}/b/binding`, binding('b', 'n2'));
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on pods/binding "b": pod b is already assigned to node "n1"',
    });
    expect((await http.post(`${base}/missing/binding`, binding('missing', 'n1'))).status).toBe(404);
    expect(
      (await http.post('/api/v1/namespaces/default/configmaps/x/binding', binding('x', 'n1'))).status,
    ).toBe(404);
    http.close();
  });
});

describe('kubectl with the scheduler', () => {
  let k: KubectlEnv;
  beforeAll(async () => {
    k = await startKubectlEnv({ nodes: { count: 2 } });
  });
  afterAll(async () => {
    await k.stop();
  });

  it('runs a pod on a node it picks, and describes why another cannot run', async () => {
    await k.ok(['run', 'web', '--image=nginx']);
    await k.ok(['wait', '--for=condition=Ready', 'pod/web', '--timeout=20s']);
    expect(await k.ok(['get', 'pod', 'web', '-o', 'wide'])).toMatch(
      /^web\s+1\/1\s+Running\s+0\s+\S+\s+10\.244\.\d+\.\d+\s+kubeloop-node-[12]\s+<none>\s+<none>$/m,
    );
    await k.ok(['run', 'nowhere', '--image=nginx', '--overrides={"spec":{"nodeSelector":{"gpu":"yes"}}}']);
    await k.ok(['wait', '--for=condition=PodScheduled=false', 'pod/nowhere', '--timeout=20s']);
    expect(await k.ok(['get', 'pod', 'nowhere'])).toMatch(/^nowhere\s+0\/1\s+Pending\s+0\s+/m);
  });
});
