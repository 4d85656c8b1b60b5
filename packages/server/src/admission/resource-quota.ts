/**
 * kube-apiserver's ResourceQuota admission plugin (k8s.io/apiserver's
 * `admission/plugin/resourcequota`): a write that would take a namespace over one of its
 * ResourceQuotas is refused with the quota's numbers, one whose usage the quota controller has not
 * counted yet is refused as "status unknown", a pod without the CPU or memory requests a quota
 * tracks is refused, and an admitted write charges its usage to the quotas at once (the quota
 * controller recounts from the stored objects later).
 */
import {
  formatQuotaAmount,
  milli,
  podQuotaConstraints,
  type QuotaAmount,
  quotaMatches,
  quotaUsage,
} from 'kubeloop/api';
import { podQOS } from '../registry/core/podspec-defaults.js';
import type { ResourceType } from '../registry/types.js';
import { collectionPrefix, type Store } from '../storage/store.js';
import type { StoredObject } from '../storage/types.js';
import { clone, isObject, type Obj } from '../util/object.js';
import { admissionForbidden } from './forbidden.js';

type Resources = Record<string, string>;
const resources = (v: unknown): Resources => (isObject(v) ? (v as Resources) : {});

/** `k=v,k=v` sorted by name, as the plugin's `prettyPrint`. */
const pretty = (m: Resources): string =>
  Object.keys(m)
    .sort()
    .map((k) => `${k}=${m[k]}`)
    .join(',');

/** The scope requirements of a quota: its `scopes` (as Exists) and its `scopeSelector`. */
function scopeRequirements(quota: Obj): { scopeName: string; operator: string; values: string[] }[] {
  const spec = isObject(quota.spec) ? quota.spec : {};
  const out = (Array.isArray(spec.scopes) ? spec.scopes : []).map((s) => ({
    scopeName: String(s),
    operator: 'Exists',
    values: [] as string[],
  }));
  const selector = isObject(spec.scopeSelector) ? spec.scopeSelector : {};
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isObject(e)) continue;
    out.push({
      scopeName: String(e.scopeName ?? ''),
      operator: String(e.operator ?? ''),
      values: Array.isArray(e.values) ? e.values.map(String) : [],
    });
  }
  return out;
}

/** Whether a pod has affinity terms that reach other namespaces. */
function crossNamespaceAffinity(spec: Obj): boolean {
  const affinity = isObject(spec.affinity) ? spec.affinity : {};
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = isObject(affinity[kind]) ? affinity[kind] : {};
    const terms = [
      ...(Array.isArray(a.requiredDuringSchedulingIgnoredDuringExecution)
        ? a.requiredDuringSchedulingIgnoredDuringExecution
        : []),
      ...(Array.isArray(a.preferredDuringSchedulingIgnoredDuringExecution)
        ? a.preferredDuringSchedulingIgnoredDuringExecution.map((w) =>
            isObject(w) ? w.podAffinityTerm : undefined,
          )
        : []),
    ];
    for (const t of terms) {
      if (!isObject(t)) continue;
      if ((Array.isArray(t.namespaces) && t.namespaces.length > 0) || t.namespaceSelector !== undefined)
        return true;
    }
  }
  return false;
}

/** Whether a quota's scopes take in `obj` (only pods have scopes; a scoped quota matches no other kind). */
function inScope(quota: Obj, t: ResourceType, obj: Obj): boolean {
  const requirements = scopeRequirements(quota);
  if (requirements.length === 0) return true;
  if (!(t.group === '' && t.resource === 'pods')) return false;
  const spec = isObject(obj.spec) ? obj.spec : {};
  return requirements.every(({ scopeName, operator, values }) => {
    switch (scopeName) {
      case 'Terminating':
        return typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0;
      case 'NotTerminating':
        return !(typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0);
      case 'BestEffort':
        return podQOS(spec) === 'BestEffort';
      case 'NotBestEffort':
        return podQOS(spec) !== 'BestEffort';
      case 'CrossNamespacePodAffinity':
        return crossNamespaceAffinity(spec);
      case 'PriorityClass': {
        // A label selector over the one label `PriorityClass=<the pod's class>`.
        const cls = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
        if (operator === 'In') return values.includes(cls);
        if (operator === 'NotIn') return !values.includes(cls);
        if (operator === 'Exists') return true;
        return false;
      }
      default:
        return false;
    }
  });
}

/** The sum of a stored quantity and an amount, printed in the stored one's format. */
function plus(used: string | undefined, add: QuotaAmount): string {
  const base = used ?? '0';
  const binary = /[KMGTPE]i$/.test(base.trim()) || ((milli(base) ?? 0) === 0 && add.binary);
  return formatQuotaAmount({ m: (milli(base) ?? 0) + add.m, binary });
}

