/**
 * RBAC's escalation prevention (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased
 * with rbac/escalation_check.go and validation.ConfirmNoEscalation): a user may write a Role or
 * ClusterRole only with rules it holds itself unless it may `escalate` it, and a binding only to a
 * role whose rules it holds unless it may `bind` that role; `system:masters` may always.
 */
import { ApiError } from 'kubeloop/api';
import { PRIVILEGED_GROUP } from '../../auth/authorization/authorizer.js';
import { aggregate } from '../../auth/authorization/rbac/policy.js';
import {
  compactRules,
  compactString,
  covers,
  goQuotedList,
  type PolicyRule,
  policyRule,
} from '../../auth/authorization/rbac/rules.js';
import { deepEqual, type Obj } from '../../util/object.js';
import type { StorageHooks, WriteEnv } from '../shared/behaviour.js';
import { isObj, str } from '../shared/util.js';

const GROUP = 'rbac.authorization.k8s.io';

/** `EscalationAllowed`: the privileged group (the apiserver's own loopback clients are in it). */
const escalationAllowed = (env: WriteEnv): boolean => env.user.groups.includes(PRIVILEGED_GROUP);

/** `IsOnlyMutatingGCFields`: an update that changes only owner references and finalizers. */
function onlyGCFields(obj: Obj, old: Obj | undefined): boolean {
  if (!old) return false;
  const strip = (o: Obj): Obj => {
    const m = { ...(isObj(o.metadata) ? o.metadata : {}) };
    for (const k of ['ownerReferences', 'finalizers', 'selfLink', 'managedFields']) delete m[k];
    return { ...o, metadata: m };
  };
  return deepEqual(strip(obj), strip(old));
}

/** `ConfirmNoEscalation`: undefined when the user holds every rule of `rules`, else why not. */
function confirmNoEscalation(env: WriteEnv, rules: readonly PolicyRule[]): string | undefined {
  const { user, namespace, authorization } = env;
  const held = authorization.policy.rulesFor(user.username, user.groups, namespace, true);
  const { covered, missing } = covers(held.rules, rules);
  if (covered) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(user.username)} (groups=${goQuotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  // `%v` of a []error holding one aggregate.
  if (held.errors.length > 0) msg += `; resolution errors: [${aggregate(held.errors)}]`;
  return msg;
}

/** The policy check of Roles (`namespaced`) and ClusterRoles. */
export function roleEscalationCheck(resource: 'roles' | 'clusterroles'): StorageHooks['confirmWrite'] {
  return (obj, old, env) => {
    if (escalationAllowed(env) || onlyGCFields(obj, old)) return;
    const name = str(isObj(obj.metadata) ? obj.metadata.name : undefined);
    // `RoleEscalationAuthorized`: the `escalate` verb on this role, named as the request names it
    // (a create POSTs to the collection: no name).
    const escalate = env.authorization.authorizer.authorize({
      user: env.user.username,
      groups: env.user.groups,
      resource: {
        verb: 'escalate',
        group: GROUP,
        version: '*',
        resource,
        name: old ? name : '',
        namespace: env.namespace,
      },
    });
    if (escalate.allowed) return;
    const rules = (Array.isArray(obj.rules) ? obj.rules : []).map(policyRule);
    const why = confirmNoEscalation(env, rules);
    if (why) throw ApiError.forbidden({ group: GROUP, resource }, name, why);
    // An aggregation rule can gather anything: it takes * on *.* (clusterrole/policybased).
    const aggregates = (o: Obj | undefined) => isObj(o?.aggregationRule);
    if (
      resource === 'clusterroles' &&
      (aggregates(obj) || aggregates(old)) &&
      confirmNoEscalation(env, FULL_AUTHORITY)
    )
      throw ApiError.forbidden(
        { group: GROUP, resource },
        name,
        'must have cluster-admin privileges to use the aggregationRule',
      );
  };
}

/** `fullAuthority`: every verb on every resource and URL. */
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** The policy check of RoleBindings and ClusterRoleBindings. */
export function bindingEscalationCheck(
  resource: 'rolebindings' | 'clusterrolebindings',
): StorageHooks['confirmWrite'] {
  return (obj, old, env) => {
    if (escalationAllowed(env) || onlyGCFields(obj, old)) return;
    const name = str(isObj(obj.metadata) ? obj.metadata.name : undefined);
    const ref = isObj(obj.roleRef) ? obj.roleRef : {};
    const kind = str(ref.kind);
    // `BindingAuthorized`: the `bind` verb on the role, in the binding's namespace.
    if (kind === 'ClusterRole' || kind === 'Role') {
      const bind = env.authorization.authorizer.authorize({
        user: env.user.username,
        groups: env.user.groups,
        resource: {
          verb: 'bind',
          group: str(ref.apiGroup),
          resource: kind === 'Role' ? 'roles' : 'clusterroles',
          name: str(ref.name),
          namespace: env.namespace,
        },
      });
      if (bind.allowed) return;
    }
    const resolved = env.authorization.policy.roleReferenceRules(
      { kind, name: str(ref.name), apiGroup: str(ref.apiGroup) },
      env.namespace,
      true,
    );
    // GetRoleReferenceRules' error goes back as it is: the missing role's NotFound, or (a kind
    // validation would refuse later) a plain error.
    if ('error' in resolved) {
      if (kind === 'Role' || kind === 'ClusterRole')
        throw ApiError.notFound(
          { group: GROUP, resource: kind === 'Role' ? 'roles' : 'clusterroles' },
          str(ref.name),
        );
      throw new ApiError({ code: 500, message: resolved.error });
    }
    const why = confirmNoEscalation(env, resolved.rules);
    if (why) throw ApiError.forbidden({ group: GROUP, resource }, name, why);
  };
}
