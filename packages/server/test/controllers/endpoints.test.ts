import { Client, Endpoints, Pod, Service } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EndpointSliceKind, endpointSubsets, sliceContents } from '../../src/controllers/endpoints.js';
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

const pod = (name: string, app: string, simulate?: string): Pod => ({
  metadata: {
    name,
    labels: { app },
    ...(simulate && { annotations: { 'kubeloop.dev/simulate': simulate } }),
  },
  spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
});

const runningPod = async (name: string) =>
  eventually(async () => {
    const p = await client.api(Pod, 'default').get(name);
    return p.status?.podIP && p.status.phase === 'Running' ? p : undefined;
  });

describe('Endpoints controller', () => {
  it('lists ready and not-ready pods of a Service with its ports resolved', async () => {
    const pods = client.api(Pod, 'default');
    await pods.create(pod('web-a', 'web'));
    await pods.create(pod('web-b', 'web', 'never-ready'));
    await pods.create(pod('other', 'other'));
    const a = await runningPod('web-a');
    const b = await runningPod('web-b');
    await client.api(Service, 'default').create({
      metadata: { name: 'web', labels: { tier: 'front' } },
      spec: {
        selector: { app: 'web' },
        ports: [
          { name: 'http', port: 80, targetPort: 'http' },
          { name: 'metrics', port: 9090, targetPort: 9090 },
        ],
      },
    });
    const eps = client.api(Endpoints, 'default');
    const ep = await eventually(async () => {
      const e = await eps.get('web').catch(() => undefined);
      return e?.subsets?.[0]?.addresses && e.subsets[0].notReadyAddresses ? e : undefined;
    });
    expect(ep.metadata?.labels).toEqual({ tier: 'front' });
    expect(ep.subsets).toEqual([
      {
        addresses: [
          {
            ip: a.status?.podIP,
            nodeName: a.spec?.nodeName,
            targetRef: { kind: 'Pod', namespace: 'default', name: 'web-a', uid: a.metadata?.uid },
          },
        ],
        notReadyAddresses: [
          {
            ip: b.status?.podIP,
            nodeName: b.spec?.nodeName,
            targetRef: { kind: 'Pod', namespace: 'default', name: 'web-b', uid: b.metadata?.uid },
          },
        ],
        ports: [
          { name: 'http', port: 8080, protocol: 'TCP' },
          { name: 'metrics', port: 9090, protocol: 'TCP' },
        ],
      },
    ]);
    const out = await k.ok(['get', 'endpoints', 'web']);
    expect(out).toContain(`${a.status?.podIP}:8080`);
    expect(out).not.toContain(`${b.status?.podIP}`);

    await pods.delete('web-a');
    await eventually(async () => {
      const e = await eps.get('web');
      return !e.subsets?.[0]?.addresses && e.subsets?.[0]?.notReadyAddresses?.length === 1;
    });
    await pods.delete('web-b');
    await eventually(async () => (await eps.get('web')).subsets === undefined);
    expect(await k.ok(['get', 'endpoints', 'web'])).toContain('<none>');

    await k.ok(['delete', 'service', 'web']);
    await eventually(async () => {
      try {
        await eps.get('web');
        return false;
      } catch {
        return true;
      }
    });
  });

  it('writes EndpointSlices of a Service: ready, serving and terminating endpoints, kubectl get', async () => {
    const pods = client.api(Pod, 'default');
    await pods.create(pod('api-a', 'api'));
    await pods.create(pod('api-b', 'api', 'never-ready'));
    const a = await runningPod('api-a');
    const b = await runningPod('api-b');
    const svc = await client.api(Service, 'default').create({
      metadata: { name: 'api', labels: { tier: 'back' } },
      spec: { selector: { app: 'api' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    const slices = client.api(EndpointSliceKind, 'default');
    const listSlices = async () =>
      (await slices.list({ labelSelector: { 'kubernetes.io/service-name': 'api' } })).items;
    const [slice] = await eventually(async () => {
      const items = await listSlices();
      return items.length === 1 && items[0]?.endpoints?.length === 2 ? items : undefined;
    });
    expect(slice?.metadata?.name).toMatch(/^api-[a-z0-9]{5}$/);
    expect(slice?.metadata?.labels).toEqual({
      tier: 'back',
      'kubernetes.io/service-name': 'api',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    });
    expect(slice?.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Service',
        name: 'api',
        uid: svc.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(slice?.addressType).toBe('IPv4');
    expect(slice?.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const byName = new Map(slice?.endpoints?.map((e) => [e.targetRef.name, e]));
    expect(byName.get('api-a')).toEqual({
      addresses: [a.status?.podIP],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: a.spec?.nodeName,
      targetRef: { kind: 'Pod', namespace: 'default', name: 'api-a', uid: a.metadata?.uid },
    });
    expect(byName.get('api-b')).toMatchObject({
      addresses: [b.status?.podIP],
      conditions: { ready: false, serving: false, terminating: false },
    });
    expect(await k.ok(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=api'])).toMatch(
      /^api-[a-z0-9]{5}\s+IPv4\s+8080\s+\S+,\S+\s+\d+s$/m,
    );

    // A terminating pod stays listed, not ready, until it is gone.
    await pods.delete('api-a');
    await eventually(async () => {
      const items = await listSlices();
      const e = items[0]?.endpoints?.find((x) => x.targetRef.name === 'api-a');
      return !e || e.conditions.terminating;
    });
    await pods.delete('api-b');
    // No pods: one placeholder slice without endpoints.
    // Each pod goes through the simulated kubelet's graceful stop first; a loaded CI machine
    // (CI at 00:19: not there after 10 s) takes longer than an idle one.
    const empty = await eventually(async () => {
      const items = await listSlices();
      return items.length === 1 && (items[0]?.endpoints ?? []).length === 0 ? items[0] : undefined;
    }, 30_000);
    expect(empty?.ports ?? []).toEqual([]);
    expect(await k.ok(['get', 'endpointslices', empty?.metadata?.name ?? ''])).toMatch(
      /\s+IPv4\s+<unset>\s+<unset>\s+/,
    );
    // The slices are the Service's dependents: the garbage collector takes them with it.
    await k.ok(['delete', 'service', 'api']);
    await eventually(async () => (await listSlices()).length === 0);
  });

  it("puts each endpoint's zone in its slice, and follows a node's zone label as kubectl changes it", async () => {
    const pods = client.api(Pod, 'default');
    await pods.create(pod('zoned-a', 'zoned'));
    const a = await runningPod('zoned-a');
    const node = a.spec?.nodeName ?? '';
    await client.api(Service, 'default').create({
      metadata: { name: 'zoned' },
      spec: { selector: { app: 'zoned' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const endpoint = async () =>
      (
        await client
          .api(EndpointSliceKind, 'default')
          .list({ labelSelector: { 'kubernetes.io/service-name': 'zoned' } })
      ).items[0]?.endpoints?.[0];
    await k.ok(['label', 'node', node, 'topology.kubernetes.io/zone=zone-a', '--overwrite']);
    expect(
      await eventually(async () => ((await endpoint())?.zone === 'zone-a' ? endpoint() : undefined)),
    ).toMatchObject({
      nodeName: node,
      zone: 'zone-a',
    });
    await k.ok(['label', 'node', node, 'topology.kubernetes.io/zone=zone-b', '--overwrite']);
    await eventually(async () => (await endpoint())?.zone === 'zone-b');
    await k.ok(['label', 'node', node, 'topology.kubernetes.io/zone-']);
    await eventually(async () => {
      const e = await endpoint();
      return e !== undefined && e.zone === undefined;
    });
    await k.ok(['delete', 'service', 'zoned']);
    await pods.delete('zoned-a');
  });

  it('leaves alone the Endpoints of a Service without a selector', async () => {
    await client.api(Service, 'default').create({
      metadata: { name: 'external' },
      spec: { ports: [{ port: 5432 }] },
    });
    const eps = client.api(Endpoints, 'default');
    await eps.create({
      metadata: { name: 'external' },
      subsets: [{ addresses: [{ ip: '10.1.2.3' }], ports: [{ port: 5432, protocol: 'TCP' }] }],
    });
    // A selector Service created afterwards gets its Endpoints: by then the manual one was seen.
    await client.api(Service, 'default').create({
      metadata: { name: 'probe' },
      spec: { selector: { app: 'none' }, ports: [{ port: 1 }] },
    });
    await eventually(async () => eps.get('probe').catch(() => undefined));
    expect((await eps.get('external')).subsets).toEqual([
      { addresses: [{ ip: '10.1.2.3' }], ports: [{ port: 5432, protocol: 'TCP' }] },
    ]);
  });
});

describe('endpointSubsets', () => {
  const running = (
    name: string,
    ip: string,
    extra: Partial<NonNullable<Pod['spec']>> = {},
    phase = 'Running',
  ): Pod => ({
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: { containers: [{ name: 'c', ports: [{ name: 'web', containerPort: 8080 }] }], ...extra },
    status: { phase, podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const ref = (name: string) => ({ kind: 'Pod', namespace: 'ns', name, uid: `uid-${name}` });

  it('groups pods by the ports they resolve, skips finished pods and sets hostnames of the subdomain', () => {
    const svc: Service = {
      metadata: { name: 'svc', namespace: 'ns' },
      spec: { selector: { a: 'b' }, ports: [{ name: 'http', port: 80, targetPort: 'web' }] },
    };
    const other: Pod = { ...running('p3', '10.0.0.3'), spec: { containers: [{ name: 'c' }] } };
    const subsets = endpointSubsets(svc, [
      running('p2', '10.0.0.2', { hostname: 'h2', subdomain: 'svc' }),
      running('p1', '10.0.0.1'),
      other,
      running('done', '10.0.0.4', { restartPolicy: 'Never' }, 'Succeeded'),
    ]);
    expect(subsets).toEqual([
      {
        addresses: [
          { ip: '10.0.0.1', targetRef: ref('p1') },
          { ip: '10.0.0.2', hostname: 'h2', targetRef: ref('p2') },
        ],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ]);
  });

  it('lists every pod of a headless Service without ports, and publishes not-ready ones on request', () => {
    const notReady: Pod = { ...running('p1', '10.0.0.1'), status: { phase: 'Running', podIP: '10.0.0.1' } };
    const headless: Service = {
      metadata: { name: 'h', namespace: 'ns' },
      spec: { clusterIP: 'None', selector: {} },
    };
    expect(endpointSubsets(headless, [notReady])).toEqual([
      { notReadyAddresses: [{ ip: '10.0.0.1', targetRef: ref('p1') }] },
    ]);
    const publish: Service = { ...headless, spec: { ...headless.spec, publishNotReadyAddresses: true } };
    expect(endpointSubsets(publish, [notReady])).toEqual([
      { addresses: [{ ip: '10.0.0.1', targetRef: ref('p1') }] },
    ]);
  });
});

describe('sliceContents', () => {
  const svc: Service = {
    metadata: { name: 's' },
    spec: { ports: [{ name: 'p', port: 80, targetPort: 8080 }] },
  };
  const podAt = (i: number, extra: Partial<Pod> = {}): Pod => ({
    metadata: { name: `p${i}`, namespace: 'd', uid: `u${i}` },
    spec: { containers: [{ name: 'c', image: 'x' }] },
    status: {
      phase: 'Running',
      podIP: `10.0.${Math.floor(i / 250)}.${i % 250}`,
      conditions: [{ type: 'Ready', status: 'True' }],
    },
    ...extra,
  });

  it('puts at most 100 endpoints in a slice and leaves out finished pods', () => {
    const pods = Array.from({ length: 150 }, (_, i) => podAt(i));
    pods.push(podAt(999, { status: { phase: 'Succeeded', podIP: '10.9.9.9' } }));
    const slices = sliceContents(svc, pods);
    expect(slices.map((x) => x.endpoints.length)).toEqual([100, 50]);
    expect(slices[0]?.ports).toEqual([{ name: 'p', port: 8080, protocol: 'TCP' }]);
  });

  it('marks endpoints ready for publishNotReadyAddresses, and gives an empty slice without pods', () => {
    const notReady = podAt(1, { status: { phase: 'Running', podIP: '10.1.1.1' } });
    const publish: Service = { ...svc, spec: { ...svc.spec, publishNotReadyAddresses: true } };
    expect(sliceContents(publish, [notReady])[0]?.endpoints[0]?.conditions).toEqual({
      ready: true,
      serving: false,
      terminating: false,
    });
    expect(sliceContents(svc, [])).toEqual([{ ports: [], endpoints: [] }]);
  });
});
