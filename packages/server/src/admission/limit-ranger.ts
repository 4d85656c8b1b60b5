/**
 * kube-apiserver's LimitRanger admission plugin (`plugin/pkg/admission/limitranger`), over the
 * LimitRanges of the object's namespace: a new pod's containers get the `default` limits and
 * `defaultRequest` requests they leave out (recorded in the `kubernetes.io/limit-ranger`
 * annotation), then a new pod is refused when a container or the pod is under a `min`, over a
 * `max` or over a `maxLimitRequestRatio`, and a claim when its storage request is out of range —
 * with the plugin's messages. Pod updates are left alone (their containers cannot change).
 */
import { parseQuantity, type Quantity } from 'kubeloop/api';
import type { ResourceType } from '../registry/types.js';
import { collectionPrefix, type Store } from '../storage/store.js';
import { isObject, type Obj } from '../util/object.js';
import { admissionForbidden } from './forbidden.js';
import { actsOn, isCore } from './plugin-kinds.js';

type Resources = Record<string, string>;
const resources = (v: unknown): Resources => (isObject(v) ? (v as Resources) : {});
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObject) : []);

const ANNOTATION = 'kubernetes.io/limit-ranger';
/** `resource.MaxMilliValue`: quantities up to it compare in milli-units, larger ones in units. */
const MAX_MILLI_VALUE = 2n ** 63n / 1000n;

/** `requestLimitEnforcedValues`: the values compared, in milli-units unless the bound is huge. */
function scaled(q: Quantity, milliUnits: boolean): bigint {
  const n = milliUnits ? q.num * 1000n : q.num;
  // Value() and MilliValue() round up.
  return n % q.den === 0n ? n / q.den : n / q.den + (n > 0n ? 1n : 0n);
}

interface Bounds {
  req: Quantity | undefined;
  lim: Quantity | undefined;
  reqText: string | undefined;
  limText: string | undefined;
  milliUnits: boolean;
  enforced: Quantity;
}

function bounds(
  name: string,
  enforcedText: string,
  request: Resources,
  limit: Resources,
): Bounds | undefined {
  const enforced = parseQuantity(enforcedText);
  if (!enforced) return undefined;
  const reqText = request[name];
  const limText = limit[name];
  return {
    req: reqText === undefined ? undefined : parseQuantity(reqText),
    lim: limText === undefined ? undefined : parseQuantity(limText),
    reqText,
    limText,
    milliUnits: scaled(enforced, false) <= MAX_MILLI_VALUE,
    enforced,
  };
}

/** `minConstraint`. */
function min(
  type: string,
  name: string,
  enforced: string,
  request: Resources,
  limit: Resources,
): string | undefined {
  const b = bounds(name, enforced, request, limit);
  if (!b) return undefined;
  const e = scaled(b.enforced, b.milliUnits);
  if (!b.req) return `minimum ${name} usage per ${type} is ${enforced}.  No request is specified`;
  if (scaled(b.req, b.milliUnits) < e)
    return `minimum ${name} usage per ${type} is ${enforced}, but request is ${b.reqText}`;
  if (b.lim && scaled(b.lim, b.milliUnits) < e)
    return `minimum ${name} usage per ${type} is ${enforced}, but limit is ${b.limText}`;
  return undefined;
}

/** `maxConstraint`. */
function max(
  type: string,
  name: string,
  enforced: string,
  request: Resources,
  limit: Resources,
): string | undefined {
  const b = bounds(name, enforced, request, limit);
  if (!b) return undefined;
  const e = scaled(b.enforced, b.milliUnits);
  if (!b.lim) return `maximum ${name} usage per ${type} is ${enforced}.  No limit is specified`;
  if (scaled(b.lim, b.milliUnits) > e)
    return `maximum ${name} usage per ${type} is ${enforced}, but limit is ${b.limText}`;
  if (b.req && scaled(b.req, b.milliUnits) > e)
    return `maximum ${name} usage per ${type} is ${enforced}, but request is ${b.reqText}`;
  return undefined;
}

/** `maxRequestConstraint` (a claim's requests, which are all a claim states). */
function maxRequest(type: string, name: string, enforced: string, request: Resources): string | undefined {
  const b = bounds(name, enforced, request, {});
  if (!b) return undefined;
  if (!b.req) return `maximum ${name} usage per ${type} is ${enforced}.  No request is specified`;
  if (scaled(b.req, b.milliUnits) > scaled(b.enforced, b.milliUnits))
    return `maximum ${name} usage per ${type} is ${enforced}, but request is ${b.reqText}`;
  return undefined;
}

