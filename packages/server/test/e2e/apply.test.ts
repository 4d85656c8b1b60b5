/**
 * Client-side `kubectl apply` against the local control plane: multi-document manifests,
 * server defaults, the three-way merge of `last-applied-configuration`, server dry run, diff
 * and strict field validation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { deployment, inCidr, itemsByKindName, manifest } from './support.js';

const NS = 'shop';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } };
const config = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'web-config', namespace: NS },
  data,
});
const service = (port: number) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: NS },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port, targetPort: 8080 }] },
});
const webV1 = deployment('web', NS, {
  replicas: 2,
  labels: { tier: 'front' },
  containers: [
    {
      name: 'web',
      image: 'nginx:1.27',
      ports: [{ name: 'http', containerPort: 8080 }],
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
      ],
    },
    { name: 'sidecar', image: 'busybox:1.36', args: ['sleep', 'infinity'] },
  ],
});
// v2 drops the tier label, replicas, the sidecar and env A, and changes the image and env B.
const webV2 = deployment('web', NS, {
  containers: [
    {
      name: 'web',
      image: 'nginx:1.28',
      ports: [{ name: 'http', containerPort: 8080 }],
      env: [{ name: 'B', value: '3' }],
    },
  ],
});
const v1 = manifest(namespace, config({ color: 'blue', size: 'large' }), webV1, service(80));
const v2 = manifest(namespace, config({ color: 'red' }), webV2, service(8080));

/** What kubectl records as last applied: the manifest plus an empty annotations map. */
const recorded = (obj: Record<string, any>) => ({
  ...obj,
  metadata: { ...obj.metadata, annotations: {} },
});

let env: KubectlEnv;
const getAll = async () =>
  itemsByKindName(
    await env.ok([
      'get',
      'namespace/shop',
      'configmap/web-config',
      'deploy/web',
      'svc/web',
      '-n',
      NS,
      '-o',
      'json',
    ]),
  );

beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(async () => {
  await env?.stop();
});

