/**
 * The generated kustomize layout against the local control plane, driven by kubectl like a user:
 * `kubectl apply -k config/default` installs the operator (Namespace, CRDs, RBAC,
 * ServiceAccount, metrics Service, Deployment), `dist/install.yaml` is what kustomize renders,
 * and the samples are valid objects of the installed kinds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { ConfigMap, Deployment, Secret, Service } from 'kubeloop/client';
import {
  derivePolicyRules,
  generateManifests,
  installManifests,
  type OperatorProject,
  writeGeneratedFiles,
} from 'kubeloop/manifests';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { EtcdCluster, Foo, FooBar, GenericDaemon, Sink } from './kinds.js';

type Obj = Record<string, any>;

const project: OperatorProject = {
  name: 'seeds-operator',
  image: 'registry.example.com/seeds-operator:v0.3.1',
  resources: [Foo, FooBar, GenericDaemon, EtcdCluster, Sink],
  controllers: [
    { for: Foo, owns: [Deployment] },
    { for: EtcdCluster, owns: [Service], watches: [ConfigMap] },
    { for: GenericDaemon, watches: [FooBar] },
    {
      for: Sink,
      extraRules: [
        { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['sink-token'] },
      ],
    },
  ],
  samples: [
    Foo.build({ metadata: { name: 'example-foo' }, spec: { deploymentName: 'example-foo', replicas: 1 } }),
    EtcdCluster.build({ metadata: { name: 'example-etcd' }, spec: { size: 3 } }),
    FooBar.build({ metadata: { name: 'example-foobar' }, spec: { target: 'web' } }),
    GenericDaemon.build({ metadata: { name: 'example-daemon' }, spec: { image: 'nginx' } }),
    Sink.build({
      metadata: { name: 'example-sink' },
      spec: { name: 'sink', weights: [100], ports: [{ name: 'http' }] },
    }),
  ],
};

const id = (o: Obj) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);

let env: KubectlEnv;
let dir: string;

beforeAll(async () => {
  env = await startKubectlEnv();
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-manifests-'));
  await writeGeneratedFiles(dir, generateManifests(project));
});

afterAll(async () => {
  await env?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('kubectl apply -k config/default', () => {
  it('renders with kustomize exactly as dist/install.yaml', async () => {
    const rendered = docs(await env.ok(['kustomize', join(dir, 'config/default')]));
    const expected = JSON.parse(JSON.stringify(installManifests(project))) as Obj[];
    expect(rendered.map(id)).toEqual(expected.map(id));
    expect(rendered).toEqual(expected);
  });

  it('installs the CRDs, namespace, RBAC, ServiceAccount, Service and Deployment', async () => {
    const out = await env.ok(['apply', '-k', join(dir, 'config/default')]);
    const lines = out.trim().split('\n').sort();
    expect(lines).toEqual(
      [
        'namespace/seeds-operator-system created',
        'customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io created',
        'customresourcedefinition.apiextensions.k8s.io/foobars.example.com created',
        'customresourcedefinition.apiextensions.k8s.io/genericdaemons.mydomain.com created',
        'customresourcedefinition.apiextensions.k8s.io/etcdclusters.etcd.database.coreos.com created',
        'customresourcedefinition.apiextensions.k8s.io/sinks.kitchen.example.com created',
        'serviceaccount/seeds-operator-controller-manager created',
        'role.rbac.authorization.k8s.io/seeds-operator-leader-election-role created',
        'clusterrole.rbac.authorization.k8s.io/seeds-operator-manager-role created',
        'rolebinding.rbac.authorization.k8s.io/seeds-operator-leader-election-rolebinding created',
        'clusterrolebinding.rbac.authorization.k8s.io/seeds-operator-manager-rolebinding created',
        'service/seeds-operator-controller-manager-metrics-service created',
        'deployment.apps/seeds-operator-controller-manager created',
        ...['foo', 'foobar', 'genericdaemon', 'etcdcluster', 'sink'].flatMap((k) => [
          `clusterrole.rbac.authorization.k8s.io/seeds-operator-${k}-editor-role created`,
          `clusterrole.rbac.authorization.k8s.io/seeds-operator-${k}-viewer-role created`,
        ]),
      ].sort(),
    );

    for (const crd of [
      'foos.samplecontroller.k8s.io',
      'etcdclusters.etcd.database.coreos.com',
      'sinks.kitchen.example.com',
    ])
      await env.ok(['wait', '--for=condition=Established', `crd/${crd}`, '--timeout=20s']);

    const ns = 'seeds-operator-system';
    const role = JSON.parse(
      await env.ok(['get', 'clusterrole', 'seeds-operator-manager-role', '-o', 'json']),
    );
    expect(role.rules).toEqual(derivePolicyRules(project).cluster);
    expect(role.rules).toContainEqual({
      apiGroups: ['etcd.database.coreos.com'],
      resources: ['etcdclusters/status'],
      verbs: ['get', 'update', 'patch'],
    });
    expect(role.rules).toContainEqual({
      apiGroups: [''],
      resources: ['secrets'],
      verbs: ['get'],
      resourceNames: ['sink-token'],
    });
    const binding = JSON.parse(
      await env.ok(['get', 'clusterrolebinding', 'seeds-operator-manager-rolebinding', '-o', 'json']),
    );
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'seeds-operator-manager-role',
    });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'seeds-operator-controller-manager', namespace: ns },
    ]);
    const leader = JSON.parse(
      await env.ok(['get', 'role', '-n', ns, 'seeds-operator-leader-election-role', '-o', 'json']),
    );
    expect(leader.rules).toContainEqual({
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['get', 'create', 'update'],
    });
    await env.ok(['get', 'serviceaccount', '-n', ns, 'seeds-operator-controller-manager']);

    const dep = JSON.parse(
      await env.ok(['get', 'deployment', '-n', ns, 'seeds-operator-controller-manager', '-o', 'json']),
    );
    const pod = dep.spec.template.spec;
    expect(pod.serviceAccountName).toBe('seeds-operator-controller-manager');
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    const c = pod.containers[0];
    expect(c.image).toBe('registry.example.com/seeds-operator:v0.3.1');
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 8081 });
    expect(c.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 8081 });
    expect(c.ports.map((p: Obj) => [p.name, p.containerPort])).toEqual([
      ['metrics', 8080],
      ['health', 8081],
    ]);
    expect(c.resources.requests).toEqual({ cpu: '10m', memory: '128Mi' });

    const svc = JSON.parse(
      await env.ok([
        'get',
        'service',
        '-n',
        ns,
        'seeds-operator-controller-manager-metrics-service',
        '-o',
        'json',
      ]),
    );
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
    expect(svc.spec.ports[0]).toMatchObject({ name: 'metrics', port: 8080, targetPort: 8080 });

    // dist/install.yaml is the same installation: applying it changes nothing.
    const again = await env.ok(['apply', '-f', join(dir, 'dist/install.yaml')]);
    const verdicts = new Set(
      again
        .trim()
        .split('\n')
        .map((l) => l.split(' ').pop()),
    );
    expect([...verdicts]).toEqual(['unchanged']);
  });

  it('accepts the samples as objects of the installed kinds', async () => {
    const created = await eventually(
      async () => {
        const r = await env.run(['apply', '-k', join(dir, 'config/samples')]);
        return r.code === 0 ? r.stdout : undefined;
      },
      20_000,
      'the samples to apply',
    );
    expect(created.trim().split('\n').sort()).toEqual([
      'etcdcluster.etcd.database.coreos.com/example-etcd created',
      'foo.samplecontroller.k8s.io/example-foo created',
      'foobar.example.com/example-foobar created',
      'genericdaemon.mydomain.com/example-daemon created',
      'sink.kitchen.example.com/example-sink created',
    ]);
    // Defaults from the declarations were applied by the server.
    const etcd = JSON.parse(await env.ok(['get', 'etcd', 'example-etcd', '-o', 'json']));
    expect(etcd.spec).toEqual({ size: 3, version: '3.5.0' });
    const table = await env.ok(['get', 'sinks']);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+READY\s+REPLICAS\s+AGE$/);
    expect(table).toMatch(/example-sink\s+2\s+/);
  });
});

describe('a namespaced manager', () => {
  it('gets a Role and RoleBinding in each namespace it watches', async () => {
    const scoped: OperatorProject = {
      name: 'scoped',
      resources: [Foo],
      controllers: [{ for: Foo, owns: [Deployment], watches: [Secret] }],
      namespaces: ['team-a', 'team-b'],
    };
    const root = join(dir, 'scoped');
    await writeGeneratedFiles(root, generateManifests(scoped));
    await env.ok(['create', 'namespace', 'team-a']);
    await env.ok(['create', 'namespace', 'team-b']);
    const rendered = docs(await env.ok(['kustomize', join(root, 'config/default')]));
    expect(rendered).toEqual(JSON.parse(JSON.stringify(installManifests(scoped))));
    await env.ok(['apply', '-k', join(root, 'config/default')]);
    for (const ns of ['team-a', 'team-b']) {
      const role = JSON.parse(await env.ok(['get', 'role', '-n', ns, 'scoped-manager-role', '-o', 'json']));
      expect(role.rules).toEqual(derivePolicyRules(scoped).namespaced);
      const rb = JSON.parse(
        await env.ok(['get', 'rolebinding', '-n', ns, 'scoped-manager-rolebinding', '-o', 'json']),
      );
      expect(rb.roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'scoped-manager-role',
      });
      expect(rb.subjects).toEqual([
        { kind: 'ServiceAccount', name: 'scoped-controller-manager', namespace: 'scoped-system' },
      ]);
    }
    const r = await env.run(['get', 'clusterrole', 'scoped-manager-role']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('clusterroles.rbac.authorization.k8s.io "scoped-manager-role" not found');
  });
});
