import type { Deployment } from 'kubernetes-types/apps/v1.js';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigMap, Deployment as DeploymentKind } from '../client/builtin-kinds.js';
import { defineResource, Type } from '../schema/define/index.js';
import { generateManifests, installManifests, type OperatorProject, renderInstallYaml } from './project.js';

const Foo = defineResource({
  group: 'samplecontroller.example.com',
  version: 'v1alpha1',
  kind: 'Foo',
  spec: Type.Object({ deploymentName: Type.String(), replicas: Type.Optional(Type.Integer()) }),
  status: Type.Object({ availableReplicas: Type.Optional(Type.Integer()) }),
});
const Bar = defineResource({ group: 'example.com', version: 'v1', kind: 'Bar', spec: Type.Object({}) });

const project: OperatorProject = {
  name: 'foo-operator',
  image: 'ghcr.io/acme/foo-operator:v0.1.0',
  resources: [Foo, Bar],
  controllers: [{ for: Foo, owns: [DeploymentKind], watches: [ConfigMap] }],
  samples: [Foo.build({ metadata: { name: 'example-foo' }, spec: { deploymentName: 'web', replicas: 2 } })],
};

function files(p: OperatorProject = project): Map<string, string> {
  return new Map(generateManifests(p).map((f) => [f.path, f.content]));
}

function docs(text: string | undefined): Array<Record<string, any>> {
  return parseAllDocuments(text ?? '').map((d) => d.toJS() as Record<string, any>);
}

describe('kustomize layout', () => {
  it("lays out kubebuilder's config folders, dist/install.yaml and a Dockerfile", () => {
    expect([...files().keys()].sort()).toEqual([
      '.dockerignore',
      'Dockerfile',
      'config/crd/bases/example.com_bars.yaml',
      'config/crd/bases/samplecontroller.example.com_foos.yaml',
      'config/crd/kustomization.yaml',
      'config/default/kustomization.yaml',
      'config/default/metrics_service.yaml',
      'config/manager/kustomization.yaml',
      'config/manager/manager.yaml',
      'config/rbac/bar_editor_role.yaml',
      'config/rbac/bar_viewer_role.yaml',
      'config/rbac/foo_editor_role.yaml',
      'config/rbac/foo_viewer_role.yaml',
      'config/rbac/kustomization.yaml',
      'config/rbac/leader_election_role.yaml',
      'config/rbac/leader_election_role_binding.yaml',
      'config/rbac/role.yaml',
      'config/rbac/role_binding.yaml',
      'config/rbac/service_account.yaml',
      'config/samples/example_v1_bar.yaml',
      'config/samples/kustomization.yaml',
      'config/samples/samplecontroller_v1alpha1_foo.yaml',
      'dist/install.yaml',
    ]);
  });

  it('wires the kustomizations: resources, image, name prefix and namespace', () => {
    const f = files();
    expect(parse(f.get('config/crd/kustomization.yaml')!)).toEqual({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['bases/samplecontroller.example.com_foos.yaml', 'bases/example.com_bars.yaml'],
    });
    expect(parse(f.get('config/rbac/kustomization.yaml')!).resources).toEqual([
      'service_account.yaml',
      'role.yaml',
      'role_binding.yaml',
      'leader_election_role.yaml',
      'leader_election_role_binding.yaml',
      'foo_editor_role.yaml',
      'foo_viewer_role.yaml',
      'bar_editor_role.yaml',
      'bar_viewer_role.yaml',
    ]);
    expect(parse(f.get('config/manager/kustomization.yaml')!)).toMatchObject({
      resources: ['manager.yaml'],
      images: [{ name: 'controller', newName: 'ghcr.io/acme/foo-operator', newTag: 'v0.1.0' }],
    });
    const def = parse(f.get('config/default/kustomization.yaml')!);
    expect(def.namePrefix).toBe('foo-operator-');
    expect(def.resources).toEqual(['../crd', '../rbac', '../manager', 'metrics_service.yaml']);
    expect(parse(def.transformers[0])).toEqual({
      apiVersion: 'builtin',
      kind: 'NamespaceTransformer',
      metadata: { name: 'namespace', namespace: 'foo-operator-system' },
      unsetOnly: true,
      setRoleBindingSubjects: 'allServiceAccounts',
    });
    const [crd] = docs(f.get('config/crd/bases/samplecontroller.example.com_foos.yaml'));
    expect(crd).toEqual(Foo.crd());
    const [sample] = docs(f.get('config/samples/samplecontroller_v1alpha1_foo.yaml'));
    expect(sample).toMatchObject({ kind: 'Foo', metadata: { name: 'example-foo' }, spec: { replicas: 2 } });
    expect(f.get('config/samples/example_v1_bar.yaml')).toMatch(/^# TODO: fill in the spec/);
    expect(docs(f.get('config/samples/example_v1_bar.yaml'))[0]).toMatchObject({
      apiVersion: 'example.com/v1',
      kind: 'Bar',
      metadata: { name: 'bar-sample' },
    });
  });

  it('runs the manager restricted: non-root, read-only root, no escalation, RuntimeDefault seccomp', () => {
    const [ns, dep] = docs(files().get('config/manager/manager.yaml')) as [Record<string, any>, Deployment];
    expect(ns).toMatchObject({ kind: 'Namespace', metadata: { name: 'foo-operator-system' } });
    expect(dep.metadata?.namespace).toBeUndefined();
    const pod = dep.spec!.template.spec!;
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.serviceAccountName).toBe('controller-manager');
    const c = pod.containers[0]!;
    expect(c.image).toBe('controller:latest');
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.args).toEqual([
      '--leader-elect',
      '--health-probe-bind-address=:8081',
      '--metrics-bind-address=:8080',
    ]);
    expect(c.ports).toEqual([
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 8081 });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 8081 });
    expect(c.resources?.requests).toEqual({ cpu: '10m', memory: '128Mi' });
    expect(c.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(dep.spec!.selector.matchLabels).toEqual(dep.spec!.template.metadata!.labels);
    const [svc] = docs(files().get('config/default/metrics_service.yaml'));
    expect(svc?.spec).toEqual({
      ports: [{ name: 'metrics', port: 8080, protocol: 'TCP', targetPort: 8080 }],
      selector: dep.spec!.selector.matchLabels,
    });
  });

  it('follows the manager options: ports, args, replicas, no leader election', () => {
    const objects = installManifests({
      ...project,
      leaderElection: false,
      manager: {
        metricsPort: 9090,
        healthProbePort: 9091,
        replicas: 2,
        env: [{ name: 'LOG', value: 'debug' }],
      },
    });
    const dep = objects.find((o) => o.kind === 'Deployment') as unknown as Deployment;
    const c = dep.spec!.template.spec!.containers[0]!;
    expect(dep.spec!.replicas).toBe(2);
    expect(c.args).toEqual(['--health-probe-bind-address=:9091', '--metrics-bind-address=:9090']);
    expect(c.env).toEqual([
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'LOG', value: 'debug' },
    ]);
    expect(c.readinessProbe?.httpGet?.port).toBe(9091);
    expect(objects.some((o) => o.metadata.name.includes('leader-election'))).toBe(false);
  });
});

