/**
 * The uniqueness invariants of `x-kubernetes-list-type: set` and `map` lists (apiextensions
 * `schema/listtype`): duplicate set items and duplicate map keys are `Duplicate value` errors.
 */
import type { StatusCause } from '../api/status.js';
import { fieldErrors } from '../api/validation.js';
import type { Structural } from './structural.js';
import { goBadValue, goJSON, isObj } from './util.js';

// Indices of the second occurrence of each repeated value (kube reports each value once).
function nonUnique(values: readonly unknown[]): number[] {
  if (values.length <= 1) return [];
  const seen = new Map<string, number>();
  const out: number[] = [];
  values.forEach((x, i) => {
    const k = x === UNSPECIFIED ? '\u0000unspecified' : goJSON(x);
    const times = seen.get(k) ?? 0;
    if (times === 1) out.push(i);
    seen.set(k, times + 1);
  });
  return out;
}

const UNSPECIFIED = Symbol('unspecified');

function validateArray(path: string, s: Structural, obj: unknown[], errs: StatusCause[]): void {
  if (s.listType === 'set') {
    for (const i of nonUnique(obj)) errs.push(fieldErrors.duplicate(`${path}[${i}]`, goBadValue(obj[i])));
  } else if (s.listType === 'map') {
    validateListMap(path, s, obj, errs);
  }
  if (s.items)
    obj.forEach((x, i) => {
      validateAny(`${path}[${i}]`, s.items as Structural, x, errs);
    });
}

function validateListMap(path: string, s: Structural, obj: unknown[], errs: StatusCause[]): void {
  for (let i = 0; i < obj.length; i++) {
    const x = obj[i];
    if (x !== null && !isObj(x)) {
      errs.push(
        fieldErrors.invalid(
          `${path}[${i}]`,
          goBadValue(x),
          'must be an object for an array of list-type map',
        ),
      );
      return;
    }
  }
  if (obj.length <= 1) return;
  const keys = s.listMapKeys ?? [];
  if (keys.length === 1) {
    const kf = keys[0] as string;
    const vals = obj.map((x) => (isObj(x) && Object.hasOwn(x, kf) ? x[kf] : UNSPECIFIED));
    for (const i of nonUnique(vals)) {
      const v = vals[i];
      errs.push(fieldErrors.duplicate(`${path}[${i}]`, goBadValue(v === UNSPECIFIED ? {} : { [kf]: v })));
    }
    return;
  }
  const vals = obj.map((x) => {
    const key: Record<string, unknown> = {};
    if (isObj(x)) for (const kf of keys) if (Object.hasOwn(x, kf)) key[kf] = x[kf];
    return key;
  });
  for (const i of nonUnique(vals)) errs.push(fieldErrors.duplicate(`${path}[${i}]`, goBadValue(vals[i])));
}

function validateAny(path: string, s: Structural, x: unknown, errs: StatusCause[]): void {
  if (Array.isArray(x)) validateArray(path, s, x, errs);
  else if (isObj(x)) validateObject(path, s, x, errs);
}

function validateObject(
  path: string,
  s: Structural,
  obj: Record<string, unknown>,
  errs: StatusCause[],
): void {
  const ap = s.additionalProperties?.schema;
  if (ap) for (const [k, v] of Object.entries(obj)) validateAny(`${path}[${k}]`, ap, v, errs);
  if (s.properties) {
    for (const [k, v] of Object.entries(obj)) {
      const sub = s.properties[k];
      if (sub) validateAny(path ? `${path}.${k}` : k, sub, v, errs);
    }
  }
}

/**
 * Validates the set and map list invariants of an object (apiextensions
 * `ValidateListSetsAndMaps`).
 *
 * @example
 * ```ts
 * validateListSetsAndMaps(structural, { spec: { tags: ['a', 'a'] } });
 * // [{ field: 'spec.tags[1]', reason: 'FieldValueDuplicate', message: 'Duplicate value: "a"' }]
 * ```
 */
export function validateListSetsAndMaps(s: Structural, obj: unknown, path = ''): StatusCause[] {
  const errs: StatusCause[] = [];
  if (isObj(obj)) validateObject(path, s, obj, errs);
  return errs;
}
