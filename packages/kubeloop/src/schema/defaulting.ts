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
      const prop = s.properties?.[k] ?? s.additionalProperties?.schema;
      if (!prop) continue;
      if (x[k] === null && prop.default === undefined && !prop.nullable) {
        delete x[k];
        continue;
      }
      pruneNonNullableNullsWithoutDefaults(x[k], prop);
    }
  } else if (Array.isArray(x)) {
    for (const v of x) pruneNonNullableNullsWithoutDefaults(v, s.items);
  }
}

/**
 * Applies the schema's defaults to `x` in place (apiextensions `defaulting.Default`): a
 * property with a default is set when absent or `null` (and not nullable); objects inside
 * arrays and additionalProperties values are defaulted too, and a non-nullable `null` list
 * item or map value takes the item/value schema's default.
 */
export function defaultValue(x: unknown, s: Structural | undefined): void {
  if (!s) return;
  if (isObj(x)) {
    if (s.properties) {
      for (const k in s.properties) {
        const prop = s.properties[k] as Structural;
        if (prop.default === undefined) continue;
        if (!Object.hasOwn(x, k) || isNonNullableNull(x[k], prop)) x[k] = deepCopyJSON(prop.default);
      }
    }
    for (const k of Object.keys(x)) {
      const prop = s.properties?.[k];
      if (prop) defaultValue(x[k], prop);
      else if (s.additionalProperties) {
        const ap = s.additionalProperties.schema;
        if (ap && isNonNullableNull(x[k], ap) && ap.default !== undefined) x[k] = deepCopyJSON(ap.default);
        defaultValue(x[k], ap);
      }
    }
  } else if (Array.isArray(x)) {
    const items = s.items;
    for (let i = 0; i < x.length; i++) {
      if (items && isNonNullableNull(x[i], items) && items.default !== undefined)
        x[i] = deepCopyJSON(items.default);
      defaultValue(x[i], items);
    }
  }
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
