/**
 * The RBAC authorizer over a store: which bindings apply to a user (by name, group or service
 * account), in which namespace, the reasons it gives, and `rulesFor` as SelfSubjectRulesReview
 * lists them; the binding index follows every write.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../../../storage/store.js';
import { authorizerChain, rbacAuthorizer } from '../authorizer.js';
import { RbacPolicy } from './policy.js';

const G = 'rbac.authorization.k8s.io';
const key = (resource: string, name: string, ns?: string) =>
  ns ? `/${G}/${resource}/${ns}/${name}` : `/${G}/${resource}/${name}`;
const subject = (kind: string, name: string, namespace?: string) => ({
  kind,
  name,
  ...(namespace && { namespace }),
});

async function setup() {
  const store = Store.open();
  const put = (resource: string, obj: Record<string, unknown>) => {
    const m = obj.metadata as { name: string; namespace?: string };
    return store.create(key(resource, m.name, m.namespace), obj as never);
  };
  await put('clusterroles', {
    metadata: { name: 'viewer' },
    rules: [
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get'], nonResourceURLs: ['/healthz'] },
    ],
  });
  await put('roles', {
    metadata: { name: 'cm', namespace: 'a' },
    rules: [{ verbs: ['*'], apiGroups: [''], resources: ['configmaps'] }],
  });
  await put('clusterrolebindings', {
    metadata: { name: 'devs-view' },
    roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'viewer' },
    subjects: [subject('Group', 'devs')],
  });
  await put('rolebindings', {
    metadata: { name: 'sa-cm', namespace: 'a' },
    roleRef: { apiGroup: G, kind: 'Role', name: 'cm' },
    subjects: [subject('User', 'nobody'), subject('ServiceAccount', 'bot')],
  });
  const policy = new RbacPolicy(store);
  return { store, put, policy, authorizer: authorizerChain(rbacAuthorizer(policy)) };
}

const get = (user: string, groups: string[], resource: string, namespace = '', verb = 'get') => ({
  user,
  groups,
  resource: { verb, resource, group: '', namespace },
});

describe('the RBAC authorizer', () => {
  it('allows by group, says which binding did, and has no opinion otherwise', async () => {
    const { authorizer } = await setup();
    expect(authorizer.authorize(get('alice', ['devs'], 'pods', 'x'))).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "devs-view" of ClusterRole "viewer" to Group "devs"',
    });
    expect(authorizer.authorize(get('alice', ['ops'], 'pods', 'x'))).toEqual({ allowed: false });
    expect(authorizer.authorize(get('root', ['system:masters'], 'secrets'))).toEqual({ allowed: true });
  });

  it('applies a ServiceAccount subject to its username, in the binding namespace only', async () => {
    const { authorizer } = await setup();
    const bot = 'system:serviceaccount:a:bot';
    expect(authorizer.authorize(get(bot, [], 'configmaps', 'a', 'delete'))).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "sa-cm/a" of Role "cm" to ServiceAccount "bot/a"',
    });
    expect(authorizer.authorize(get(bot, [], 'configmaps', 'b')).allowed).toBe(false);
    expect(authorizer.authorize(get('system:serviceaccount:b:bot', [], 'configmaps', 'a')).allowed).toBe(
      false,
    );
  });

  it('follows writes of bindings, and names a missing role in its reason', async () => {
    const { authorizer, put, store } = await setup();
    await put('clusterrolebindings', {
      metadata: { name: 'ghost' },
      roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'gone' },
      subjects: [subject('User', 'carol')],
    });
    expect(authorizer.authorize(get('carol', [], 'pods'))).toEqual({
      allowed: false,
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found',
    });
    await put('clusterroles', {
      metadata: { name: 'gone' },
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
    });
    expect(authorizer.authorize(get('carol', [], 'pods')).allowed).toBe(true);
    await store.delete(key('clusterrolebindings', 'ghost'));
    expect(authorizer.authorize(get('carol', [], 'pods'))).toEqual({ allowed: false });
  });

  it('lists rules as SelfSubjectRulesReview does: cluster-wide then the namespace, errors in evaluationError', async () => {
    const { authorizer, put } = await setup();
    await put('rolebindings', {
      metadata: { name: 'broken', namespace: 'a' },
      roleRef: { apiGroup: G, kind: 'Role', name: 'nope' },
      subjects: [subject('Group', 'devs')],
    });
    await put('rolebindings', {
      metadata: { name: 'devs-cm', namespace: 'a' },
      roleRef: { apiGroup: G, kind: 'Role', name: 'cm' },
      subjects: [subject('Group', 'devs')],
    });
    expect(authorizer.rulesFor('alice', ['devs'], 'a')).toEqual({
      resourceRules: [
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
        { verbs: ['*'], apiGroups: [''], resources: ['configmaps'] },
      ],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
      incomplete: false,
      evaluationError: 'role.rbac.authorization.k8s.io "nope" not found',
    });
    expect(authorizer.rulesFor('alice', ['devs'], 'b')).toEqual({
      resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
      incomplete: false,
    });
  });
});
