/**
 * RBAC objects through real kubectl 1.32: the bootstrap policy as `get` and `describe` show it,
 * `auth reconcile -f` (create, no-op, union, `--remove-extra-permissions`/`--remove-extra-subjects`,
 * the namespace it makes), and the typed `create role/rolebinding/clusterrole/clusterrolebinding`
 * generators with their flags.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifest, parseTable } from '../e2e/support.js';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(() => env.stop());

const json = async (args: string[]) => JSON.parse(await env.ok([...args, '-o', 'json']));

describe('the bootstrap policy through kubectl', () => {
  it('lists the bootstrap ClusterRoles and their bindings', async () => {
    const roles = parseTable(await env.ok(['get', 'clusterroles']));
    expect(roles.columns).toEqual(['NAME', 'CREATED AT']);
    const names = roles.rows.map((r) => r.NAME);
    for (const n of [
      'admin',
      'cluster-admin',
      'edit',
      'view',
      'system:basic-user',
      'system:discovery',
      'system:public-info-viewer',
      'system:service-account-issuer-discovery',
      'system:node',
      'system:kube-scheduler',
      'system:kube-controller-manager',
      'system:auth-delegator',
      'system:heapster',
      'system:controller:clusterrole-aggregation-controller',
      'system:controller:namespace-controller',
    ])
      expect(names).toContain(n);
    const bindings = parseTable(await env.ok(['get', 'clusterrolebindings', '-o', 'wide']));
    const admin = bindings.rows.find((r) => r.NAME === 'cluster-admin');
    expect([admin?.ROLE, admin?.GROUPS]).toEqual(['ClusterRole/cluster-admin', 'system:masters']);
    const viewer = bindings.rows.find((r) => r.NAME === 'system:public-info-viewer');
    expect(viewer?.GROUPS).toBe('system:authenticated, system:unauthenticated');
    const locks = parseTable(await env.ok(['get', 'rolebindings', '-n', 'kube-system', '-o', 'wide']));
    expect(locks.rows.find((r) => r.NAME === 'system::leader-locking-kube-scheduler')?.USERS).toBe(
      'system:kube-scheduler',
    );
  });

  it('describes admin with the rules the aggregation controller gave it', async () => {
    const out = await eventually(async () => {
      const o = await env.ok(['describe', 'clusterrole', 'admin']);
      return o.includes('rolebindings.rbac.authorization.k8s.io') && o.includes('pods/exec') && o;
    });
    expect(out).toMatch(/^Name:\s+admin$/m);
    expect(out).toMatch(/^Labels:\s+kubernetes\.io\/bootstrapping=rbac-defaults$/m);
    expect(out).toMatch(/^Annotations:\s+rbac\.authorization\.kubernetes\.io\/autoupdate: true$/m);
    expect(out).toMatch(
      /^ {2}rolebindings\.rbac\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create delete deletecollection get list patch update watch\]$/m,
    );
    expect(out).toMatch(
      /^ {2}localsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m,
    );
    expect(out).toMatch(
      /^ {2}serviceaccounts\s+\[\]\s+\[\]\s+\[impersonate create delete deletecollection patch update get list watch\]$/m,
    );
  });
});

describe('kubectl auth reconcile -f', () => {
  const role = (verbs: string[]) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'widget-reader' },
    rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs }],
  });
  const binding = (users: string[]) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'widget-readers', namespace: 'widgets' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widget-reader' },
    subjects: users.map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
  });

  it("creates what is missing, the binding's namespace too", async () => {
    const r = await env.run(['auth', 'reconcile', '-f', '-'], {
      input: manifest(role(['get', 'list']), binding(['alice'])),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'clusterrole.rbac.authorization.k8s.io/widget-reader reconciled\nrolebinding.rbac.authorization.k8s.io/widget-readers reconciled\n',
    );
    expect(r.stderr).toContain('reconciliation required create');
    expect(r.stderr).toContain('missing rules added:');
    expect((await json(['get', 'namespace', 'widgets'])).status.phase).toBe('Active');
    expect((await json(['get', 'clusterrole', 'widget-reader'])).rules).toEqual([
      { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list'] },
    ]);
    expect((await json(['get', 'rolebinding', 'widget-readers', '-n', 'widgets'])).subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
    ]);
  });

  it('changes nothing the second time', async () => {
    const before = (await json(['get', 'clusterrole', 'widget-reader'])).metadata.resourceVersion;
    const r = await env.run(['auth', 'reconcile', '-f', '-'], {
      input: manifest(role(['get', 'list']), binding(['alice'])),
    });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect((await json(['get', 'clusterrole', 'widget-reader'])).metadata.resourceVersion).toBe(before);
  });

  it('adds missing rules and subjects, keeping the extra ones, unless told to remove them', async () => {
    let r = await env.run(['auth', 'reconcile', '-f', '-'], {
      input: manifest(role(['get', 'watch']), binding(['bob'])),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('reconciliation required update');
    expect((await json(['get', 'clusterrole', 'widget-reader'])).rules).toEqual([
      { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list'] },
      { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['watch'] },
    ]);
    expect(
      (await json(['get', 'rolebinding', 'widget-readers', '-n', 'widgets'])).subjects.map(
        (s: { name: string }) => s.name,
      ),
    ).toEqual(['alice', 'bob']);

    r = await env.run(
      ['auth', 'reconcile', '--remove-extra-permissions', '--remove-extra-subjects', '-f', '-'],
      {
        input: manifest(role(['get']), binding(['bob'])),
      },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('extra rules removed:');
    expect(r.stderr).toContain('extra subjects removed:');
    expect((await json(['get', 'clusterrole', 'widget-reader'])).rules).toEqual([
      { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] },
    ]);
    expect((await json(['get', 'rolebinding', 'widget-readers', '-n', 'widgets'])).subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' },
    ]);
  });

  it('finds the bootstrap roles already reconciled', async () => {
    const basic = await json(['get', 'clusterrole', 'system:basic-user']);
    const r = await env.run(['auth', 'reconcile', '-f', '-'], {
      input: manifest({
        apiVersion: basic.apiVersion,
        kind: basic.kind,
        metadata: { name: basic.metadata.name },
        rules: basic.rules,
      }),
    });
    expect([r.code, r.stdout, r.stderr]).toEqual([
      0,
      'clusterrole.rbac.authorization.k8s.io/system:basic-user reconciled\n',
      '',
    ]);
  });
});

describe('kubectl create role, rolebinding, clusterrole, clusterrolebinding', () => {
  it('creates a Role from --verb, --resource and --resource-name', async () => {
    await env.ok([
      'create',
      'role',
      'pod-reader',
      '-n',
      'default',
      '--verb=get,list',
      '--verb=watch',
      '--resource=pods,deployments.apps',
      '--resource-name=web',
    ]);
    expect((await json(['get', 'role', 'pod-reader', '-n', 'default'])).rules).toEqual([
      { apiGroups: [''], resourceNames: ['web'], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['apps'],
        resourceNames: ['web'],
        resources: ['deployments'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
  });

  it('refuses a resource the server does not serve', async () => {
    const r = await env.run(['create', 'role', 'nope', '--verb=get', '--resource=gizmos']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the server doesn't have a resource type "gizmos"`);
  });

  it('creates a ClusterRole for non-resource URLs', async () => {
    await env.ok([
      'create',
      'clusterrole',
      'log-reader',
      '--verb=get',
      '--non-resource-url=/logs/*',
      '--non-resource-url=/healthz',
    ]);
    expect((await json(['get', 'clusterrole', 'log-reader'])).rules).toEqual([
      { nonResourceURLs: ['/logs/*', '/healthz'], verbs: ['get'] },
    ]);
  });

  it('creates an aggregated ClusterRole that the controller fills', async () => {
    await env.ok([
      'create',
      'clusterrole',
      'monitoring',
      '--aggregation-rule=example.com/aggregate-to-monitoring=true',
    ]);
    expect((await json(['get', 'clusterrole', 'monitoring'])).aggregationRule).toEqual({
      clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate-to-monitoring': 'true' } }],
    });
    await env.ok([
      'create',
      'clusterrole',
      'monitoring-endpoints',
      '--verb=get,list',
      '--resource=endpoints',
    ]);
    await env.ok([
      'label',
      'clusterrole',
      'monitoring-endpoints',
      'example.com/aggregate-to-monitoring=true',
    ]);
    const rules = await eventually(async () => (await json(['get', 'clusterrole', 'monitoring'])).rules);
    expect(rules).toEqual([{ apiGroups: [''], resources: ['endpoints'], verbs: ['get', 'list'] }]);
  });

  it('binds a role to users, groups and service accounts', async () => {
    await env.ok([
      'create',
      'rolebinding',
      'readers',
      '-n',
      'default',
      '--clusterrole=view',
      '--user=alice',
      '--group=devs',
      '--serviceaccount=default:builder',
    ]);
    const rb = await json(['get', 'rolebinding', 'readers', '-n', 'default']);
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' });
    expect(rb.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'devs' },
      { kind: 'ServiceAccount', name: 'builder', namespace: 'default' },
    ]);
    await env.ok(['create', 'rolebinding', 'own', '-n', 'default', '--role=pod-reader', '--user=carol']);
    expect((await json(['get', 'rolebinding', 'own', '-n', 'default'])).roleRef.kind).toBe('Role');

    await env.ok([
      'create',
      'clusterrolebinding',
      'ops-admin',
      '--clusterrole=cluster-admin',
      '--user=bob',
      '--group=ops',
      '--serviceaccount=kube-system:robot',
    ]);
    const table = parseTable(await env.ok(['get', 'clusterrolebinding', 'ops-admin', '-o', 'wide']));
    expect(table.rows[0]).toMatchObject({
      ROLE: 'ClusterRole/cluster-admin',
      USERS: 'bob',
      GROUPS: 'ops',
      SERVICEACCOUNTS: 'kube-system/robot',
    });
  });
});