/** `limitRequestRatioConstraint`. */
function ratio(
  type: string,
  name: string,
  enforced: string,
  request: Resources,
  limit: Resources,
): string | undefined {
  const b = bounds(name, enforced, request, limit);
  if (!b) return undefined;
  const req = b.req ? scaled(b.req, b.milliUnits) : 0n;
  const lim = b.lim ? scaled(b.lim, b.milliUnits) : 0n;
  if (req === 0n)
    return `${name} max limit to request ratio per ${type} is ${enforced}, but no request is specified or request is 0`;
  if (lim === 0n)
    return `${name} max limit to request ratio per ${type} is ${enforced}, but no limit is specified or limit is 0`;
  const observed = Number(lim) / Number(req);
  const allowed = Number(b.enforced.num) / Number(b.enforced.den);
  if (observed > allowed)
    return `${name} max limit to request ratio per ${type} is ${enforced}, but provided ratio is ${observed.toFixed(6)}`;
  return undefined;
}

/** One bound's check: an error message, or undefined when the amounts keep within it. */
type Bound = (
  type: string,
  name: string,
  enforced: string,
  request: Resources,
  limit: Resources,
) => string | undefined;

/** The bounds of Container and Pod limit items. */
const POD_BOUNDS = [
  ['min', min],
  ['max', max],
  ['maxLimitRequestRatio', ratio],
] as const;
/** The bounds of PersistentVolumeClaim items: a claim states requests only, so `max` bounds the request. */
const CLAIM_BOUNDS = [
  ['min', min],
  ['max', maxRequest],
] as const;

/** The pod's requests and limits as one container (containers summed, the largest init container, overhead). */
function podTotals(spec: Obj): { requests: Resources; limits: Resources } {
  const total = (which: 'requests' | 'limits'): Resources => {
    const sums = new Map<string, Quantity>();
    const add = (a: Quantity | undefined, b: Quantity): Quantity =>
      a ? { num: a.num * b.den + b.num * a.den, den: a.den * b.den } : b;
    for (const c of objs(spec.containers)) {
      for (const [k, v] of Object.entries(
        resources(isObject(c.resources) ? c.resources[which] : undefined),
      )) {
        const q = parseQuantity(v);
        if (q) sums.set(k, add(sums.get(k), q));
      }
    }
    for (const c of objs(spec.initContainers)) {
      for (const [k, v] of Object.entries(
        resources(isObject(c.resources) ? c.resources[which] : undefined),
      )) {
        const q = parseQuantity(v);
        const cur = sums.get(k);
        if (q && (!cur || q.num * cur.den > cur.num * q.den)) sums.set(k, q);
      }
    }
    for (const [k, v] of Object.entries(resources(spec.overhead))) {
      const q = parseQuantity(v);
      if (q && sums.has(k)) sums.set(k, add(sums.get(k), q));
    }
    return Object.fromEntries([...sums].map(([k, q]) => [k, quantityText(q)]));
  };
  return { requests: total('requests'), limits: total('limits') };
}

/** A quantity's text in milli-units or units (enough for the messages of pod totals). */
function quantityText(q: Quantity): string {
  const m = (q.num * 1000n) / q.den;
  return m % 1000n === 0n ? String(m / 1000n) : `${m}m`;
}