const ALL_QUOTAS = collectionPrefix('', 'resourcequotas');

/** The ResourceQuota admission plugin over `store`'s quotas. */
export function resourceQuotaAdmission(store: Store) {
  // Synchronous (no promise) for a write no quota applies to, so that the admission chain goes
  // on in the same tick, as it does through the other plugins.
  return (
    op: 'CREATE' | 'UPDATE' | 'DELETE',
    t: ResourceType,
    obj: Obj,
    old: Obj | undefined,
    options: { dryRun?: boolean } = {},
  ): Promise<void> | undefined => {
    if (!t.namespaced || op === 'DELETE') return;
    // Only these kinds change usage on update (a Service's type and ports, a claim's size).
    if (
      op === 'UPDATE' &&
      !(t.group === '' && (t.resource === 'services' || t.resource === 'persistentvolumeclaims'))
    )
      return;
    // No ResourceQuota anywhere (the usual case): nothing to look up for the namespace.
    if (!store.has(ALL_QUOTAS)) return;
    const namespace = isObject(obj.metadata) ? String(obj.metadata.namespace ?? '') : '';
    if (!namespace) return;
    const prefix = collectionPrefix('', 'resourcequotas', namespace);
    if (!store.has(prefix)) return;
    return charge(store, op, t, obj, old, options, store.list(prefix).items);
  };
}

/** Checks a write against the namespace's `quotas` and charges it to them (their status' `used`). */
async function charge(
  store: Store,
  op: 'CREATE' | 'UPDATE',
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  options: { dryRun?: boolean },
  listed: readonly StoredObject[],
): Promise<void> {
  const quotas = listed.slice().sort((a, b) => String(a.key).localeCompare(String(b.key)));
  // What the write adds: its usage, less what the object used before (never below zero).
  const usage = quotaUsage(t.group, t.resource, obj);
  if (op === 'UPDATE' && old) {
    const before = quotaUsage(t.group, t.resource, old);
    for (const [k, v] of usage)
      usage.set(k, { m: Math.max(0, v.m - (before.get(k)?.m ?? 0)), binary: v.binary });
  }

  const charges: { quota: StoredObject; used: Resources }[] = [];
  for (const stored of quotas) {
    const quota = stored.object as Obj;
    const name = isObject(quota.metadata) ? String(quota.metadata.name ?? '') : '';
    const status = isObject(quota.status) ? quota.status : {};
    const hard = resources(status.hard);
    const restricted = Object.keys(hard).filter((r) => quotaMatches(t.group, t.resource, r));
    if (restricted.length === 0 || !inScope(quota, t, obj)) continue;
    if (t.group === '' && t.resource === 'pods' && op === 'CREATE') {
      const missing = podQuotaConstraints(restricted, obj);
      if (missing) throw admissionForbidden(t, obj, `failed quota: ${name}: ${missing}`);
    }
    const used = resources(status.used);
    if (restricted.some((r) => used[r] === undefined)) {
      throw admissionForbidden(
        t,
        obj,
        `status unknown for quota: ${name}, resource: ${[...restricted].sort().join(',')}`,
      );
    }
    const requested: Resources = {};
    const next: Resources = { ...used };
    const exceeded: string[] = [];
    for (const r of restricted) {
      const add = usage.get(r);
      if (!add || add.m === 0) continue;
      requested[r] = formatQuotaAmount(add);
      next[r] = plus(used[r], add);
      if ((milli(next[r]) ?? 0) > (milli(hard[r]) ?? 0)) exceeded.push(r);
    }
    if (Object.keys(requested).length === 0) continue;
    if (exceeded.length > 0) {
      const only = (m: Resources) => Object.fromEntries(exceeded.map((r) => [r, m[r] ?? '0']));
      throw admissionForbidden(
        t,
        obj,
        `exceeded quota: ${name}, requested: ${pretty(only(requested))}, used: ${pretty(only(used))}, limited: ${pretty(only(hard))}`,
      );
    }
    charges.push({ quota: stored, used: next });
  }
  if (options.dryRun) return;
  // Charged at once, as the plugin updates each quota's status before the write is stored.
  // Every charge is issued before any await, so no other write comes in between.
  await Promise.all(
    charges.map(({ quota, used }) => {
      const next = clone(quota.object as Obj);
      next.status = { ...(isObject(next.status) ? next.status : {}), used };
      return store.update(quota.key, next as StoredObject['object'], quota.revision);
    }),
  );
}