describe('kubectl apply (client-side)', () => {
  let clusterIP = '';
  let versions = new Map<string, string>();

  it('creates every document of a multi-document manifest, with server defaults', async () => {
    const out = await env.ok(['apply', '-f', '-'], { input: v1 });
    expect(out).toBe(
      'namespace/shop created\nconfigmap/web-config created\ndeployment.apps/web created\nservice/web created\n',
    );

    const items = await getAll();
    const ns = items.get('Namespace/shop');
    expect(ns.status).toEqual({ phase: 'Active' });
    expect(ns.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(ns.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'shop' });

    const cm = items.get('ConfigMap/web-config');
    expect(cm.data).toEqual({ color: 'blue', size: 'large' });
    expect(cm.metadata.generation).toBeUndefined();
    expect(cm.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

    const dep = items.get('Deployment/web');
    expect(dep.metadata.generation).toBe(1);
    expect(JSON.parse(dep.metadata.annotations[LAST_APPLIED])).toEqual(recorded(webV1));
    expect(dep.spec).toMatchObject({ replicas: 2, revisionHistoryLimit: 10, progressDeadlineSeconds: 600 });
    expect(dep.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
    });
    expect(dep.spec.template.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      securityContext: {},
    });
    expect(dep.spec.template.spec.containers[0]).toMatchObject({
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      resources: {},
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    });

    const svc = items.get('Service/web');
    clusterIP = svc.spec.clusterIP;
    expect(inCidr(clusterIP, '10.96.0.0/12')).toBe(true);
    expect(clusterIP).not.toBe('10.96.0.1'); // the `kubernetes` Service has it
    expect(svc.spec).toMatchObject({
      type: 'ClusterIP',
      clusterIPs: [clusterIP],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    });

    versions = new Map([...items].map(([k, o]) => [k, o.metadata.resourceVersion]));
  });

  it('reports every object unchanged when the manifest is applied again, and writes nothing', async () => {
    const out = await env.ok(['apply', '-f', '-'], { input: v1 });
    expect(out).toBe(
      'namespace/shop unchanged\nconfigmap/web-config unchanged\ndeployment.apps/web unchanged\nservice/web unchanged\n',
    );
    const items = await getAll();
    expect(new Map([...items].map(([k, o]) => [k, o.metadata.resourceVersion]))).toEqual(versions);
  });

  it('three-way merges a changed manifest: changed fields set, removed fields deleted, foreign fields kept', async () => {
    // A field the manifest never managed: a three-way merge must leave it alone.
    expect(await env.ok(['annotate', 'deploy/web', '-n', NS, 'owner=ops'])).toBe(
      'deployment.apps/web annotated\n',
    );

    const out = await env.ok(['apply', '-f', '-'], { input: v2 });
    expect(out).toBe(
      'namespace/shop unchanged\nconfigmap/web-config configured\ndeployment.apps/web configured\nservice/web configured\n',
    );

    const items = await getAll();
    const cm = items.get('ConfigMap/web-config');
    expect(cm.data).toEqual({ color: 'red' });
    expect(JSON.parse(cm.metadata.annotations[LAST_APPLIED])).toEqual(recorded(config({ color: 'red' })));

    const dep = items.get('Deployment/web');
    expect(JSON.parse(dep.metadata.annotations[LAST_APPLIED])).toEqual(recorded(webV2));
    expect(dep.metadata.annotations.owner).toBe('ops');
    expect(dep.metadata.labels).toEqual({ app: 'web' });
    // 3: kube's deployment strategy counts annotations too (`kubectl annotate` made 2).
    expect(dep.metadata.generation).toBe(3);
    expect(dep.spec.replicas).toBe(1); // removed from the manifest, so defaulted again
    const containers = dep.spec.template.spec.containers;
    expect(containers.map((c: any) => c.name)).toEqual(['web']);
    expect(containers[0].image).toBe('nginx:1.28');
    expect(containers[0].env).toEqual([{ name: 'B', value: '3' }]);
    expect(containers[0].ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);

    const svc = items.get('Service/web');
    expect(svc.spec.clusterIP).toBe(clusterIP); // allocated once, kept across the merge
    expect(svc.spec.ports).toEqual([{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }]);
  });

  it('apply --dry-run=server returns the defaulted objects and persists nothing', async () => {
    const preview = deployment('preview', NS, { replicas: 3 });
    const input = manifest(preview, config({ color: 'green' }));
    const list = JSON.parse(await env.ok(['apply', '--dry-run=server', '-o', 'json', '-f', '-'], { input }));
    const items = new Map<string, any>(list.items.map((o: any) => [`${o.kind}/${o.metadata.name}`, o]));

    const dep = items.get('Deployment/preview');
    expect(dep.metadata.uid).toBeTruthy();
    expect(dep.metadata.generation).toBe(1);
    expect(dep.spec.replicas).toBe(3);
    expect(dep.spec.strategy.type).toBe('RollingUpdate');
    expect(dep.spec.template.spec.containers[0].imagePullPolicy).toBe('IfNotPresent');
    expect(items.get('ConfigMap/web-config').data).toEqual({ color: 'green' });

    const messages = await env.ok(['apply', '--dry-run=server', '-f', '-'], { input });
    expect(messages).toBe(
      'deployment.apps/preview created (server dry run)\nconfigmap/web-config configured (server dry run)\n',
    );

    const missing = await env.run(['get', 'deploy/preview', '-n', NS]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('Error from server (NotFound): deployments.apps "preview" not found\n');
    const cm = JSON.parse(await env.ok(['get', 'configmap/web-config', '-n', NS, '-o', 'json']));
    expect(cm.data).toEqual({ color: 'red' });
  });

  it('diff shows the changes of a manifest (exit 1) and nothing for an identical one (exit 0)', async () => {
    const same = await env.run(['diff', '-f', '-'], { input: v2 });
    expect(same).toMatchObject({ code: 0, stdout: '' });

    const changed = manifest(namespace, config({ color: 'purple' }), {
      ...webV2,
      spec: { ...(webV2.spec as object), replicas: 3 },
    });
    const diff = await env.run(['diff', '-f', '-'], { input: changed });
    expect(diff.code).toBe(1);
    const lines = diff.stdout.split('\n');
    expect(lines).toContain('-  color: red');
    expect(lines).toContain('+  color: purple');
    expect(lines).toContain('-  replicas: 1');
    expect(lines).toContain('+  replicas: 3');
    expect(lines).toContain('-  generation: 3');
    expect(lines).toContain('+  generation: 4');
    expect(diff.stdout).not.toContain('Namespace'); // unchanged objects are not in the diff

    // diff runs a server dry run: nothing changed.
    const items = await getAll();
    expect(items.get('ConfigMap/web-config').data).toEqual({ color: 'red' });
    expect(items.get('Deployment/web').spec.replicas).toBe(1);
  });

  it('stores quantities canonically, so a non-canonical one is reconfigured on every apply', async () => {
    const limits = deployment('limits', NS, {
      containers: [
        {
          name: 'c',
          image: 'busybox:1.36',
          resources: { limits: { cpu: '0.5', memory: '1024Mi' }, requests: { cpu: '250m', memory: '64Mi' } },
        },
      ],
    });
    expect(await env.ok(['apply', '-f', '-'], { input: manifest(limits) })).toBe(
      'deployment.apps/limits created\n',
    );
    const dep = JSON.parse(await env.ok(['get', 'deploy/limits', '-n', NS, '-o', 'json']));
    expect(dep.spec.template.spec.containers[0].resources).toEqual({
      limits: { cpu: '500m', memory: '1Gi' },
      requests: { cpu: '250m', memory: '64Mi' },
    });
    // kubectl compares the manifest with the live object: `0.5` differs from `500m`.
    expect(await env.ok(['apply', '-f', '-'], { input: manifest(limits) })).toBe(
      'deployment.apps/limits configured\n',
    );
    const again = JSON.parse(await env.ok(['get', 'deploy/limits', '-n', NS, '-o', 'json']));
    expect(again.metadata.resourceVersion).toBe(dep.metadata.resourceVersion);
  });

  it('refuses unknown fields with the strict decoding error, on create and on patch', async () => {
    const typo = deployment('typo', NS);
    (typo.spec as any).replica = 2;
    const created = await env.run(['apply', '-f', '-'], { input: manifest(typo) });
    expect(created.code).toBe(1);
    expect(created.stderr).toBe(
      'Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replica"\n',
    );

    const patched = await env.run(['apply', '-f', '-'], {
      input: manifest({ ...config({ color: 'red' }), datum: { x: '1' } }),
    });
    expect(patched.code).toBe(1);
    // The patch handler's 422 shows the strategic merge patch kubectl sent, as Go prints a map.
    const lastApplied =
      '{"apiVersion":"v1","data":{"color":"red"},"datum":{"x":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"web-config","namespace":"shop"}}\n';
    const shown = `map[datum:map[x:1] metadata:map[annotations:map[${LAST_APPLIED}:${lastApplied}]]]`;
    expect(patched.stderr).toBe(
      `The request is invalid: patch: Invalid value: ${JSON.stringify(shown)}: strict decoding error: unknown field "datum"\n`,
    );
    expect((await env.run(['get', 'deploy/typo', '-n', NS])).code).toBe(1);
  });
});
