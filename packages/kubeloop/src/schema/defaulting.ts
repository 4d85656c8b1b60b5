/**
 * Defaulting of custom resources (apiextensions `schema/defaulting`): non-nullable nulls
 * without a default are dropped, then `default` values are applied top-down to objects that
 * exist, to list items and to additionalProperties values. Defaults are deep-copied.
 */
import type { Structural } from './structural.js';
import { deepCopyJSON, isObj } from './util.js';

const isNonNullableNull = (x: unknown, s: Structural | undefined): boolean =>
  x === null && s !== undefined && !s.nullable;

/**
 * Removes `null` values of non-nullable fields that have no default (apiextensions
 * `PruneNonNullableNullsWithoutDefaults`), so that they read as absent.
 */
export function pruneNonNullableNullsWithoutDefaults(x: unknown, s: Structural | undefined): void {
  if (!s) return;
  if (isObj(x)) {
    for (const k of Object.keys(x)) {
      const v = x[k];
      // Scalars hold no nulls below them: only nulls and containers need a look.
      if (v !== null && typeof v !== 'object') continue;
      const prop = s.properties?.[k] ?? s.additionalProperties?.schema;
      if (!prop) continue;
      if (v === null && prop.default === undefined && !prop.nullable) {
        delete x[k];
        continue;
      }
      pruneNonNullableNullsWithoutDefaults(v, prop);
    }
  } else if (Array.isArray(x)) {
    for (const v of x)
      if (v !== null && typeof v === 'object') pruneNonNullableNullsWithoutDefaults(v, s.items);
  }
}

/** Applies the defaults of one schema node (and below) to a value; absent when there are none. */
type Defaulter = (x: unknown) => void;

const defaulters = new WeakMap<Structural, Defaulter | null>();

/**
 * The defaulting of a schema node, built once: only properties with defaults and the subtrees
 * that hold some are visited (most of an object has none).
 */
function defaulterFor(s: Structural | undefined): Defaulter | undefined {
  if (!s) return undefined;
  let d = defaulters.get(s);
  if (d === undefined) {
    d = buildDefaulter(s) ?? null;
    defaulters.set(s, d);
  }
  return d ?? undefined;
}

function buildDefaulter(s: Structural): Defaulter | undefined {
  const props = Object.entries(s.properties ?? {});
  const withDefault = props.filter(([, p]) => p.default !== undefined);
  const children = props.flatMap(([k, p]) => {
    const d = defaulterFor(p);
    return d ? [[k, d] as const] : [];
  });
  const ap = s.additionalProperties?.schema;
  const apDefaulter = defaulterFor(ap);
  const apDefault = ap && ap.default !== undefined ? ap : undefined;
  const items = s.items;
  const itemsDefaulter = defaulterFor(items);
  const itemsDefault = items && items.default !== undefined ? items : undefined;
  const objectWork = withDefault.length > 0 || children.length > 0 || apDefaulter || apDefault;
  const arrayWork = itemsDefaulter || itemsDefault;
  if (!objectWork && !arrayWork) return undefined;
  return (x) => {
    if (isObj(x)) {
      for (const [k, prop] of withDefault) {
        if (!Object.hasOwn(x, k) || isNonNullableNull(x[k], prop)) x[k] = deepCopyJSON(prop.default);
      }
      for (const [k, d] of children) if (Object.hasOwn(x, k)) d(x[k]);
      if ((apDefaulter || apDefault) && ap) {
        for (const k of Object.keys(x)) {
          if (s.properties?.[k]) continue;
          if (apDefault && isNonNullableNull(x[k], ap)) x[k] = deepCopyJSON(ap.default);
          apDefaulter?.(x[k]);
        }
      }
    } else if (Array.isArray(x) && items) {
      for (let i = 0; i < x.length; i++) {
        if (itemsDefault && isNonNullableNull(x[i], items)) x[i] = deepCopyJSON(items.default);
        itemsDefaulter?.(x[i]);
      }
    }
  };
}

/**
 * Applies the schema's defaults to `x` in place (apiextensions `defaulting.Default`): a
 * property with a default is set when absent or `null` (and not nullable); objects inside
 * arrays and additionalProperties values are defaulted too, and a non-nullable `null` list
 * item or map value takes the item/value schema's default.
 */
export function defaultValue(x: unknown, s: Structural | undefined): void {
  defaulterFor(s)?.(x);
}

/**
 * Runs apiextensions' full defaulting of a custom resource in place: non-nullable nulls
 * without defaults are dropped, then defaults are applied.
 *
 * @example
 * ```ts
 * const obj = { spec: {} };
 * applyDefaultsStructural(toStructural({ type: 'object', properties: { spec: { type: 'object',
 *   properties: { replicas: { type: 'integer', default: 1 } } } } }), obj);
 * // obj.spec.replicas === 1
 * ```
 */
export function applyDefaultsStructural(s: Structural, obj: unknown): void {
  pruneNonNullableNullsWithoutDefaults(obj, s);
  defaultValue(obj, s);
}