/** The LimitRanger plugin's mutating part (defaults) and validating part (min, max, ratio). */
export function limitRanger(store: Store) {
  const itemsIn = (namespace: string, type: string): Obj[] =>
    store
      .list(collectionPrefix('', 'limitranges', namespace))
      .items.flatMap((lr) => objs(isObject(lr.object.spec) ? (lr.object.spec as Obj).limits : undefined))
      .filter((item) => item.type === type);
  const applies = (op: string, t: ResourceType, kind: 'pods' | 'persistentvolumeclaims') =>
    t.group === '' && t.resource === kind && (op === 'CREATE' || (op === 'UPDATE' && kind !== 'pods'));
  const namespaceOf = (obj: Obj) => (isObject(obj.metadata) ? String(obj.metadata.namespace ?? '') : '');

  /** Sets the defaults of the namespace's Container limit items on a new pod's containers. */
  const mutate = actsOn(
    (_op, t) => isCore(t, 'pods'),
    (op: 'CREATE' | 'UPDATE' | 'DELETE', t: ResourceType, obj: Obj): void => {
      if (!applies(op, t, 'pods')) return;
      const items = itemsIn(namespaceOf(obj), 'Container');
      if (items.length === 0) return;
      const spec = isObject(obj.spec) ? obj.spec : {};
      const notes: string[] = [];
      for (const [list, label] of [
        ['containers', 'container'],
        ['initContainers', 'init container'],
      ] as const) {
        for (const c of objs(spec[list])) {
          if (!isObject(c.resources)) c.resources = {};
          const r = c.resources as Obj;
          // What the pod's own defaulting (before admission, in kube-apiserver) already did: a
          // request left out is its limit.
          const userLimits = resources(r.limits);
          const limits: Resources = { ...userLimits };
          const requests: Resources = { ...resources(r.requests) };
          for (const [k, v] of Object.entries(userLimits)) if (requests[k] === undefined) requests[k] = v;
          const setLimits: string[] = [];
          const setRequests: string[] = [];
          for (const item of items) {
            for (const [k, v] of Object.entries(resources(item.default)))
              if (limits[k] === undefined) {
                limits[k] = v;
                setLimits.push(k);
              }
            for (const [k, v] of Object.entries(resources(item.defaultRequest)))
              if (requests[k] === undefined) {
                requests[k] = v;
                setRequests.push(k);
              }
          }
          if (setLimits.length === 0 && setRequests.length === 0) continue;
          r.limits = limits;
          r.requests = requests;
          if (setRequests.length > 0)
            notes.push(`${setRequests.sort().join(', ')} request for ${label} ${String(c.name ?? '')}`);
          if (setLimits.length > 0)
            notes.push(`${setLimits.sort().join(', ')} limit for ${label} ${String(c.name ?? '')}`);
        }
      }
      if (notes.length === 0) return;
      if (!isObject(obj.metadata)) obj.metadata = {};
      const m = obj.metadata as Obj;
      m.annotations = {
        ...resources(m.annotations),
        [ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}`,
      };
    },
  );

  /** Refuses a new pod or a claim outside the namespace's limits. */
  const validate = actsOn(
    (_op, t) => isCore(t, 'pods', 'persistentvolumeclaims'),
    (op: 'CREATE' | 'UPDATE' | 'DELETE', t: ResourceType, obj: Obj): void => {
      const errors: string[] = [];
      const check = (
        type: string,
        item: Obj,
        bounds: readonly (readonly [string, Bound])[],
        request: Resources,
        limit: Resources,
      ): void => {
        for (const [field, fn] of bounds) {
          const bound = resources(item[field]);
          for (const k of Object.keys(bound).sort()) {
            const e = fn(type, k, bound[k]!, request, limit);
            if (e) errors.push(e);
          }
        }
      };
      if (applies(op, t, 'pods')) {
        const spec = isObject(obj.spec) ? obj.spec : {};
        const ns = namespaceOf(obj);
        for (const item of itemsIn(ns, 'Container')) {
          for (const c of [...objs(spec.containers), ...objs(spec.initContainers)]) {
            const r = isObject(c.resources) ? c.resources : {};
            check('Container', item, POD_BOUNDS, resources(r.requests), resources(r.limits));
          }
        }
        const podItems = itemsIn(ns, 'Pod');
        if (podItems.length > 0) {
          const { requests, limits } = podTotals(spec);
          for (const item of podItems) check('Pod', item, POD_BOUNDS, requests, limits);
        }
      } else if (applies(op, t, 'persistentvolumeclaims')) {
        const spec = isObject(obj.spec) ? obj.spec : {};
        const requests = resources(isObject(spec.resources) ? spec.resources.requests : undefined);
        for (const item of itemsIn(namespaceOf(obj), 'PersistentVolumeClaim'))
          check('PersistentVolumeClaim', item, CLAIM_BOUNDS, requests, {});
      } else return;
      if (errors.length === 0) return;
      // utilerrors.NewAggregate: one error as it is, several in brackets.
      const message = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
      throw admissionForbidden(t, obj, message);
    },
  );

  return { mutate, validate };
}
