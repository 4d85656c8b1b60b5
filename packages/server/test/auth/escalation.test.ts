/**
 * RBAC's escalation prevention with kubectl 1.32: a user who may write Roles and bindings can
 * grant only what it holds itself, unless it may `escalate` the role or `bind` the role it binds;
 * the refusals carry kube's messages word for word.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { ensureBasicPolicy, userKubeconfig } from './support.js';

let env: KubectlEnv;
let alice: string;
const rbacGroup = 'rbac.authorization.k8s.io';
const asAlice = (args: string[], input?: unknown) =>
  env.run(['--kubeconfig', alice, ...args], input === undefined ? {} : { input: JSON.stringify(input) });
const create = (o: object) => env.ok(['create', '-f', '-'], { input: JSON.stringify(o) });
const role = (name: string, rules: object[], kind = 'Role') => ({
  apiVersion: `${rbacGroup}/v1`,
  kind,
  metadata: { name, ...(kind === 'Role' && { namespace: 'team' }) },
  rules,
});
const binding = (name: string, roleRef: { kind: string; name: string }, subject: string) => ({
  apiVersion: `${rbacGroup}/v1`,
  kind: 'RoleBinding',
  metadata: { name, namespace: 'team' },
  roleRef: { apiGroup: rbacGroup, ...roleRef },
  subjects: [{ apiGroup: rbacGroup, kind: 'User', name: subject }],
});
const GROUPS = '(groups=["system:authenticated"])';

beforeAll(async () => {
  env = await startKubectlEnv();
  await ensureBasicPolicy(env);
  await env.ok(['create', 'namespace', 'team']);
  alice = await userKubeconfig(env, 'alice');
  // alice manages Roles and RoleBindings in `team`, and may read pods there.
  await create(
    role('rbac-manager', [
      { apiGroups: [rbacGroup], resources: ['roles', 'rolebindings'], verbs: ['create', 'get', 'update'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    ]),
  );
  await create(binding('alice-manages', { kind: 'Role', name: 'rbac-manager' }, 'alice'));
  await create(
    role(
      'pod-admin',
      [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'delete'] }],
      'ClusterRole',
    ),
  );
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe('Roles', () => {
  it('may carry the rules their author holds', async () => {
    const r = await asAlice(
      ['create', '-f', '-'],
      role('readers', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]),
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('role.rbac.authorization.k8s.io/readers created\n');
  });

  it('with a rule the author does not hold are refused with the missing rules', async () => {
    const r = await asAlice(
      ['create', '-f', '-'],
      role('deleters', [
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete', 'patch'] },
        { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['s'] },
      ]),
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "STDIN": roles.rbac.authorization.k8s.io "deleters" is forbidden: user "alice" ${GROUPS} is attempting to grant RBAC permissions not currently held:\n` +
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "patch"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], ResourceNames:["s"], Verbs:["get"]}',
    );
  });

  it('may carry any rule once the author may escalate roles', async () => {
    await create(role('escalator', [{ apiGroups: [rbacGroup], resources: ['roles'], verbs: ['escalate'] }]));
    await create(binding('alice-escalates', { kind: 'Role', name: 'escalator' }, 'alice'));
    const r = await asAlice(
      ['create', '-f', '-'],
      role('deleters', [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'] }]),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('ClusterRoles', () => {
  it('with an aggregation rule need every right (it can gather anything)', async () => {
    await create(
      role(
        'clusterrole-writer',
        [{ apiGroups: [rbacGroup], resources: ['clusterroles'], verbs: ['create'] }],
        'ClusterRole',
      ),
    );
    await create({
      apiVersion: `${rbacGroup}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'alice-writes-clusterroles' },
      roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: 'clusterrole-writer' },
      subjects: [{ apiGroup: rbacGroup, kind: 'User', name: 'alice' }],
    });
    const r = await asAlice(['create', '-f', '-'], {
      apiVersion: `${rbacGroup}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'gatherer' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { gather: 'me' } }] },
    });
    expect(r.stderr.trim()).toBe(
      'Error from server (Forbidden): error when creating "STDIN": clusterroles.rbac.authorization.k8s.io "gatherer" is forbidden: must have cluster-admin privileges to use the aggregationRule',
    );
  });
});

describe('RoleBindings', () => {
  it('to a role whose rules the author lacks are refused; to a missing role, with its not-found error', async () => {
    const r = await asAlice(
      ['create', '-f', '-'],
      binding('bob-admin', { kind: 'ClusterRole', name: 'pod-admin' }, 'bob'),
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "STDIN": rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "alice" ${GROUPS} is attempting to grant RBAC permissions not currently held:\n` +
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    );
    const missing = await asAlice(
      ['create', '-f', '-'],
      binding('bob-none', { kind: 'Role', name: 'nope' }, 'bob'),
    );
    expect(missing.stderr.trim()).toBe(
      // GetRoleReferenceRules' NotFound goes back as it is (checked against kube-apiserver).
      'Error from server (NotFound): error when creating "STDIN": roles.rbac.authorization.k8s.io "nope" not found',
    );
  });

  it('to a role whose rules the author holds are allowed', async () => {
    const r = await asAlice([
      'create',
      'rolebinding',
      'bob-reads',
      '--role=rbac-manager',
      '--user=bob',
      '-n',
      'team',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('to any role the author may bind are allowed', async () => {
    await create(
      role('binder', [
        {
          apiGroups: [rbacGroup],
          resources: ['clusterroles'],
          verbs: ['bind'],
          resourceNames: ['pod-admin'],
        },
      ]),
    );
    await create(binding('alice-binds', { kind: 'Role', name: 'binder' }, 'alice'));
    const r = await asAlice(
      ['create', '-f', '-'],
      binding('bob-admin', { kind: 'ClusterRole', name: 'pod-admin' }, 'bob'),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // bob now deletes pods in team, as the bound ClusterRole says.
    expect(await env.run(['auth', 'can-i', 'delete', 'pods', '-n', 'team', '--as', 'bob'])).toMatchObject({
      stdout: 'yes\n',
    });
  });
});
