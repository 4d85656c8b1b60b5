/**
 * The server's authorizer: what decides every request and answers the review kinds, as
 * kube-apiserver's authorizer chain does (pkg/kubeapiserver/authorizer): the privileged group
 * `system:masters` is allowed first (authorizerfactory's privileged-groups authorizer), then the
 * mode's authorizer — `RBAC` (the default) or `AlwaysAllow`.
 */
import type { Store } from '../../storage/store.js';
import { authorizeNode } from './node.js';
import { aggregate, RbacPolicy } from './rbac/policy.js';
import { type PolicyRule, ruleAllows } from './rbac/rules.js';
import type { AuthorizationMode, Authorizer, RulesDecision } from './types.js';

/** `user.SystemPrivilegedGroup`: always allowed, whatever the mode. */
export const PRIVILEGED_GROUP = 'system:masters';

const copy = (v: readonly string[] | undefined): string[] | undefined => (v ? [...v] : undefined);

/** `AlwaysAllow`: every request is allowed, and everyone holds every rule. */
export const alwaysAllow: Authorizer = {
  authorize: () => ({ allowed: true }),
  rulesFor: () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  }),
};

/** The RBAC authorizer (plugin/pkg/auth/authorizer/rbac) over `policy`. */
export function rbacAuthorizer(policy: RbacPolicy): Authorizer {
  return {
    authorize(a) {
      const namespace = a.resource?.namespace ?? '';
      let reason: string | undefined;
      const errors: string[] = [];
      policy.visitRulesFor(a.user, a.groups, namespace, (source, rule, err) => {
        if (rule && source && ruleAllows(a, rule)) {
          reason = `RBAC: allowed by ${source()}`;
          return false;
        }
        if (err) errors.push(err);
        return true;
      });
      if (reason) return { allowed: true, reason };
      return errors.length > 0
        ? { allowed: false, reason: `RBAC: ${aggregate(errors)}` }
        : { allowed: false };
    },
    rulesFor(user, groups, namespace) {
      const { rules, errors } = policy.rulesFor(user, groups, namespace);
      const out: RulesDecision = { resourceRules: [], nonResourceRules: [], incomplete: false };
      for (const r of rules) {
        if (r.resources)
          out.resourceRules.push({
            verbs: [...r.verbs],
            ...(r.apiGroups && { apiGroups: copy(r.apiGroups) }),
            resources: [...r.resources],
            ...(r.resourceNames && { resourceNames: copy(r.resourceNames) }),
          });
        if (r.nonResourceURLs)
          out.nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] });
      }
      if (errors.length > 0) out.evaluationError = aggregate(errors);
      return out;
    },
  };
}

/**
 * kube-apiserver's union of authorizers: `system:masters` is allowed, then with `node` the Node
 * authorizer decides for kubelets, then `mode` decides; the reasons of those without an opinion
 * are joined. The rules a user holds are the mode's (the others resolve none for users).
 */
export function authorizerChain(mode: Authorizer, node = false): Authorizer {
  return {
    authorize(a) {
      if (a.groups.includes(PRIVILEGED_GROUP)) return { allowed: true };
      const byNode = node ? authorizeNode(a) : undefined;
      if (byNode?.allowed) return byNode;
      const decision = mode.authorize(a);
      if (decision.allowed || !byNode?.reason) return decision;
      return {
        ...decision,
        reason: decision.reason ? `${byNode.reason}\n${decision.reason}` : byNode.reason,
      };
    },
    rulesFor: (user, groups, namespace) => mode.rulesFor(user, groups, namespace),
  };
}

/**
 * The server's authorizer for `mode`, and the RBAC policy it reads (RBAC mode reads it, escalation
 * checks always do). `RBAC` is kubeadm's `--authorization-mode=Node,RBAC`: kubelets are decided
 * by the Node authorizer first.
 */
export function createAuthorizer(
  mode: AuthorizationMode,
  store: Pick<Store, 'get' | 'list' | 'watch' | 'revision'>,
): { authorizer: Authorizer; policy: RbacPolicy } {
  const policy = new RbacPolicy(store);
  const modeAuthorizer = mode === 'AlwaysAllow' ? alwaysAllow : rbacAuthorizer(policy);
  return { authorizer: authorizerChain(modeAuthorizer, mode === 'RBAC'), policy };
}

export type {
  AuthorizationAttributes,
  AuthorizationDecision,
  AuthorizationMode,
  Authorizer,
  RulesDecision,
} from './types.js';
export type { PolicyRule };
