/**
 * Built-in admission plugins through kubectl. Priority: a pod's priority (and preemption policy)
 * come from its PriorityClass, an unknown class refuses the pod, a pod may not set another
 * priority than its class's, the global default class applies to pods that name none, and only
 * one class may be the global default — each with the apiserver's message. DefaultIngressClass:
 * an Ingress without a class gets the default IngressClass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { kindHelpers } from './support.js';

let env: KubectlEnv;
beforeAll(async () => {
  env = await startKubectlEnv({ controllers: false });
});
afterAll(async () => {
  await env?.stop();
});

const { create, refused, getJson } = kindHelpers(() => env);
const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});
const priorityClass = (name: string, value: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name },
  value,
  ...extra,
});

describe('Priority admission', () => {
  it('gives a pod its class priority and preemption policy', async () => {
    await create(pod('plain'));
    expect((await getJson('pod', 'plain')).spec).toMatchObject({
      priority: 0,
      preemptionPolicy: 'PreemptLowerPriority',
    });
    expect((await getJson('pod', 'plain')).spec.priorityClassName).toBeUndefined();

    await create(pod('critical', { priorityClassName: 'system-cluster-critical' }));
    expect((await getJson('pod', 'critical')).spec.priority).toBe(2000000000);

    await create(priorityClass('batch', 500, { preemptionPolicy: 'Never' }));
    await create(pod('batch-job', { priorityClassName: 'batch' }));
    expect((await getJson('pod', 'batch-job')).spec).toMatchObject({
      priority: 500,
      preemptionPolicy: 'Never',
    });
  });

  it('refuses an unknown class, and a priority or policy other than the class gives', async () => {
    expect(await refused(pod('lost', { priorityClassName: 'gold' }))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "lost" is forbidden: no PriorityClass with name gold was found',
    );
    expect(await refused(pod('bold', { priorityClassName: 'batch', priority: 7 }))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "bold" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 500 from the given PriorityClass name',
    );
    expect(
      await refused(pod('eager', { priorityClassName: 'batch', preemptionPolicy: 'PreemptLowerPriority' })),
    ).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "eager" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name',
    );
    // The same priority as the class's is no conflict.
    await create(pod('same', { priorityClassName: 'batch', priority: 500 }));
    expect(await env.run(['get', 'pod', 'lost'])).toMatchObject({ code: 1 });
  });

  it('applies the global default class, of which there is only one', async () => {
    await create(priorityClass('standard', 100, { globalDefault: true }));
    expect(await refused(priorityClass('other', 200, { globalDefault: true }))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass standard is already marked as default. Only one default can exist',
    );
    const marked = await env.run(['patch', 'priorityclass', 'batch', '-p', '{"globalDefault":true}']);
    expect(marked).toMatchObject({
      code: 1,
      stderr:
        'Error from server (Forbidden): priorityclasses.scheduling.k8s.io "batch" is forbidden: PriorityClass standard is already marked as default. Only one default can exist\n',
    });
    await create(pod('defaulted'));
    expect((await getJson('pod', 'defaulted')).spec).toMatchObject({
      priorityClassName: 'standard',
      priority: 100,
      preemptionPolicy: 'PreemptLowerPriority',
    });
    // An update of the pod that leaves the priority out keeps it.
    const current = await getJson('pod', 'defaulted');
    delete current.spec.priority;
    current.metadata.labels = { touched: 'yes' };
    await env.ok(['replace', '-f', '-'], { input: JSON.stringify(current) });
    expect((await getJson('pod', 'defaulted')).spec.priority).toBe(100);
  });
});

describe('DefaultIngressClass admission', () => {
  const ingress = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'default', ...extra },
    spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
  });
  const ingressClass = (name: string, isDefault: boolean) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: {
      name,
      ...(isDefault && { annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }),
    },
    spec: { controller: 'example.com/ingress' },
  });

  it('gives a new Ingress without a class the default IngressClass, the newest of several', async () => {
    await create(ingress('before'));
    expect((await getJson('ingress', 'before')).spec.ingressClassName).toBeUndefined();
    await create(ingressClass('plain', false));
    await create(ingressClass('nginx', true));
    await create(ingress('after'));
    expect((await getJson('ingress', 'after')).spec.ingressClassName).toBe('nginx');
    // The legacy annotation names a class already: no default is added.
    await create(ingress('annotated', { annotations: { 'kubernetes.io/ingress.class': 'traefik' } }));
    expect((await getJson('ingress', 'annotated')).spec.ingressClassName).toBeUndefined();
    // An update that clears the class is left alone.
    await env.ok([
      'patch',
      'ingress',
      'after',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/ingressClassName"}]',
    ]);
    expect((await getJson('ingress', 'after')).spec.ingressClassName).toBeUndefined();
    // Two defaults: the newer one (created a second later, as creationTimestamps count seconds).
    await new Promise((r) => setTimeout(r, 1100));
    await create(ingressClass('contour', true));
    await create(ingress('newest'));
    expect((await getJson('ingress', 'newest')).spec.ingressClassName).toBe('contour');
  });
});

describe('ResourceQuota admission', () => {
  const NS = 'quota';
  /** A quota whose status the quota controller would have written (controllers are off here). */
  const quota = async (name: string, hard: Record<string, string>, used?: Record<string, string>) => {
    await create({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name, namespace: NS },
      spec: { hard },
    });
    await env.ok([
      'patch',
      'resourcequota',
      name,
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { hard, ...(used && { used }) } }),
    ]);
  };
  const cpuPod = (name: string, cpu?: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      containers: [
        { name: 'c', image: 'nginx', ...(cpu && { resources: { requests: { cpu, memory: '64Mi' } } }) },
      ],
    },
  });

  it('refuses what would exceed a quota, with its numbers, and charges what it admits', async () => {
    await env.ok(['create', 'namespace', NS]);
    await quota('compute', { pods: '2', 'requests.cpu': '500m' }, { pods: '0', 'requests.cpu': '0' });
    await create(cpuPod('p1', '200m'));
    // Charged at admission, before any controller recounts.
    expect((await getJson('resourcequota', 'compute', '-n', NS)).status.used).toEqual({
      pods: '1',
      'requests.cpu': '200m',
    });
    expect(await refused(cpuPod('big', '400m'))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "big" is forbidden: exceeded quota: compute, requested: requests.cpu=400m, used: requests.cpu=200m, limited: requests.cpu=500m',
    );
    await create(cpuPod('p2', '100m'));
    expect(await refused(cpuPod('p3', '100m'))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "p3" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2',
    );
    expect(await refused(cpuPod('bare'))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "bare" is forbidden: failed quota: compute: must specify requests.cpu for: c',
    );
    // A dry run is decided the same, and charges nothing.
    expect((await getJson('resourcequota', 'compute', '-n', NS)).status.used).toEqual({
      pods: '2',
      'requests.cpu': '300m',
    });
    const dry = await env.run(['create', '-f', '-', '--dry-run=server'], {
      input: JSON.stringify(cpuPod('p4', '100m')),
    });
    expect(dry.stderr).toContain('exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2');
  });

  it('counts objects of any kind, and refuses while the controller has not counted', async () => {
    await quota(
      'objects',
      { 'count/configmaps': '1', 'count/widgets.example.com': '0' },
      { 'count/configmaps': '0' },
    );
    // `count/widgets.example.com` has no usage yet: every ConfigMap write is still decided on
    // configmaps only, which the quota has counted.
    await env.ok(['create', 'configmap', 'one', '-n', NS]);
    expect(await env.run(['create', 'configmap', 'two', '-n', NS])).toMatchObject({
      code: 1,
      stderr:
        'error: failed to create configmap: configmaps "two" is forbidden: exceeded quota: objects, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1\n',
    });
    await quota('secrets', { secrets: '5' });
    expect(await env.run(['create', 'secret', 'generic', 's', '-n', NS])).toMatchObject({
      code: 1,
      stderr:
        'error: failed to create secret secrets "s" is forbidden: status unknown for quota: secrets, resource: secrets\n',
    });
  });
});

