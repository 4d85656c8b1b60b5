import type { JsonObject as Obj } from '../../api/object.js';

/**
 * Structural equality and JSON merge patches between two versions of an object.
 */

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Deep equality of JSON values; a field set to `undefined` equals a missing one.
 *
 * @example
 * ```ts
 * deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }], c: undefined }); // true
 * ```
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isObj(a) && isObj(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!deepEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

/**
 * The JSON merge patch (RFC 7386) turning `from` into `to`: changed fields, `null` for removed
 * ones; `undefined` when they are equal.
 *
 * @example
 * ```ts
 * mergePatchBetween({ a: 1, b: 2 }, { a: 1, c: 3 }); // { b: null, c: 3 }
 * ```
 */
export function mergePatchBetween(from: unknown, to: unknown): unknown {
  if (deepEqual(from, to)) return undefined;
  if (!isObj(from) || !isObj(to)) return to === undefined ? null : to;
  const patch: Obj = {};
  for (const k of new Set([...Object.keys(from), ...Object.keys(to)])) {
    if (to[k] === undefined) {
      if (from[k] !== undefined) patch[k] = null;
      continue;
    }
    const p = mergePatchBetween(from[k], to[k]);
    if (p !== undefined) patch[k] = p;
  }
  return patch;
}
