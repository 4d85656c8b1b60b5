/**
 * The `rbac/bootstrap-roles` post-start hook of kube-apiserver (`pkg/registry/rbac/rest/storage_rbac.go`
 * with `pkg/registry/rbac/reconciliation`): each object of the bootstrap policy is created when
 * missing; an existing one is reconciled in the union mode — missing labels and annotations,
 * rules, aggregation selectors and subjects are added, nothing is taken away — unless it is
 * annotated `rbac.authorization.kubernetes.io/autoupdate: "false"`. A binding whose roleRef
 * changed is recreated. A second run on the same data changes nothing.
 */
import { ApiError } from 'kubeloop/api';
import type { Registry } from '../../../registry/registry.js';
import type { RestStorage, WriteContext } from '../../../registry/rest.js';
import type { ResourceType } from '../../../registry/types.js';
import { clone, deepEqual, type Obj } from '../../../util/object.js';
import { type StoredRule, subjectsMissing, uncoveredRules } from './covers.js';
import { type BootstrapPolicy, bootstrapPolicy } from './policy.js';
import { AUTOUPDATE_ANNOTATION, type PolicyBinding, type PolicyRole, type Subject } from './rules.js';

/** What one object's reconcile did. */
export type ReconcileOperation = 'none' | 'create' | 'update' | 'recreate' | 'protected';

/** Where the hook warns of protected objects it left short of the policy (kube's `klog.Warningf`). */
export type ReconcileLog = (level: 'warn', msg: string, fields: Record<string, unknown>) => void;

type Selector = { matchLabels?: Record<string, string> } & Obj;
type AggregationRule = { clusterRoleSelectors?: Selector[] } | null | undefined;

// The server's own writes are not tracked in managedFields, as for the bootstrap namespaces
// (kube's loopback client would record `kube-apiserver`): tracking them costs idle memory.
const WRITE: WriteContext = { dryRun: false };
const ATTEMPTS = 5;

const labelsOf = (o: Obj, key: 'labels' | 'annotations'): Record<string, string> =>
  ((o.metadata as Obj | undefined)?.[key] as Record<string, string> | undefined) ?? {};

/** `merge(expected, existing)`: the expected keys added, existing values kept. */
function mergeMeta(next: Obj, expected: PolicyRole | PolicyBinding): boolean {
  const meta = next.metadata as Obj;
  let changed = false;
  for (const key of ['labels', 'annotations'] as const) {
    const merged = { ...expected.metadata[key], ...labelsOf(next, key) };
    if (!deepEqual(merged, labelsOf(next, key))) {
      meta[key] = merged;
      changed = true;
    }
  }
  return changed;
}

/** Selectors of `wanted` not among `have` (`aggregationRuleCovers`). */
function selectorsMissing(have: AggregationRule, wanted: AggregationRule): Selector[] {
  if (!wanted) return [];
  const own = have?.clusterRoleSelectors ?? [];
  return (wanted.clusterRoleSelectors ?? []).filter((s) => !own.some((o) => deepEqual(o, s)));
}

/** `computeReconciledRole` in the union mode: the updated object, or undefined when nothing is missing. */
export function reconciledRole(existing: Obj, expected: PolicyRole): Obj | undefined {
  const next = clone(existing);
  let changed = mergeMeta(next, expected);
  const rules = (existing.rules as StoredRule[] | null | undefined) ?? [];
  const missing = uncoveredRules(rules, expected.rules ?? []);
  if (missing.length > 0) {
    next.rules = [...rules, ...missing] as unknown as Obj[];
    changed = true;
  }
  const had = existing.aggregationRule as AggregationRule;
  if (!expected.aggregationRule && had) {
    // Not an aggregated role in the policy: the aggregation someone added goes.
    delete next.aggregationRule;
    changed = true;
  } else {
    const selectors = selectorsMissing(had, expected.aggregationRule);
    if (selectors.length > 0) {
      next.aggregationRule = { clusterRoleSelectors: [...(had?.clusterRoleSelectors ?? []), ...selectors] };
      changed = true;
    }
  }
  return changed ? next : undefined;
}

