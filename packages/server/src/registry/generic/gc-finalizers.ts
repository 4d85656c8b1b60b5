/**
 * The finalizers a DELETE leaves on an object for the garbage collector (`orphan`,
 * `foregroundDeletion`), as kube's generic registry (`registry.Store`) sets them.
 */
import type { Obj } from '../../util/object.js';
import type { DeleteParams } from './admission-options.js';

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

export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

/** Sets `metadata.finalizers`, or removes it when there are none. */
export function setFinalizers(m: Obj, finalizers: string[]): void {
  if (finalizers.length > 0) m.finalizers = finalizers;
  else delete m.finalizers;
}
