/**
 * What objects count against a ResourceQuota, as kube's quota evaluators
 * (`pkg/quota/v1/evaluator/core`) count them: shared by the ResourceQuota admission plugin (the
 * usage one new object adds) and the resource quota controller (a namespace's total).
 */
import { formatMilli, isBinary, milli } from './quantity.js';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const objs = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** The sum of amounts: binary when every amount that is not zero was. */
export function sumQuotaAmounts(amounts: Iterable<QuotaAmount | undefined>): QuotaAmount {
  let m = 0;
  let binary = true;
  let any = false;
  for (const a of amounts) {
    if (!a || a.m === 0) continue;
    m += a.m;
    binary &&= a.binary;
    any = true;
  }
  return { m, binary: any && binary };
}

/** An amount in milli-units, and whether its quantities were written binary (`Mi`), to print it alike. */
export interface QuotaAmount {
  readonly m: number;
  readonly binary: boolean;
}

/** The text of an amount, as its quantities would print (`500m`, `1Gi`, `3`). */
export const formatQuotaAmount = (a: QuotaAmount): string => formatMilli(a.m, a.binary && a.m > 0);

/** The kinds the short names of object counts stand for (`pods` is `count/pods`). */
export const LEGACY_QUOTA_COUNTS: readonly string[] = [
  'pods',
  'services',
  'configmaps',
  'secrets',
  'persistentvolumeclaims',
  'replicationcontrollers',
  'resourcequotas',
];

/** A pod that still uses its resources (kube's `QuotaV1Pod`: not terminal). */
export const podChargedByQuota = (pod: Json): boolean => {
  const phase = isObj(pod.status) ? pod.status.phase : undefined;
  return phase !== 'Succeeded' && phase !== 'Failed';
};

/**
 * A pod's request or limit of a resource (`cpu`, `memory`, `ephemeral-storage`…): the larger of
 * its containers' sum and any one init container's, plus the pod overhead. A request a container
 * leaves out defaults to its limit.
 */
export function podQuotaAmount(pod: Json, which: 'requests' | 'limits', name: string): QuotaAmount {
  const spec = isObj(pod.spec) ? pod.spec : {};
  const of = (c: Json): string | number | undefined => {
    const resources = isObj(c.resources) ? c.resources : {};
    const pick = (r: unknown) => (isObj(r) ? (r[name] as string | number | undefined) : undefined);
    return pick(resources[which]) ?? (which === 'requests' ? pick(resources.limits) : undefined);
  };
  let sum = 0;
  let binary = false;
  for (const c of objs(spec.containers)) {
    const v = of(c);
    sum += milli(v) ?? 0;
    binary ||= isBinary(v);
  }
  for (const c of objs(spec.initContainers)) {
    const v = of(c);
    sum = Math.max(sum, milli(v) ?? 0);
    binary ||= isBinary(v);
  }
  const overhead = isObj(spec.overhead) ? (spec.overhead[name] as string | number | undefined) : undefined;
  sum += milli(overhead) ?? 0;
  return { m: sum, binary };
}

const one: QuotaAmount = { m: 1000, binary: false };

/** `resource` counted as `count/<resource>[.<group>]`. */
const countName = (group: string, resource: string) => `count/${group ? `${resource}.${group}` : resource}`;

/**
 * The usage one object of `group`/`resource` adds to its namespace's quotas, by quota resource
 * name (`pods`, `count/pods`, `requests.cpu`, `services.nodeports`,
 * `<class>.storageclass.storage.k8s.io/requests.storage`, `count/widgets.example.com`…). A
 * terminal pod uses nothing.
 */