/** `computeReconciledRoleBinding` in the union mode; `'recreate'` when the roleRef differs. */
export function reconciledBinding(existing: Obj, expected: PolicyBinding): Obj | 'recreate' | undefined {
  if (!deepEqual(existing.roleRef, expected.roleRef)) return 'recreate';
  const next = clone(existing);
  let changed = mergeMeta(next, expected);
  const subjects = (existing.subjects as Subject[] | undefined) ?? [];
  const missing = subjectsMissing(expected.subjects ?? [], subjects);
  if (missing.length > 0) {
    next.subjects = [...subjects, ...missing] as unknown as Obj[];
    changed = true;
  }
  return changed ? next : undefined;
}

const isCode = (err: unknown, code: number): boolean => err instanceof ApiError && err.code === code;

/** One object: create it, or reconcile what is stored, retrying when a write races another. */
async function reconcileOne(
  rest: RestStorage,
  t: ResourceType,
  expected: PolicyRole | PolicyBinding,
): Promise<ReconcileOperation> {
  const { name, namespace } = expected.metadata;
  for (let attempt = 1; ; attempt++) {
    try {
      const stored = rest.store.get(rest.key(t, namespace, name));
      if (!stored) {
        await rest.create(t, namespace, clone(expected) as unknown as Obj, WRITE);
        return 'create';
      }
      const existing = stored.object as Obj;
      const next =
        expected.kind === 'ClusterRole' || expected.kind === 'Role'
          ? reconciledRole(existing, expected as PolicyRole)
          : reconciledBinding(existing, expected as PolicyBinding);
      if (next === undefined) return 'none';
      if (labelsOf(existing, 'annotations')[AUTOUPDATE_ANNOTATION] === 'false') return 'protected';
      if (next === 'recreate') {
        await rest.delete(t, namespace, name, {}, WRITE);
        await rest.create(t, namespace, clone(expected) as unknown as Obj, WRITE);
        return 'recreate';
      }
      await rest.update(t, namespace, name, next, undefined, WRITE);
      return 'update';
    } catch (err) {
      // Created, changed or deleted meanwhile: read it again (`RetryOnConflict`, `o.run(attempts+1)`).
      if (attempt < ATTEMPTS && (isCode(err, 409) || isCode(err, 404))) continue;
      throw err;
    }
  }
}

/**
 * Keeps the bootstrap policy in the cluster, in the hook's order: ClusterRoles, ClusterRoleBindings,
 * Roles, RoleBindings. Returns what it did to each object (`kind/namespace/name` → operation).
 */
export async function reconcileBootstrapPolicy(
  rest: RestStorage,
  registry: Registry,
  options: { policy?: BootstrapPolicy; log?: ReconcileLog } = {},
): Promise<Map<string, ReconcileOperation>> {
  const policy = options.policy ?? bootstrapPolicy();
  const done = new Map<string, ReconcileOperation>();
  const groups: [string, (PolicyRole | PolicyBinding)[]][] = [
    ['clusterroles', policy.clusterRoles],
    ['clusterrolebindings', policy.clusterRoleBindings],
    ['roles', policy.roles],
    ['rolebindings', policy.roleBindings],
  ];
  const work: { resource: string; expected: PolicyRole | PolicyBinding; t: ResourceType }[] = [];
  for (const [resource, objects] of groups) {
    const t = registry.lookup('rbac.authorization.k8s.io', 'v1', resource);
    if (t) for (const expected of objects) work.push({ resource, expected, t });
  }
  // The objects are independent (a binding may name a role not yet there): written together,
  // in the hook's order, a durable store commits them in one group commit, not one fsync each.
  const ops = await Promise.all(work.map((w) => reconcileOne(rest, w.t, w.expected)));
  work.forEach(({ resource, expected }, i) => {
    const op = ops[i] ?? 'none';
    const { name, namespace } = expected.metadata;
    done.set(`${expected.kind}/${namespace ? `${namespace}/` : ''}${name}`, op);
    if (op === 'protected')
      options.log?.('warn', `skipped reconcile-protected ${resource} with missing permissions`, {
        name,
        namespace,
      });
  });
  return done;
}
