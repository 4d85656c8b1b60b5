/**
 * The authorizer the review kinds consult. Requests are not authorized yet in this server (every
 * authenticated user may do everything), so the answer is what that policy decides: allowed.
 * RBAC will replace this one function.
 */

/** What a SubjectAccessReview asks about: `authorizer.Attributes` of kube-apiserver. */
export interface AuthorizationAttributes {
  user: string;
  groups: readonly string[];
  /** Set for resource requests. */
  resource?: {
    namespace?: string;
    verb?: string;
    group?: string;
    version?: string;
    resource?: string;
    subresource?: string;
    name?: string;
  };
  /** Set for non-resource requests (`/healthz`, `/api`). */
  nonResource?: { path?: string; verb?: string };
}

/** `authorizer.Decision` with its reason, as SubjectAccessReviewStatus carries them. */
export interface AuthorizationDecision {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

/** A user's rules in a namespace, as SelfSubjectRulesReviewStatus lists them. */
export interface RulesDecision {
  resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs?: string[] }[];
  incomplete: boolean;
  evaluationError?: string;
}

/** Decides one request. Everything is allowed until RBAC is enforced. */
export function authorize(_attributes: AuthorizationAttributes): AuthorizationDecision {
  return { allowed: true };
}

/** The rules `user` has in `namespace`: everything, until RBAC is enforced (cluster-admin's rules). */
export function rulesFor(_user: string, _groups: readonly string[], _namespace: string): RulesDecision {
  return {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  };
}