export function quotaUsage(group: string, resource: string, obj: Json): Map<string, QuotaAmount> {
  const out = new Map<string, QuotaAmount>();
  if (group === '' && resource === 'pods') {
    // Every stored pod counts as `count/pods`; a terminal one uses no `pods` nor compute.
    out.set('count/pods', one);
    if (!podChargedByQuota(obj)) return out;
    out.set('pods', one);
    const spec = isObj(obj.spec) ? obj.spec : {};
    const names = new Set<string>();
    for (const c of [...objs(spec.containers), ...objs(spec.initContainers)]) {
      const resources = isObj(c.resources) ? c.resources : {};
      for (const r of [resources.requests, resources.limits])
        if (isObj(r)) for (const k of Object.keys(r)) names.add(k);
    }
    for (const name of names) {
      const requests = podQuotaAmount(obj, 'requests', name);
      const limits = podQuotaAmount(obj, 'limits', name);
      const hasLimit = objs(spec.containers)
        .concat(objs(spec.initContainers))
        .some(
          (c) => isObj(c.resources) && isObj(c.resources.limits) && c.resources.limits[name] !== undefined,
        );
      if (
        name === 'cpu' ||
        name === 'memory' ||
        name === 'ephemeral-storage' ||
        name.startsWith('hugepages-')
      )
        out.set(name, requests);
      out.set(`requests.${name}`, requests);
      if (hasLimit && (name === 'cpu' || name === 'memory' || name === 'ephemeral-storage'))
        out.set(`limits.${name}`, limits);
    }
    return out;
  }
  out.set(countName(group, resource), one);
  if (group === '' && LEGACY_QUOTA_COUNTS.includes(resource)) out.set(resource, one);
  if (group === '' && resource === 'services') {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const type = spec.type;
    if (type === 'LoadBalancer') out.set('services.loadbalancers', one);
    if (type === 'NodePort' || type === 'LoadBalancer') {
      const ports = objs(spec.ports).length;
      out.set('services.nodeports', { m: ports * 1000, binary: false });
    }
  }
  if (group === '' && resource === 'persistentvolumeclaims') {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const requests = isObj(spec.resources) && isObj(spec.resources.requests) ? spec.resources.requests : {};
    const storage = requests.storage as string | number | undefined;
    const amount = { m: milli(storage) ?? 0, binary: isBinary(storage) };
    out.set('requests.storage', amount);
    const cls = typeof spec.storageClassName === 'string' ? spec.storageClassName : '';
    if (cls) {
      out.set(`${cls}.storageclass.storage.k8s.io/requests.storage`, amount);
      out.set(`${cls}.storageclass.storage.k8s.io/persistentvolumeclaims`, one);
    }
  }
  return out;
}

/** The quota resources whose tracking makes each container state its own request or limit. */
const CONSTRAINED = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

/**
 * The pod evaluator's `Constraints`: when a quota tracks CPU or memory, every container must
 * request (or limit) them, which a quota's refusal reports as `must specify limits.cpu for: c;
 * requests.memory for: a,b`. Undefined when the pod complies.
 */
export function podQuotaConstraints(tracked: readonly string[], pod: Json): string | undefined {
  const required = CONSTRAINED.filter((r) => tracked.includes(r));
  if (required.length === 0) return undefined;
  const spec = isObj(pod.spec) ? pod.spec : {};
  const missing = new Map<string, Set<string>>();
  for (const c of [...objs(spec.containers), ...objs(spec.initContainers)]) {
    const resources = isObj(c.resources) ? c.resources : {};
    const requests = isObj(resources.requests) ? resources.requests : {};
    const limits = isObj(resources.limits) ? resources.limits : {};
    const has = new Set<string>();
    for (const n of ['cpu', 'memory']) {
      if (requests[n] !== undefined) has.add(n).add(`requests.${n}`);
      if (limits[n] !== undefined) has.add(`limits.${n}`);
    }
    for (const r of required) {
      if (has.has(r)) continue;
      const names = missing.get(r) ?? new Set<string>();
      names.add(String(c.name ?? ''));
      missing.set(r, names);
    }
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()]
    .sort()
    .map((r) => `${r} for: ${[...(missing.get(r) ?? [])].sort().join(',')}`);
  return `must specify ${parts.join('; ')}`;
}

const POD_COMPUTE =
  /^(?:(?:requests|limits)\.)?(?:cpu|memory|ephemeral-storage)$|^(?:requests\.)?hugepages-|^requests\./;
const CLASS_STORAGE = /^.+\.storageclass\.storage\.k8s\.io\/(?:requests\.storage|persistentvolumeclaims)$/;

/**
 * Whether a quota resource name is one the evaluator of `group`/`resource` tracks (its
 * `MatchingResources`): such a quota concerns every object of that kind, whether or not the
 * object uses the resource (a pod that states no CPU limit under a `limits.cpu` quota is refused).
 */
export function quotaMatches(group: string, resource: string, name: string): boolean {
  if (name === countName(group, resource)) return true;
  if (group !== '') return false;
  if (LEGACY_QUOTA_COUNTS.includes(resource) && name === resource) return true;
  if (resource === 'pods') return POD_COMPUTE.test(name) && name !== 'requests.storage';
  if (resource === 'services') return name === 'services.loadbalancers' || name === 'services.nodeports';
  if (resource === 'persistentvolumeclaims') return name === 'requests.storage' || CLASS_STORAGE.test(name);
  return false;
}
