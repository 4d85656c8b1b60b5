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
    // Strings (the usual set items) are keyed as themselves, apart from every JSON text.
    const k = x === UNSPECIFIED ? '\u0000unspecified' : typeof x === 'string' ? `\u0001${x}` : goJSON(x);
    const times = seen.get(k) ?? 0;
    if (times === 1) out.push(i);
    seen.set(k, times + 1);
  });
  return out;
}

const UNSPECIFIED = Symbol('unspecified');

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

/**
 * The part of a schema that holds set or map lists: only these nodes are walked (most of an
 * object lies elsewhere). Built once per schema node.
 */
interface ListPlan {
  s: Structural;
  items?: ListPlan;
  props?: [key: string, plan: ListPlan][];
  addl?: ListPlan;
}

const plans = new WeakMap<Structural, ListPlan | null>();

function planFor(s: Structural | undefined): ListPlan | undefined {
  if (!s) return undefined;
  let p = plans.get(s);
  if (p === undefined) {
    const items = planFor(s.items);
    const props = Object.entries(s.properties ?? {}).flatMap(([k, sub]) => {
      const sp = planFor(sub);
      return sp ? [[k, sp] as [string, ListPlan]] : [];
    });
    const addl = planFor(s.additionalProperties?.schema);
    p =
      s.listType === 'set' || s.listType === 'map' || items || props.length > 0 || addl
        ? { s, ...(items && { items }), ...(props.length > 0 && { props }), ...(addl && { addl }) }
        : null;
    plans.set(s, p);
  }
  return p ?? undefined;
}

function validateAny(path: string, p: ListPlan, x: unknown, errs: StatusCause[]): void {
  if (Array.isArray(x)) validateArray(path, p, x, errs);
  else if (isObj(x)) validateObject(path, p, x, errs);
}

function validateArray(path: string, p: ListPlan, obj: unknown[], errs: StatusCause[]): void {
  const s = p.s;
  if (s.listType === 'set') {
    for (const i of nonUnique(obj)) errs.push(fieldErrors.duplicate(`${path}[${i}]`, goBadValue(obj[i])));
  } else if (s.listType === 'map') {
    validateListMap(path, s, obj, errs);
  }
  const items = p.items;
  if (items)
    for (let i = 0; i < obj.length; i++) {
      validateAny(`${path}[${i}]`, items, obj[i], errs);
    }
}

function validateObject(path: string, p: ListPlan, obj: Record<string, unknown>, errs: StatusCause[]): void {
  if (p.addl) for (const [k, v] of Object.entries(obj)) validateAny(`${path}[${k}]`, p.addl, v, errs);
  if (p.props) {
    for (const [k, sub] of p.props) {
      if (Object.hasOwn(obj, k)) validateAny(path ? `${path}.${k}` : k, sub, obj[k], errs);
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
  const p = planFor(s);
  if (p && isObj(obj)) validateObject(path, p, obj, errs);
  return errs;
}
