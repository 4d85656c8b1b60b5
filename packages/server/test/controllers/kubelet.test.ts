import { Client, Lease, Node, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, SIMULATE_ANNOTATION, startTestEnv } from '../../src/index.js';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let env: ControlPlane;
let client: Client;

beforeAll(async () => {
  env = await startTestEnv({
    nodes: {
      count: 2,
      labels: { 'topology.kubernetes.io/zone': 'z1' },
      timeScale: 0.01,
      heartbeatIntervalMs: 50,
    },
  });
  client = new Client(env.clientConfig);
});
afterAll(async () => {
  await client.close();
  await env.stop();
});

const pod = (
  name: string,
  extra: { node?: string; annotations?: Record<string, string>; grace?: number } = {},
): Pod => ({
  metadata: { name, ...(extra.annotations && { annotations: extra.annotations }) },
  spec: {
    nodeName: extra.node ?? 'kubeloop-node-1',
    ...(extra.grace !== undefined && { terminationGracePeriodSeconds: extra.grace }),
    containers: [{ name: 'app', image: 'nginx:1.27' }],
  },
});

describe('simulated nodes', () => {
  it('registers Ready nodes with their labels, capacity and heartbeat leases', async () => {
    const nodes = await eventually(async () => {
      const list = await client.api(Node).list();
      const ready = list.items.filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return ready.length === 2 ? ready : undefined;
    });
    expect(nodes.map((n) => n.metadata?.name).sort()).toEqual(['kubeloop-node-1', 'kubeloop-node-2']);
    const n1 = nodes.find((n) => n.metadata?.name === 'kubeloop-node-1');
    expect(n1?.metadata?.labels).toMatchObject({
      'kubernetes.io/hostname': 'kubeloop-node-1',
      'kubernetes.io/os': 'linux',
      'topology.kubernetes.io/zone': 'z1',
    });
    expect(n1?.status?.allocatable).toMatchObject({ cpu: '4', memory: '8Gi', pods: '110' });

    const leases = client.api(Lease, 'kube-node-lease');
    const first = await eventually(() => leases.get('kubeloop-node-1').catch(() => undefined));
    expect(first.spec?.holderIdentity).toBe('kubeloop-node-1');
    expect(first.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Node', uid: n1?.metadata?.uid });
    // The heartbeat renews it.
    await eventually(
      async () => (await leases.get('kubeloop-node-1')).spec?.renewTime !== first.spec?.renewTime,
    );
  });
});

describe('simulated kubelet', () => {
  it('runs a pod bound to a node: Running, Ready, with container statuses and IPs', async () => {
    const pods = client.api(Pod, 'default');
    await pods.create(pod('web'));
    const running = await eventually(async () => {
      const p = await pods.get('web');
      return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
    });
    expect(running.status?.phase).toBe('Running');
    expect(running.status?.podIP).toMatch(/^10\.244\.0\.\d+$/);
    expect(running.status?.hostIP).toBe('172.18.0.2');
    expect(running.status?.containerStatuses?.[0]).toMatchObject({
      name: 'app',
      image: 'nginx:1.27',
      ready: true,
      started: true,
      restartCount: 0,
    });
    expect(running.status?.containerStatuses?.[0]?.state?.running?.startedAt).toBeDefined();
  });

  it('deletes a pod on a node gracefully: deletionTimestamp first, gone after the (scaled) grace period', async () => {
    const pods = client.api(Pod, 'default');
    await pods.create(pod('graceful', { grace: 5 }));
    await eventually(async () => (await pods.get('graceful')).status?.phase === 'Running');
    const deleted = (await pods.delete('graceful')) as Pod;
    expect(deleted.metadata?.deletionTimestamp).toBeDefined();
    expect(deleted.metadata?.deletionGracePeriodSeconds).toBe(5);
    await eventually(() =>
      pods.get('graceful').then(
        () => false,
        () => true,
      ),
    );
  });

  it('deletes a pod on an unknown node, or not scheduled, at once', async () => {
    const pods = client.api(Pod, 'default');
    await pods.create(pod('elsewhere', { node: 'not-a-node' }));
    const deleted = (await pods.delete('elsewhere')) as Pod;
    expect(deleted.metadata?.deletionTimestamp).toBeUndefined();
    await expect(pods.get('elsewhere')).rejects.toMatchObject({ code: 404 });
  });

  it('fails, succeeds, crash-loops or never gets ready on request', async () => {
    const pods = client.api(Pod, 'default');
    for (const mode of ['fail', 'succeed', 'crashloop', 'never-ready'])
      await pods.create(
        pod(`sim-${mode}`, { annotations: { [SIMULATE_ANNOTATION]: mode }, node: 'kubeloop-node-2' }),
      );

    const failed = await eventually(async () => {
      const p = await pods.get('sim-fail');
      return p.status?.phase === 'Failed' ? p : undefined;
    });
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 1,
      reason: 'Error',
    });
    const succeeded = await eventually(async () => {
      const p = await pods.get('sim-succeed');
      return p.status?.phase === 'Succeeded' ? p : undefined;
    });
    expect(succeeded.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);

    const crashing = await eventually(async () => {
      const p = await pods.get('sim-crashloop');
      return (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2 ? p : undefined;
    });
    expect(crashing.status?.phase).toBe('Running');
    expect(crashing.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('CrashLoopBackOff');

    const unready = await eventually(async () => {
      const p = await pods.get('sim-never-ready');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    expect(unready.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
    });
  });
});

describe('kubectl with simulated nodes', () => {
  let k: KubectlEnv;
  beforeAll(async () => {
    k = await startKubectlEnv({ nodes: { count: 1, timeScale: 0.01 } });
  });
  afterAll(async () => {
    await k.stop();
  });

  it('get nodes, run a pod, wait for it, delete it (kubectl waits for the kubelet)', async () => {
    await eventually(
      async () => (await k.run(['wait', '--for=condition=Ready', 'node/kubeloop-node-1'])).code === 0,
    );
    const nodes = await k.ok(['get', 'nodes']);
    expect(nodes).toMatch(/^kubeloop-node-1\s+Ready\s+<none>\s+\S+\s+v1\.32\.0-kubeloop$/m);
    await k.ok(['run', 'web', '--image=nginx', '--overrides={"spec":{"nodeName":"kubeloop-node-1"}}']);
    await k.ok(['wait', '--for=condition=Ready', 'pod/web', '--timeout=20s']);
    expect(await k.ok(['get', 'pod', 'web'])).toMatch(/^web\s+1\/1\s+Running\s+0\s+/m);
    expect(await k.ok(['delete', 'pod', 'web'])).toContain('pod "web" deleted');
    expect((await k.run(['get', 'pod', 'web'])).code).not.toBe(0);
  });
});
