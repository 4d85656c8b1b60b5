import { describe, expect, it } from 'vitest';
import {
  AUTOUPDATE_ANNOTATION,
  BOOTSTRAPPING_LABEL,
  bootstrapPolicy,
  breakdownRule,
  clusterRoleBindings,
  clusterRoles,
  controllerRoleBindings,
  controllerRoles,
  namespaceRoleBindings,
  namespaceRoles,
  uncoveredRules,
} from './index.js';

const names = (objs: { metadata: { name: string } }[]) => objs.map((o) => o.metadata.name);
const byName = <T extends { metadata: { name: string } }>(objs: T[], name: string): T | undefined =>
  objs.find((o) => o.metadata.name === name);

describe('the 1.32 bootstrap policy (bootstrappolicy testdata)', () => {
  it('has as many objects of each kind as the testdata files list', () => {
    // cluster-roles.yaml, controller-roles.yaml, cluster-role-bindings.yaml,
    // controller-role-bindings.yaml, namespace-roles.yaml, namespace-role-bindings.yaml
    expect([
      clusterRoles().length,
      controllerRoles().length,
      clusterRoleBindings().length,
      controllerRoleBindings().length,
      namespaceRoles().length,
      namespaceRoleBindings().length,
    ]).toEqual([31, 33, 12, 33, 7, 7]);
  });

  it('lists the roles in the order of the testdata (by name), each name once', () => {
    for (const list of [clusterRoles(), controllerRoles(), clusterRoleBindings(), controllerRoleBindings()]) {
      const n = names(list);
      expect(n).toEqual([...n].sort());
      expect(new Set(n).size).toBe(n.length);
    }
  });

  it('labels and annotates every object as addDefaultMetadata does', () => {
    const p = bootstrapPolicy();
    for (const o of [...p.clusterRoles, ...p.clusterRoleBindings, ...p.roles, ...p.roleBindings]) {
      expect(o.metadata.labels[BOOTSTRAPPING_LABEL]).toBe('rbac-defaults');
      expect(o.metadata.annotations).toEqual({ [AUTOUPDATE_ANNOTATION]: 'true' });
    }
  });

  it('binds only roles of the policy', () => {
    const p = bootstrapPolicy();
    const clusterRoleNames = new Set(names(p.clusterRoles));
    for (const b of p.clusterRoleBindings) expect(clusterRoleNames.has(b.roleRef.name)).toBe(true);
    const roleKeys = new Set(p.roles.map((r) => `${r.metadata.namespace}/${r.metadata.name}`));
    for (const b of p.roleBindings)
      expect(roleKeys.has(`${b.metadata.namespace}/${b.roleRef.name}`)).toBe(true);
  });

  it('has cluster-admin, bound to system:masters', () => {
    expect(byName(clusterRoles(), 'cluster-admin')).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: 'cluster-admin',
        labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
        annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
      },
      rules: [
        { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
        { verbs: ['*'], nonResourceURLs: ['*'] },
      ],
    });
    expect(byName(clusterRoleBindings(), 'cluster-admin')).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' }],
    });
  });

  it('lets everyone read public info, and the authenticated discover the API and review themselves', () => {
    expect(byName(clusterRoles(), 'system:public-info-viewer')?.rules).toEqual([
      { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
    ]);
    expect(byName(clusterRoleBindings(), 'system:public-info-viewer')?.subjects).toEqual([
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:unauthenticated' },
    ]);
    expect(byName(clusterRoles(), 'system:discovery')?.rules?.[0]?.nonResourceURLs).toEqual([
      '/api',
      '/api/*',
      '/apis',
      '/apis/*',
      '/healthz',
      '/livez',
      '/openapi',
      '/openapi/*',
      '/readyz',
      '/version',
      '/version/',
    ]);
    expect(byName(clusterRoles(), 'system:basic-user')?.rules).toEqual([
      {
        verbs: ['create'],
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ]);
    for (const n of ['system:basic-user', 'system:discovery'])
      expect(byName(clusterRoleBindings(), n)?.subjects).toEqual([
        { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' },
      ]);
  });

  it('aggregates admin, edit and view, which hold no rules of their own', () => {
    const admin = byName(clusterRoles(), 'admin');
    expect(admin?.rules).toBeNull();
    expect(admin?.aggregationRule).toEqual({
      clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }],
    });
    expect(byName(clusterRoles(), 'edit')?.metadata.labels).toEqual({
      'kubernetes.io/bootstrapping': 'rbac-defaults',
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
    });
    expect(byName(clusterRoles(), 'view')?.metadata.labels).toEqual({
      'kubernetes.io/bootstrapping': 'rbac-defaults',
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
    });
  });

  it('binds each controller role to its ServiceAccount in kube-system', () => {
    const role = byName(controllerRoles(), 'system:controller:clusterrole-aggregation-controller');
    expect(role?.rules).toEqual([
      {
        verbs: ['escalate', 'get', 'list', 'patch', 'update', 'watch'],
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterroles'],
      },
    ]);
    for (const b of controllerRoleBindings()) {
      expect(b.roleRef.name).toBe(b.metadata.name);
      expect(b.subjects).toEqual([
        {
          kind: 'ServiceAccount',
          name: b.metadata.name.replace('system:controller:', ''),
          namespace: 'kube-system',
        },
      ]);
    }
  });

  it('leaves out the controllers whose feature gates are off in 1.32', () => {
    const n = names(controllerRoles());
    for (const gated of [
      'resource-claim-controller',
      'service-cidrs-controller',
      'selinux-warning-controller',
    ])
      expect(n).not.toContain(`system:controller:${gated}`);
  });

  it('has the namespaced roles of kube-system and kube-public', () => {
    expect(namespaceRoles().map((r) => `${r.metadata.namespace}/${r.metadata.name}`)).toEqual([
      'kube-public/system:controller:bootstrap-signer',
      'kube-system/extension-apiserver-authentication-reader',
      'kube-system/system::leader-locking-kube-controller-manager',
      'kube-system/system::leader-locking-kube-scheduler',
      'kube-system/system:controller:bootstrap-signer',
      'kube-system/system:controller:cloud-provider',
      'kube-system/system:controller:token-cleaner',
    ]);
  });
});

describe('rule coverage (validation.Covers)', () => {
  it('breaks a rule down into one per group, resource, verb and name, then per URL and verb', () => {
    expect(
      breakdownRule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }),
    ).toEqual([
      { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] },
      { verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] },
    ]);
    expect(breakdownRule({ verbs: ['get'], nonResourceURLs: ['/a', '/b'] })).toEqual([
      { verbs: ['get'], nonResourceURLs: ['/a'] },
      { verbs: ['get'], nonResourceURLs: ['/b'] },
    ]);
  });

  it('answers what the owner rules do not grant', () => {
    const owner = [
      { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] },
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get'], nonResourceURLs: ['/apis/*'] },
    ];
    expect(
      uncoveredRules(owner, [
        { verbs: ['get', 'watch'], apiGroups: [''], resources: ['pods'] },
        { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] },
        { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['one'] },
        { verbs: ['get'], nonResourceURLs: ['/apis/apps', '/api'] },
      ]),
    ).toEqual([
      { verbs: ['watch'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get'], nonResourceURLs: ['/api'] },
    ]);
    // A rule limited to names does not cover the whole resource.
    expect(
      uncoveredRules(
        [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['one'] }],
        [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      ),
    ).toHaveLength(1);
  });
});