describe('dist/install.yaml', () => {
  it('holds every object, prefixed and in the namespace, in the order kustomize prints', () => {
    const objects = installManifests(project);
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      'Namespace /foo-operator-system',
      'CustomResourceDefinition /bars.example.com',
      'CustomResourceDefinition /foos.samplecontroller.example.com',
      'ServiceAccount foo-operator-system/foo-operator-controller-manager',
      'Role foo-operator-system/foo-operator-leader-election-role',
      'ClusterRole /foo-operator-bar-editor-role',
      'ClusterRole /foo-operator-bar-viewer-role',
      'ClusterRole /foo-operator-foo-editor-role',
      'ClusterRole /foo-operator-foo-viewer-role',
      'ClusterRole /foo-operator-manager-role',
      'RoleBinding foo-operator-system/foo-operator-leader-election-rolebinding',
      'ClusterRoleBinding /foo-operator-manager-rolebinding',
      'Service foo-operator-system/foo-operator-controller-manager-metrics-service',
      'Deployment foo-operator-system/foo-operator-controller-manager',
    ]);
    const binding = objects.find((o) => o.kind === 'ClusterRoleBinding');
    expect(binding).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'foo-operator-manager-role' },
      subjects: [
        { kind: 'ServiceAccount', name: 'foo-operator-controller-manager', namespace: 'foo-operator-system' },
      ],
    });
    const dep = objects.find((o) => o.kind === 'Deployment') as unknown as Deployment;
    expect(dep.spec!.template.spec!.containers[0]!.image).toBe('ghcr.io/acme/foo-operator:v0.1.0');
    expect(dep.spec!.template.spec!.serviceAccountName).toBe('foo-operator-controller-manager');
    const text = renderInstallYaml(project);
    expect(docs(text)).toEqual(JSON.parse(JSON.stringify(objects)));
  });

  it('refuses a project name that cannot prefix object names', () => {
    expect(() => generateManifests({ ...project, name: 'Foo_Operator' })).toThrow(
      /must be a lowercase RFC 1123 label/,
    );
  });
});

describe('Dockerfile', () => {
  it('builds with npm and runs as the unprivileged user on a distroless Node image', () => {
    const text = files({ ...project, docker: { nodeVersion: 22, entry: 'dist/bin/manager.js' } }).get(
      'Dockerfile',
    )!;
    expect(text).toContain('FROM node:22-bookworm-slim AS build');
    expect(text).toContain('RUN npm ci');
    expect(text).toContain('RUN npm run build && npm prune --omit=dev');
    expect(text).toContain('FROM gcr.io/distroless/nodejs22-debian12:nonroot');
    expect(text).toContain('USER 65532:65532');
    expect(text).toContain('ENV MALLOC_ARENA_MAX=2');
    expect(text).toContain('ENTRYPOINT ["/nodejs/bin/node", "dist/bin/manager.js"]');
  });
});
