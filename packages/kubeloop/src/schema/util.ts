/**
 * Small helpers shared by the schema engine: JSON narrowing, Go value rendering (`%v` and
 * `%#v` as apimachinery prints bad values) and deep copy/equality of JSON values.
 */

import type { JsonObject as Obj } from '../api/object.js';
import { goQuote, type RawFieldValue, rawFieldValue } from '../api/validation.js';

/** A JSON object. */
export type { JsonObject as Obj } from '../api/object.js';

/** True for plain JSON objects (not arrays, not null). */
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON type name of a value as kube-openapi's type validator infers it. */
export function jsonTypeOf(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'number';
    case 'bigint':
      return 'integer';
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    default:
      return 'object';
  }
}

/**
 * Formats a float64 like Go's `%v` (`strconv.FormatFloat(f, 'g', -1, 64)` with the exponent
 * threshold fmt uses): `10`, `0.5`, `1e+06`, `1.5e-05`.
 */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  // Shortest round-trip digits, then Go's %g layout: with the shortest precision strconv
  // switches to exponent form when exp < -4 || exp >= 6 (so 1e6 prints as "1e+06").
  const [mant, expText] = n.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const abs = Math.abs(exp);
    return `${mant}e${sign}${abs < 10 ? `0${abs}` : abs}`;
  }
  const digits = mant.replace('-', '').replace('.', '');
  const neg = n < 0 ? '-' : '';
  if (exp >= digits.length - 1) return neg + digits + '0'.repeat(exp - digits.length + 1);
  if (exp >= 0) return `${neg}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  return `${neg}0.${'0'.repeat(-exp - 1)}${digits}`;
}

/** Formats a JSON number as Go prints the decoded value: int64 bare, float64 with `%v`. */
export const goNumberValue = (n: number): string => (Number.isInteger(n) ? String(n) : goFloat(n));

/**
 * Renders a decoded JSON value as Go's `%#v` does for `interface{}` values:
 * `map[string]interface {}{"a":1}`, `[]interface {}{"x", 2}`, `"s"`, `true`, `interface {}(nil)`.
 */
export function goSharpV(v: unknown, nested = false): string {
  if (v === null || v === undefined) return nested ? 'interface {}(nil)' : 'interface {}(nil)';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumberValue(v);
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map((x) => goSharpV(x, true)).join(', ')}}`;
  if (isObj(v)) {
    const keys = Object.keys(v).sort();
    return `map[string]interface {}{${keys.map((k) => `${goQuote(k)}:${goSharpV(v[k], true)}`).join(', ')}}`;
  }
  return String(v);
}

/**
 * The bad value of a field error as apimachinery renders it: scalars as `%v`/`%q`, compound
 * values as `%#v`. Returned as a value {@link fieldError} understands.
 */
export function goBadValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return rawFieldValue(goNumberValue(v));
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  return rawFieldValue(goSharpV(v));
}

/** A value that renders as given text (re-exported for callers). */
export type { RawFieldValue };

/** Deep copy of a JSON value. */
export function deepCopyJSON<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(deepCopyJSON) as T;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v as Obj)) out[k] = deepCopyJSON(x);
  return out as T;
}

/** Deep equality of JSON values (key order ignored). */
export function deepEqualJSON(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqualJSON(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Obj;
  const bo = b as Obj;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  for (const k of ak) {
    if (!Object.hasOwn(bo, k) || !deepEqualJSON(ao[k], bo[k])) return false;
  }
  return true;
}

/** JSON with sorted keys, like Go's `json.Marshal` of a `map[string]interface{}`. */
export function goJSON(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return `[${v.map(goJSON).join(',')}]`;
  if (isObj(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goJSON(v[k])}`)
      .join(',')}}`;
  }
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : JSON.stringify(v);
  return JSON.stringify(v);
}

/** Number of Unicode code points, like Go's `utf8.RuneCountInString`. */
export function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** `field.Path.Key(k)` rendering: `[k]`. */
export const keyPath = (base: string, key: string): string => `${base}[${key}]`;
/** `field.Path.Child(name)` rendering. */
export const childPath = (base: string, name: string): string => (base ? `${base}.${name}` : name);
/** `field.Path.Index(i)` rendering. */
export const indexPath = (base: string, i: number): string => `${base}[${i}]`;
