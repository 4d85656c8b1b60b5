/** The authorizer's interface and the shapes of its questions and answers (kube's `authorizer` package). */

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

/** Decides requests, and lists a user's rules (`authorizer.Authorizer` plus its `RuleResolver`). */
export interface Authorizer {
  /** Decides one request. */
  authorize(attributes: AuthorizationAttributes): AuthorizationDecision;
  /** The rules `user` with `groups` holds in `namespace` (SelfSubjectRulesReview). */
  rulesFor(user: string, groups: readonly string[], namespace: string): RulesDecision;
}

/** kube-apiserver's `--authorization-mode` values this server knows. */
export type AuthorizationMode = 'RBAC' | 'AlwaysAllow';
