/**
 * RBAC derived from what the controllers do, as controller-gen derives it from
 * `+kubebuilder:rbac` markers — except that here nobody writes the markers: a controller that
 * reconciles `Foo` and owns `Deployment`s needs exactly the permissions below, so they are
 * computed from that declaration.
 */
import type { PolicyRule } from 'kubernetes-types/rbac/v1.js';
import type { ResourceDescriptor } from '../client/descriptor.js';

export type { PolicyRule };

/**
 * What one controller reconciles and watches — the declarative shape the controller builder
 * (`controller(Foo).owns(Deployment).watches(ConfigMap, …)`) produces, so that its permissions
 * can be derived without running it.
 */
export interface ControllerPermissions {
  /** The reconciled kind: get/list/watch, update/patch (finalizers, labels), and its status. */
  readonly for: ResourceDescriptor;
  /** Kinds the controller creates and owns: get/list/watch/create/update/patch/delete. */
  readonly owns?: readonly ResourceDescriptor[];
  /** Kinds the controller only watches: get/list/watch. */
  readonly watches?: readonly ResourceDescriptor[];
  /** Anything else the reconcile function does (e.g. reading Secrets). */
  readonly extraRules?: readonly PolicyRule[];
}

/** The manager's permissions: its controllers plus what the manager itself does. */
export interface ManagerPermissions {
  readonly controllers: readonly ControllerPermissions[];
  /** Leader election with a Lease in the manager's namespace (default true). */
  readonly leaderElection?: boolean;
  /** The event recorder: create/patch `events.k8s.io` Events (default true). */
  readonly events?: boolean;
  /** Rules beyond the controllers', e.g. for a webhook or a metrics endpoint. */
  readonly extraRules?: readonly PolicyRule[];
  /**
   * The namespaces a namespaced manager watches. When set, namespaced kinds are granted with a
   * Role and RoleBinding in each of them instead of a ClusterRole; cluster-scoped kinds still
   * need a ClusterRole.
   */
  readonly namespaces?: readonly string[];
  /**
   * Sharded controllers (`Manager` option `sharding`): the ring's members list and watch the
   * shard Leases and delete their own on a clean stop (in the Leases' namespace, beside leader
   * election's); the primary kinds' labels are patched with the `patch` they already have.
   */
  readonly sharding?: boolean;
}

/** The verbs each relation needs. */
export const VERBS = {
  /** Reading through an informer. */
  watch: ['get', 'list', 'watch'],
  /** The reconciled kind: read, and update/patch for finalizers and metadata. */
  for: ['get', 'list', 'watch', 'update', 'patch'],
  /** The status subresource of the reconciled kind. */
  status: ['get', 'update', 'patch'],
  /**
   * The finalizers subresource: setting blockOwnerDeletion on children's owner references
   * (OwnerReferencesPermissionEnforcement) requires update on `<plural>/finalizers`.
   */
  finalizers: ['update'],
  /** Owned children: the full life cycle. */
  owns: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  /**
   * Leases for leader election: what kubeloop's elector does — read its Lease, create it, renew
   * and release it by update (kubebuilder grants every verb; none of the others is used).
   */
  leases: ['get', 'create', 'update'],
  /** Shard Leases of a sharded manager, beyond leader election's. */
  shardLeases: ['list', 'watch', 'delete'],
  /** Events of the recorder. */
  events: ['create', 'patch'],
} as const;

const VERB_ORDER = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

function pluralOf(d: ResourceDescriptor): string {
  if (!d.plural)
    throw new TypeError(
      `RBAC for ${d.kind} (${d.group || 'core'}/${d.version}): the descriptor has no plural; give one (RBAC rules name resources by their plural)`,
    );
  return d.plural;
}

/** A rule set keyed by group and resource, merged and sorted like controller-gen's output. */
class RuleSet {
  private readonly verbs = new Map<string, Set<string>>();
  private readonly extra: PolicyRule[] = [];

  add(group: string, resource: string, verbs: readonly string[]): void {
    const k = `${group}\u0000${resource}`;
    const set = this.verbs.get(k) ?? new Set<string>();
    this.verbs.set(k, set);
    for (const v of verbs) set.add(v);
  }

  /** A rule as given; simple ones (groups × resources × verbs, no names) are merged. */
  addRule(rule: PolicyRule): void {
    if (rule.nonResourceURLs?.length || rule.resourceNames?.length || !rule.resources?.length) {
      this.extra.push({ ...rule });
      return;
    }
    for (const g of rule.apiGroups ?? ['']) for (const r of rule.resources) this.add(g, r, rule.verbs);
  }

