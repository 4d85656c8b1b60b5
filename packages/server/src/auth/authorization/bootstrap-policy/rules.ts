/**
 * The shapes of the bootstrap policy and the short notation its tables are written in: one rule
 * per line, lists space-separated (as `rbacv1helpers.NewRule(...).Groups(...).Resources(...)`
 * reads in kube's `bootstrappolicy`), so that a role reads like its testdata.
 */

/** `rbac/v1.PolicyRule`, its fields in the order kube-apiserver serializes them. */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** `rbac/v1.Subject`. */
export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  apiGroup?: string;
  name: string;
  namespace?: string;
}

/** The metadata every bootstrap object carries. */
export interface PolicyMeta {
  name: string;
  namespace?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A ClusterRole or Role of the bootstrap policy. */
export interface PolicyRole {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'ClusterRole' | 'Role';
  metadata: PolicyMeta;
  aggregationRule?: { clusterRoleSelectors: { matchLabels: Record<string, string> }[] };
  rules: PolicyRule[] | null;
}

/** A ClusterRoleBinding or RoleBinding of the bootstrap policy. */
export interface PolicyBinding {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'ClusterRoleBinding' | 'RoleBinding';
  metadata: PolicyMeta;
  roleRef: { apiGroup: 'rbac.authorization.k8s.io'; kind: 'ClusterRole' | 'Role'; name: string };
  subjects?: Subject[];
}

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
/** The label of every bootstrap object (`bootstrappolicy.addDefaultMetadata`). */
export const BOOTSTRAPPING_LABEL = 'kubernetes.io/bootstrapping';
/** The annotation that lets the start-up reconcile change an object (`"false"` protects it). */
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';

const list = (s: string): string[] => s.split(' ');

/**
 * A resource rule: `verbs`, `groups` (`core` is the legacy group `""`), `resources` and, when
 * given, `names` — each a space-separated list.
 */
export function r(verbs: string, groups: string, resources: string, names?: string): PolicyRule {
  return {
    verbs: list(verbs),
    apiGroups: list(groups).map((g) => (g === 'core' ? '' : g)),
    resources: list(resources),
    ...(names !== undefined && { resourceNames: list(names) }),
  };
}

/** A non-resource rule: `verbs` on the space-separated `urls`. */
export function u(verbs: string, urls: string): PolicyRule {
  return { verbs: list(verbs), nonResourceURLs: list(urls) };
}

/** `eventsRule()`: what every controller needs to record Events. */
export const events = (): PolicyRule => r('create patch update', 'core events.k8s.io', 'events');

/** `addDefaultMetadata`: the bootstrapping label and the autoupdate annotation. */
export function defaultMeta(
  name: string,
  namespace?: string,
  labels: Record<string, string> = {},
): PolicyMeta {
  return {
    name,
    ...(namespace !== undefined && { namespace }),
    labels: { [BOOTSTRAPPING_LABEL]: 'rbac-defaults', ...labels },
    annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
  };
}

/** A ClusterRole of the policy. */
export function clusterRole(name: string, rules: PolicyRule[], labels?: Record<string, string>): PolicyRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: defaultMeta(name, undefined, labels),
    rules,
  };
}

/**
 * A ClusterRole whose rules the aggregation controller fills from the ClusterRoles labelled
 * `rbac.authorization.k8s.io/aggregate-to-<target>: "true"`; its own rules are null.
 */
export function aggregatedRole(name: string, target: string, labels?: Record<string, string>): PolicyRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: defaultMeta(name, undefined, labels),
    aggregationRule: {
      clusterRoleSelectors: [
        { matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${target}`]: 'true' } },
      ],
    },
    rules: null,
  };
}

/** A Role of the policy in `namespace`. */
export function role(namespace: string, name: string, rules: PolicyRule[]): PolicyRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: defaultMeta(name, namespace),
    rules,
  };
}

export const user = (name: string): Subject => ({ kind: 'User', apiGroup: RBAC_GROUP, name });
export const group = (name: string): Subject => ({ kind: 'Group', apiGroup: RBAC_GROUP, name });
export const serviceAccount = (namespace: string, name: string): Subject => ({
  kind: 'ServiceAccount',
  name,
  namespace,
});

/** A ClusterRoleBinding of the ClusterRole of the same name (`NewClusterBinding`). */
export function clusterBinding(name: string, subjects: Subject[], roleName = name): PolicyBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: defaultMeta(name),
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName },
    ...(subjects.length > 0 && { subjects }),
  };
}

/** A RoleBinding in `namespace` of the Role `roleName` (`NewRoleBinding`). */
export function roleBinding(
  namespace: string,
  name: string,
  roleName: string,
  subjects: Subject[],
): PolicyBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: defaultMeta(name, namespace),
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: roleName },
    subjects,
  };
}
