/**
 * RBAC end to end with kubectl 1.32: users authenticated by client certificates and service
 * account tokens get exactly what Roles and bindings grant them, `kubectl auth can-i` and
 * `auth whoami` answer from the authorizer, `--as` is restricted to what the impersonated user
 * may do and needs the `impersonate` verb itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { ensureBasicPolicy, tokenKubeconfig, userKubeconfig } from './support.js';

let env: KubectlEnv;
let alice: string;
const as = (kubeconfig: string, args: string[], input?: string) =>
  env.run(['--kubeconfig', kubeconfig, ...args], input === undefined ? {} : { input });
const apply = (o: object) => env.ok(['create', '-f', '-'], { input: JSON.stringify(o) });

const rbac = 'rbac.authorization.k8s.io/v1';
const role = (ns: string, name: string, rules: object[]) => ({
  apiVersion: rbac,
  kind: 'Role',
  metadata: { name, namespace: ns },
  rules,
});
const binding = (ns: string, name: string, roleRef: { kind: string; name: string }, subjects: object[]) => ({
  apiVersion: rbac,
  kind: 'RoleBinding',
  metadata: { name, namespace: ns },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
  subjects,
});
const user = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name });

beforeAll(async () => {
  env = await startKubectlEnv();
  await ensureBasicPolicy(env);
  await env.ok(['create', 'namespace', 'a']);
  await env.ok(['create', 'namespace', 'b']);
  alice = await userKubeconfig(env, 'alice', ['dev']);
  // alice may get pods in `a`, nothing else.
  await apply(role('a', 'pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]));
  await apply(binding('a', 'alice-reads', { kind: 'Role', name: 'pod-reader' }, [user('alice')]));
  await env.ok(['run', 'p', '--image=nginx', '-n', 'a']);
  await env.ok(['run', 'p', '--image=nginx', '-n', 'b']);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe('a Role and a RoleBinding', () => {
  it('grant exactly what they say, and the rest is refused with the apiserver message', async () => {
    expect(await as(alice, ['get', 'pod', 'p', '-n', 'a', '-o', 'name'])).toMatchObject({
      code: 0,
      stdout: 'pod/p\n',
    });
    const list = await as(alice, ['get', 'pods', '-n', 'a']);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain(
      'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "a"',
    );
    const other = await as(alice, ['get', 'pod', 'p', '-n', 'b']);
    expect(other.stderr).toContain(
      'Error from server (Forbidden): pods "p" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "b"',
    );
    const del = await as(alice, ['delete', 'pod', 'p', '-n', 'a']);
    expect(del.stderr).toContain(
      'User "alice" cannot delete resource "pods" in API group "" in the namespace "a"',
    );
  });

  it('take effect on the next request once created, and stop once deleted', async () => {
    const before = await as(alice, ['get', 'configmaps', '-n', 'b']);
    expect(before.code).toBe(1);
    await apply(role('b', 'cm', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }]));
    await apply(binding('b', 'alice-cm', { kind: 'Role', name: 'cm' }, [user('alice')]));
    expect((await as(alice, ['get', 'configmaps', '-n', 'b'])).code).toBe(0);
    await env.ok(['delete', 'rolebinding', 'alice-cm', '-n', 'b']);
    expect((await as(alice, ['get', 'configmaps', '-n', 'b'])).code).toBe(1);
  });

  it('grant a service account what its subject names, with the token kubectl create token gives', async () => {
    await env.ok(['create', 'serviceaccount', 'bot', '-n', 'a']);
    const token = (await env.ok(['create', 'token', 'bot', '-n', 'a'])).trim();
    const bot = tokenKubeconfig(env, 'bot', token);
    expect((await as(bot, ['get', 'pod', 'p', '-n', 'a'])).stderr).toContain(
      'User "system:serviceaccount:a:bot" cannot get resource "pods" in API group "" in the namespace "a"',
    );
    // A ServiceAccount subject without a namespace is the binding's namespace's.
    await apply(
      binding('a', 'bot-reads', { kind: 'Role', name: 'pod-reader' }, [
        { kind: 'ServiceAccount', name: 'bot' },
      ]),
    );
    expect((await as(bot, ['get', 'pod', 'p', '-n', 'a', '-o', 'name'])).stdout).toBe('pod/p\n');
  });
});

describe('kubectl auth can-i and whoami', () => {
  it('answer yes and no from RBAC, for oneself and --as another user', async () => {
    expect(await as(alice, ['auth', 'can-i', 'get', 'pods', '-n', 'a'])).toMatchObject({
      code: 0,
      stdout: 'yes\n',
    });
    expect(await as(alice, ['auth', 'can-i', 'list', 'pods', '-n', 'a'])).toMatchObject({
      code: 1,
      stdout: 'no\n',
    });
    expect(await env.run(['auth', 'can-i', 'get', 'pods', '-n', 'a', '--as', 'alice'])).toMatchObject({
      code: 0,
      stdout: 'yes\n',
    });
    expect(await env.run(['auth', 'can-i', 'get', 'pods', '-n', 'b', '--as', 'alice'])).toMatchObject({
      code: 1,
      stdout: 'no\n',
    });
    // --as-group system:masters: the privileged group may do anything.
    expect(
      await env.run(['auth', 'can-i', 'delete', 'nodes', '--as', 'alice', '--as-group', 'system:masters']),
    ).toMatchObject({ code: 0, stdout: 'yes\n' });
    // The admin (system:masters) may do anything, without any binding.
    expect(await env.run(['auth', 'can-i', '*', '*'])).toMatchObject({ code: 0, stdout: 'yes\n' });
  });

  it('--list shows the rules RBAC gives in the namespace, resource and non-resource ones', async () => {
    const list = await as(alice, ['auth', 'can-i', '--list', '-n', 'a']);
    expect(list.code).toBe(0);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s{2,}/));
    expect(rows[0]).toEqual(['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']);
    expect(rows).toContainEqual(['pods', '[]', '[]', '[get]']);
    expect(rows).toContainEqual(['selfsubjectaccessreviews.authorization.k8s.io', '[]', '[]', '[create]']);
    expect(rows).toContainEqual(['[/healthz]', '[]', '[get]']);
    expect(rows).toContainEqual(['[/api]', '[]', '[get]']);
    // Not in namespace b.
    const b = await as(alice, ['auth', 'can-i', '--list', '-n', 'b']);
    expect(b.stdout).not.toMatch(/^pods\s/m);
  });

  it('whoami names the user and its groups, impersonated ones included', async () => {
    const me = await as(alice, ['auth', 'whoami', '-o', 'json']);
    expect(JSON.parse(me.stdout).status.userInfo).toEqual({
      username: 'alice',
      groups: ['dev', 'system:authenticated'],
    });
    const bob = await env.ok(['auth', 'whoami', '--as', 'bob', '--as-group', 'g1', '-o', 'json']);
    expect(JSON.parse(bob).status.userInfo).toEqual({
      username: 'bob',
      groups: ['g1', 'system:authenticated'],
    });
    const sa = await env.ok(['auth', 'whoami', '--as', 'system:serviceaccount:a:bot', '-o', 'json']);
    expect(JSON.parse(sa).status.userInfo).toEqual({
      username: 'system:serviceaccount:a:bot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:a', 'system:authenticated'],
    });
  });
});

describe('impersonation', () => {
  it('serves the request as the impersonated user, with its rights only', async () => {
    const r = await env.run(['get', 'pods', '-n', 'default', '--as', 'bob']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    expect((await env.run(['get', 'pod', 'p', '-n', 'a', '--as', 'alice', '-o', 'name'])).stdout).toBe(
      'pod/p\n',
    );
  });

  it('needs the impersonate verb on users, groups and service accounts', async () => {
    const asUser = await as(alice, ['get', 'pod', 'p', '-n', 'a', '--as', 'bob']);
    expect(asUser.code).toBe(1);
    expect(asUser.stderr).toContain(
      'Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const sa = await as(alice, ['get', 'pod', 'p', '-n', 'a', '--as', 'system:serviceaccount:a:bot']);
    expect(sa.stderr).toContain(
      'serviceaccounts "bot" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "a"',
    );
    await apply({
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: 'impersonate-bob' },
      rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['bob'] }],
    });
    await apply({
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'alice-impersonates-bob' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonate-bob' },
      subjects: [user('alice')],
    });
    // alice may now act as bob, who may not get pods.
    const asBob = await as(alice, ['get', 'pod', 'p', '-n', 'a', '--as', 'bob']);
    expect(asBob.stderr).toContain('pods "p" is forbidden: User "bob" cannot get resource "pods"');
    // But not add a group to bob.
    const group = await as(alice, [
      'get',
      'pod',
      'p',
      '-n',
      'a',
      '--as',
      'bob',
      '--as-group',
      'system:masters',
    ]);
    expect(group.stderr).toContain(
      'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
  });
});
