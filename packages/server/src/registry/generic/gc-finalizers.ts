/**
 * What a DELETE does to an object, as kube's generic registry (`registry.Store`) decides it:
 * the grace period (`BeforeDelete`), the finalizers it leaves for the garbage collector
 * (`orphan`, `foregroundDeletion`), and whether the object goes now or waits.
 */
import { clone, meta, type Obj, timestamp } from '../../util/object.js';
import type { ResourceType } from '../types.js';
import type { DeleteParams } from './admission-options.js';

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/**
 * A DELETE's step on `obj` (`grace`: the kind's grace period for this request; `waits`: whether
 * the object waits for more than its finalizers, as a Namespace does): `keep` it as it is, write
 * the returned object (a deletion that starts or changes), or `remove` it now.
 */
export function deletionStep(
  t: ResourceType,
  obj: Obj,
  opts: DeleteParams,
  grace: number,
  waits: boolean,
): 'keep' | 'remove' | Obj {
  const m = obj.metadata as Obj;
  const finalizers = strings(m.finalizers);
  const gc = gcFinalizers(t.behaviour.storage?.garbageCollectionPolicy, finalizers, opts);
  // The kind's own finalizers (a CRD's cleanup) join when the deletion starts.
  const wanted = m.deletionTimestamp
    ? gc
    : [...gc, ...(t.deletionFinalizers ?? []).filter((f) => !gc.includes(f))];
  if (grace > 0) {
    const existing =
      typeof m.deletionGracePeriodSeconds === 'number' ? m.deletionGracePeriodSeconds : undefined;
    // A second delete may only shorten the grace period (BeforeDelete).
    if (m.deletionTimestamp && (existing === undefined || grace >= existing)) return 'keep';
    const start = m.deletionTimestamp
      ? Date.parse(String(m.deletionTimestamp)) - (existing ?? 0) * 1000
      : Date.now();
    const next = clone(obj) as Obj;
    const nm = meta(next);
    nm.deletionTimestamp = timestamp(new Date(start + grace * 1000));
    nm.deletionGracePeriodSeconds = grace;
    setFinalizers(nm, wanted);
    return next;
  }
  if (m.deletionTimestamp) {
    // A deletion under way without a grace period (BeforeDelete lets it through): the
    // finalizers follow this request's propagation policy, and with none left the object goes now.
    if (waits || (wanted.length > 0 && sameSet(wanted, finalizers))) return 'keep';
    if (wanted.length === 0) return 'remove';
    const next = clone(obj) as Obj;
    setFinalizers(meta(next), wanted);
    return next;
  }
  if (wanted.length === 0 && !waits) return 'remove';
  const next = clone(obj) as Obj;
  const nm = meta(next);
  nm.deletionTimestamp = timestamp();
  nm.deletionGracePeriodSeconds = 0;
  setFinalizers(nm, wanted);
  if (typeof nm.generation === 'number' && nm.generation > 0) nm.generation += 1;
  t.behaviour.storage?.onDeletionStart?.(next);
  return next;
}

/**
 * kube's `deletionFinalizersForGarbageCollection`: the object's finalizers with `orphan` and
 * `foregroundDeletion` as the request's options say, else as the object's own say, else as the
 * kind's default policy says; unchanged (the same array) when the set is the same.
 */
export function gcFinalizers(
  policy: 'OrphanDependents' | 'Unsupported' | undefined,
  finalizers: string[],
  opts: DeleteParams,
): string[] {
  const first = finalizers.find((f) => f === 'orphan' || f === 'foregroundDeletion');
  const p = opts.propagationPolicy;
  const orphan =
    policy !== 'Unsupported' &&
    (opts.orphanDependents ??
      (p ? p === 'Orphan' : first ? first === 'orphan' : policy === 'OrphanDependents'));
  const foreground =
    policy !== 'Unsupported' &&
    opts.orphanDependents === undefined &&
    (p ? p === 'Foreground' : first === 'foregroundDeletion');
  const out = finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion');
  if (orphan) out.push('orphan');
  if (foreground) out.push('foregroundDeletion');
  return sameSet(out, finalizers) ? finalizers : out;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

/** Sets `metadata.finalizers`, or removes it when there are none. */
function setFinalizers(m: Obj, finalizers: string[]): void {
  if (finalizers.length > 0) m.finalizers = finalizers;
  else delete m.finalizers;
}