describe('LimitRanger admission', () => {
  const NS = 'limited';
  const pod = (name: string, resources?: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: { containers: [{ name: 'c', image: 'nginx', ...(resources && { resources }) }], ...extra },
  });

  it('fills in default requests and limits, and says so in an annotation', async () => {
    await env.ok(['create', 'namespace', NS]);
    await create({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'defaults', namespace: NS },
      spec: {
        limits: [
          {
            type: 'Container',
            default: { cpu: '500m', memory: '256Mi' },
            defaultRequest: { cpu: '100m' },
            max: { cpu: '1' },
            min: { memory: '32Mi' },
          },
        ],
      },
    });
    await create(pod('plain'));
    const plain = await getJson('pod', 'plain', '-n', NS);
    expect(plain.spec.containers[0].resources).toEqual({
      limits: { cpu: '500m', memory: '256Mi' },
      requests: { cpu: '100m', memory: '256Mi' },
    });
    expect(plain.metadata.annotations).toEqual({
      'kubernetes.io/limit-ranger':
        'LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c',
    });
    // A limit the pod states is its request too, as the pod's own defaulting makes it.
    await create(pod('own', { limits: { cpu: '200m', memory: '64Mi' } }));
    const own = await getJson('pod', 'own', '-n', NS);
    expect(own.spec.containers[0].resources).toEqual({
      limits: { cpu: '200m', memory: '64Mi' },
      requests: { cpu: '200m', memory: '64Mi' },
    });
    expect(own.metadata.annotations).toBeUndefined();
  });

  it('refuses a container over the max or under the min, with every reason', async () => {
    expect(await refused(pod('greedy', { limits: { cpu: '2', memory: '16Mi' } }))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "greedy" is forbidden: [minimum memory usage per Container is 32Mi, but request is 16Mi, maximum cpu usage per Container is 1, but limit is 2]',
    );
    expect(await refused(pod('tiny', { requests: { memory: '16Mi' } }))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "tiny" is forbidden: minimum memory usage per Container is 32Mi, but request is 16Mi',
    );
  });

  it('checks a pod total, the limit to request ratio, and claims', async () => {
    await create({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'pods', namespace: NS },
      spec: {
        limits: [
          { type: 'Pod', max: { memory: '1Gi' }, maxLimitRequestRatio: { cpu: '2' } },
          { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
        ],
      },
    });
    expect(await refused(pod('spiky', { requests: { cpu: '100m' }, limits: { cpu: '300m' } }))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "spiky" is forbidden: cpu max limit to request ratio per Pod is 2, but provided ratio is 3.000000',
    );
    const claim = (name: string, storage: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: NS },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    });
    expect(await refused(claim('huge', '20Gi'))).toBe(
      'Error from server (Forbidden): error when creating "STDIN": persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi',
    );
    await create(claim('fits', '5Gi'));
    expect(
      await env.run([
        'patch',
        'pvc',
        'fits',
        '-n',
        NS,
        '-p',
        '{"spec":{"resources":{"requests":{"storage":"500Mi"}}}}',
      ]),
    ).toMatchObject({ code: 1 });
  });
});
