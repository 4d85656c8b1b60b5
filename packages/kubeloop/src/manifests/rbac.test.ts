import { describe, expect, it } from 'vitest';
import { ConfigMap, Deployment, Namespace, Secret, Service } from '../client/builtin-kinds.js';
import { defineResource, Type } from '../schema/define/index.js';
import { derivePolicyRules, rbacManifests } from './rbac.js';

const Foo = defineResource({
  group: 'samplecontroller.example.com',
  version: 'v1alpha1',
  kind: 'Foo',
  spec: Type.Object({ replicas: Type.Integer() }),
});
const Cluster = defineResource({
  group: 'infra.example.com',
  version: 'v1',
  kind: 'Cluster',
  scope: 'Cluster',
  spec: Type.Object({}),
});

const rule = (apiGroup: string, resources: string[], verbs: string[]) => ({
  apiGroups: [apiGroup],
  resources,
  verbs,
});

describe('RBAC derived from controllers', () => {
  it('grants For, Owns, Watches, events and extra rules in one ClusterRole', () => {
    const r = derivePolicyRules({
      controllers: [
        {
          for: Foo,
          owns: [Deployment, Service],
          watches: [ConfigMap],
          extraRules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['token'] }],
        },
      ],
    });
    expect(r.cluster).toEqual([
      rule('', ['configmaps'], ['get', 'list', 'watch']),
      rule('', ['services'], ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
      rule('apps', ['deployments'], ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
      rule('events.k8s.io', ['events'], ['create', 'patch']),
      rule('samplecontroller.example.com', ['foos'], ['get', 'list', 'watch', 'update', 'patch']),
      rule('samplecontroller.example.com', ['foos/finalizers'], ['update']),
      rule('samplecontroller.example.com', ['foos/status'], ['get', 'update', 'patch']),
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['token'] },
    ]);
    expect(r.namespaced).toEqual([]);
    expect(r.leaderElection).toEqual([rule('coordination.k8s.io', ['leases'], ['get', 'create', 'update'])]);
  });

  it('merges what several controllers need on the same kinds', () => {
    const r = derivePolicyRules({
      controllers: [
        { for: Foo, owns: [Deployment] },
        { for: Cluster, watches: [Deployment, Foo] },
      ],
      events: false,
      leaderElection: false,
      extraRules: [{ apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'list'] }],
    });
    expect(r.cluster).toEqual([
      rule('', ['configmaps', 'secrets'], ['get', 'list']),
      rule('apps', ['deployments'], ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
      rule('infra.example.com', ['clusters'], ['get', 'list', 'watch', 'update', 'patch']),
      rule('infra.example.com', ['clusters/finalizers'], ['update']),
      rule('infra.example.com', ['clusters/status'], ['get', 'update', 'patch']),
      rule('samplecontroller.example.com', ['foos'], ['get', 'list', 'watch', 'update', 'patch']),
      rule('samplecontroller.example.com', ['foos/finalizers'], ['update']),
      rule('samplecontroller.example.com', ['foos/status'], ['get', 'update', 'patch']),
    ]);
    expect(r.leaderElection).toEqual([]);
  });

  it('grants a namespaced manager Roles per namespace, keeping cluster-scoped kinds in a ClusterRole', () => {
    const m = {
      controllers: [{ for: Foo, owns: [Deployment], watches: [Namespace, Cluster] }],
      namespaces: ['team-a', 'team-b'],
    };
    const r = derivePolicyRules(m);
    expect(r.cluster).toEqual([
      rule('', ['namespaces'], ['get', 'list', 'watch']),
      rule('infra.example.com', ['clusters'], ['get', 'list', 'watch']),
    ]);
    expect(r.namespaced.map((x) => x.resources)).toEqual([
      ['deployments'],
      ['events'],
      ['foos'],
      ['foos/finalizers'],
      ['foos/status'],
    ]);
    const objects = rbacManifests(m, { namespace: 'foo-system' });
    expect(
      objects.namespacedRoles.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`),
    ).toEqual([
      'Role team-a/manager-role',
      'RoleBinding team-a/manager-rolebinding',
      'Role team-b/manager-role',
      'RoleBinding team-b/manager-rolebinding',
    ]);
    expect(objects.namespacedRoles[1]).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'manager-role' },
      subjects: [{ kind: 'ServiceAccount', name: 'controller-manager', namespace: 'foo-system' }],
    });
    expect(objects.clusterRole?.rules).toEqual(r.cluster);
  });

  it('emits the ServiceAccount, the ClusterRole and the bindings kubebuilder names', () => {
    const o = rbacManifests(
      { controllers: [{ for: Foo, watches: [Secret] }] },
      { namespace: 'ops' },
      { team: 'x' },
    );
    expect(o.serviceAccount).toEqual({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'controller-manager', namespace: 'ops', labels: { team: 'x' } },
    });
    expect(o.clusterRole).toMatchObject({ kind: 'ClusterRole', metadata: { name: 'manager-role' } });
    expect(o.clusterRoleBinding).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'manager-rolebinding', labels: { team: 'x' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'manager-role' },
      subjects: [{ kind: 'ServiceAccount', name: 'controller-manager', namespace: 'ops' }],
    });
    expect(o.leaderElectionRole).toMatchObject({
      kind: 'Role',
      metadata: { name: 'leader-election-role', namespace: 'ops' },
    });
    expect(o.leaderElectionRoleBinding).toMatchObject({
      kind: 'RoleBinding',
      metadata: { name: 'leader-election-rolebinding', namespace: 'ops' },
      roleRef: { kind: 'Role', name: 'leader-election-role' },
    });
    // Kustomize bases leave the namespace to config/default.
    const base = rbacManifests({ controllers: [{ for: Foo }] });
    expect(base.serviceAccount.metadata.namespace).toBeUndefined();
    expect(base.clusterRoleBinding?.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'controller-manager' },
    ]);
  });

  it('refuses descriptors it cannot name in a rule', () => {
    expect(() =>
      derivePolicyRules({ controllers: [{ for: { group: 'example.com', version: 'v1', kind: 'Thing' } }] }),
    ).toThrow('RBAC for Thing (example.com/v1): the descriptor has no plural');
    expect(() =>
      derivePolicyRules({
        controllers: [{ for: { group: 'example.com', version: 'v1', kind: 'Thing', plural: 'things' } }],
        namespaces: ['a'],
      }),
    ).toThrow(/a namespaced manager needs to know whether Thing is namespaced/);
  });
});