  rules(): PolicyRule[] {
    // One rule per (group, verbs), listing its resources: compact and stable, as controller-gen does.
    const byGroupVerbs = new Map<string, { group: string; verbs: string[]; resources: string[] }>();
    for (const [k, set] of this.verbs) {
      const [group, resource] = k.split('\u0000') as [string, string];
      const verbs = sortVerbs([...set]);
      const gk = `${group}\u0000${verbs.join(',')}`;
      const entry = byGroupVerbs.get(gk) ?? { group, verbs, resources: [] };
      byGroupVerbs.set(gk, entry);
      entry.resources.push(resource);
    }
    const out = [...byGroupVerbs.values()]
      .map((e) => ({ apiGroups: [e.group], resources: e.resources.sort(), verbs: e.verbs }))
      .sort(
        (a, b) =>
          a.apiGroups[0]!.localeCompare(b.apiGroups[0]!) || a.resources[0]!.localeCompare(b.resources[0]!),
      );
    return [...out, ...this.extra];
  }

  get size(): number {
    return this.verbs.size + this.extra.length;
  }
}

function sortVerbs(verbs: string[]): string[] {
  const rank = (v: string) => {
    const i = VERB_ORDER.indexOf(v);
    return i < 0 ? VERB_ORDER.length : i;
  };
  return [...new Set(verbs)].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function controllerRules(c: ControllerPermissions, set: (d: ResourceDescriptor) => RuleSet): void {
  const primary = pluralOf(c.for);
  const s = set(c.for);
  s.add(c.for.group, primary, VERBS.for);
  s.add(c.for.group, `${primary}/status`, VERBS.status);
  s.add(c.for.group, `${primary}/finalizers`, VERBS.finalizers);
  for (const d of c.owns ?? []) set(d).add(d.group, pluralOf(d), VERBS.owns);
  for (const d of c.watches ?? []) set(d).add(d.group, pluralOf(d), VERBS.watch);
}

/** The manager's rules, split by where they are granted. */
export interface DerivedRules {
  /** Rules of the manager's ClusterRole (everything, for a cluster-wide manager). */
  readonly cluster: PolicyRule[];
  /** Rules granted per watched namespace (a namespaced manager only). */
  readonly namespaced: PolicyRule[];
  /** Rules in the manager's own namespace: leader election's leases. */
  readonly leaderElection: PolicyRule[];
}

/**
 * The policy rules a manager needs, derived from its controllers.
 *
 * - `for: Foo` → foos: get/list/watch/update/patch; foos/status: get/update/patch; foos/finalizers: update
 * - `owns: [Deployment]` → deployments: get/list/watch/create/update/patch/delete
 * - `watches: [ConfigMap]` → configmaps: get/list/watch
 * - leader election → leases (coordination.k8s.io) in the manager's namespace
 * - the event recorder → events (events.k8s.io, the API it writes): create/patch
 * - plus explicit `extraRules`.
 *
 * @example
 * ```ts
 * const { cluster } = derivePolicyRules({ controllers: [{ for: Foo, owns: [Deployment] }] });
 * ```
 */
export function derivePolicyRules(m: ManagerPermissions): DerivedRules {
  const cluster = new RuleSet();
  const namespaced = new RuleSet();
  const scoped = Boolean(m.namespaces?.length);
  const setFor = (d: ResourceDescriptor): RuleSet => {
    if (!scoped) return cluster;
    if (d.namespaced === undefined)
      throw new TypeError(
        `RBAC for ${d.kind}: a namespaced manager needs to know whether ${d.kind} is namespaced; give the descriptor's namespaced`,
      );
    return d.namespaced ? namespaced : cluster;
  };
  for (const c of m.controllers) {
    controllerRules(c, setFor);
    for (const r of c.extraRules ?? []) (scoped ? namespaced : cluster).addRule(r);
  }
  const events = m.events ?? true;
  if (events) {
    // The manager's recorder writes events.k8s.io/v1 Events only: no grant on core events.
    (scoped ? namespaced : cluster).add('events.k8s.io', 'events', VERBS.events);
  }
  for (const r of m.extraRules ?? []) cluster.addRule(r);
  const leader = new RuleSet();
  if (m.leaderElection ?? true) {
    // kubeloop's elector records no Events (controller-runtime's does, hence kubebuilder's
    // events rule in this Role): the Lease is all it touches.
    leader.add('coordination.k8s.io', 'leases', VERBS.leases);
  }
  if (m.sharding) leader.add('coordination.k8s.io', 'leases', [...VERBS.leases, ...VERBS.shardLeases]);
  return { cluster: cluster.rules(), namespaced: namespaced.rules(), leaderElection: leader.rules() };
}

/** Names of the RBAC objects (before kustomize's `namePrefix`). */
export interface RbacNames {
  /** ServiceAccount of the manager (default `controller-manager`). */
  readonly serviceAccount?: string;
  /**
   * Namespace of the manager. Absent in kustomize bases: config/default's namespace transformer
   * sets it on the objects and on the bindings' ServiceAccount subjects.
   */
  readonly namespace?: string;
  /** Role of the controllers (default `manager-role`). */
  readonly role?: string;
  /** Role of leader election (default `leader-election-role`). */
  readonly leaderElectionRole?: string;
}

/** A Kubernetes object as the manifests hold it. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown };
  [field: string]: unknown;
}

/** The RBAC objects of `config/rbac`, one entry per file. */
export interface RbacManifests {
  readonly serviceAccount: Manifest;
  /** ClusterRole (and binding) for the controllers; absent when a namespaced manager needs none. */
  readonly clusterRole?: Manifest;
  readonly clusterRoleBinding?: Manifest;
  /** Roles and bindings per watched namespace (a namespaced manager). */
  readonly namespacedRoles: Manifest[];
  readonly leaderElectionRole?: Manifest;
  readonly leaderElectionRoleBinding?: Manifest;
}

const RBAC = 'rbac.authorization.k8s.io/v1';

/**
 * The ServiceAccount, roles and bindings of a manager. A cluster-wide manager gets a ClusterRole;
 * a namespaced one (`namespaces`) a Role and RoleBinding in each namespace it watches.
 *
 * @example
 * ```ts
 * const rbac = rbacManifests({ controllers: [{ for: Foo, owns: [Deployment] }] });
 * rbac.clusterRole.rules; // [{ apiGroups: ['apps'], resources: ['deployments'], verbs: [...] }, …]
 * ```
 */
export function rbacManifests(
  m: ManagerPermissions,
  names: RbacNames = {},
  labels: Record<string, string> = {},
): RbacManifests {
  const sa = names.serviceAccount ?? 'controller-manager';
  const ns = names.namespace;
  const role = names.role ?? 'manager-role';
  const leRole = names.leaderElectionRole ?? 'leader-election-role';
  const rules = derivePolicyRules(m);
  const meta = (name: string, namespace?: string) => ({
    name,
    ...(namespace !== undefined && { namespace }),
    ...(Object.keys(labels).length > 0 && { labels: { ...labels } }),
  });
  const subject = [{ kind: 'ServiceAccount', name: sa, ...(ns !== undefined && { namespace: ns }) }];
  const out: {
    serviceAccount: Manifest;
    clusterRole?: Manifest;
    clusterRoleBinding?: Manifest;
    namespacedRoles: Manifest[];
    leaderElectionRole?: Manifest;
    leaderElectionRoleBinding?: Manifest;
  } = {
    serviceAccount: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(sa, ns) },
    namespacedRoles: [],
  };
  if (rules.cluster.length > 0 || !m.namespaces?.length) {
    out.clusterRole = { apiVersion: RBAC, kind: 'ClusterRole', metadata: meta(role), rules: rules.cluster };
    out.clusterRoleBinding = {
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: meta(`${role.replace(/-role$/, '')}-rolebinding`),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: subject,
    };
  }
  for (const watched of m.namespaces ?? []) {
    if (rules.namespaced.length === 0) break;
    out.namespacedRoles.push(
      { apiVersion: RBAC, kind: 'Role', metadata: meta(role, watched), rules: rules.namespaced },
      {
        apiVersion: RBAC,
        kind: 'RoleBinding',
        metadata: meta(`${role.replace(/-role$/, '')}-rolebinding`, watched),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
        subjects: subject,
      },
    );
  }
  if (rules.leaderElection.length > 0) {
    out.leaderElectionRole = {
      apiVersion: RBAC,
      kind: 'Role',
      metadata: meta(leRole, ns),
      rules: rules.leaderElection,
    };
    out.leaderElectionRoleBinding = {
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: meta(`${leRole.replace(/-role$/, '')}-rolebinding`, ns),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: leRole },
      subjects: subject,
    };
  }
  return out;
}
