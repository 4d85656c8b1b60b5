/**
 * Helpers shared by the built-in kinds: narrowing of plain JSON objects, apimachinery
 * `field.Error` causes with Go's value formatting, and validation rules beyond `kubeloop/api`'s
 * (ports, config keys, env names); names, label selectors, quantities and durations are
 * `kubeloop/api`'s, re-exported here for the kinds' files.
 */
import {
  ApiError,
  formatLabelSelector as apiFormatLabelSelector,
  validateLabels as apiValidateLabels,
  humanDuration,
  isEverything,
  isQualifiedName,
  type LabelSelector,
  labelSelectorFromObject,
  matchesLabels,
  maxLenError,
  NOTHING,
  regexError,
  type StatusCause,
} from 'kubeloop/api';

export type { Obj } from '../../util/object.js';

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The child object at `key`, created (and stored) when absent or not an object. */
export function ensureObj(parent: Obj, key: string): Obj {
  const cur = parent[key];
  if (isObj(cur)) return cur;
  const fresh: Obj = {};
  parent[key] = fresh;
  return fresh;
}

/** The child object at `key`, or undefined. */
export const objAt = (v: unknown, key: string): Obj | undefined => {
  if (!isObj(v)) return undefined;
  const c = v[key];
  return isObj(c) ? c : undefined;
};

/** Walks `keys` through nested objects. */
export function dig(v: unknown, ...keys: string[]): unknown {
  let cur = v;
  for (const k of keys) {
    if (!isObj(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/** A string field as Go reads it: '' when unset or not a string. */
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A number field, or undefined when unset or not a number. */
export const numOr = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;

/** A number field as Go reads an int: 0 when unset. */
export const int = (v: unknown): number => numOr(v) ?? 0;

export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The object elements of an array field. */
export const objs = (v: unknown): Obj[] => arr(v).filter(isObj);

/** The string elements of an array field. */
export const strs = (v: unknown): string[] => arr(v).filter((x): x is string => typeof x === 'string');

/** A `map[string]string` field (labels, selectors, data). */
export function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObj(v)) return out;
  for (const [k, val] of Object.entries(v)) if (typeof val === 'string') out[k] = val;
  return out;
}

export const isSet = (v: unknown): boolean => v !== undefined && v !== null;

/** Sets `obj[key] = value` when the field is unset (undefined, null or ''), as Go's `if x == nil`/`== ""` defaulting does. */
export function def(o: Obj, key: string, value: unknown): void {
  const cur = o[key];
  if (cur === undefined || cur === null || cur === '') o[key] = value;
}

/** Structural equality of JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  const ao = a as Obj;
  const bo = b as Obj;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => jsonEqual(ao[k], bo[k]));
}

/** Semantic equality as `apiequality.Semantic.DeepEqual` sees Go structs: unset, null, '', 0, false, [] and {} are alike. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown): boolean =>
    v === undefined ||
    v === null ||
    v === '' ||
    v === false ||
    v === 0 ||
    (Array.isArray(v) && v.length === 0) ||
    (isObj(v) && Object.keys(v).every((k) => empty(v[k])));
  if (empty(a) && empty(b)) return true;
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  const ao = a as Obj;
  const bo = b as Obj;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!semanticEqual(ao[k], bo[k])) return false;
  return true;
}

export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

// ---------------------------------------------------------------------------------------------
// Go value formatting, as `field.Error.ErrorBody()` prints a bad value.

/** Go's `%q` of a string (close enough: JSON escaping). */
export const goQuote = (s: string): string => JSON.stringify(s);

/** `%#v` of a `[]string`. */
export function goStrings(v: unknown): string {
  if (!Array.isArray(v)) return '[]string(nil)';
  return `[]string{${strs(v).map(goQuote).join(', ')}}`;
}

/** `%#v` of a `map[string]string` (Go sorts map keys when printing). */
export function goStringMap(v: unknown): string {
  if (!isObj(v)) return 'map[string]string(nil)';
  const m = strMap(v);
  const parts = Object.keys(m)
    .sort()
    .map((k) => `${goQuote(k)}:${goQuote(m[k]!)}`);
  return `map[string]string{${parts.join(', ')}}`;
}

/** `%#v` of a `metav1.LabelSelector` (the value Go prints for an invalid or immutable selector). */
export function goLabelSelector(v: unknown): string {
  if (!isObj(v)) return 'null';
  const exprs = Array.isArray(v.matchExpressions)
    ? `[]v1.LabelSelectorRequirement{${objs(v.matchExpressions)
        .map(
          (e) =>
            `v1.LabelSelectorRequirement{Key:${goQuote(str(e.key))}, Operator:${goQuote(str(e.operator))}, Values:${goStrings(e.values)}}`,
        )
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${goStringMap(v.matchLabels)}, MatchExpressions:${exprs}}`;
}

/** `%#v` of an `intstr.IntOrString`. */
export function goIntOrString(v: unknown): string {
  if (typeof v === 'string') return `intstr.IntOrString{Type:1, IntVal:0, StrVal:${goQuote(v)}}`;
  return `intstr.IntOrString{Type:0, IntVal:${typeof v === 'number' ? v : 0}, StrVal:""}`;
}

/** Formats a bad value the way `field.Error` does for simple values; composite values pass a preformatted {@link GoValue}. */
export class GoValue {
  constructor(readonly text: string) {}
}

export function goValue(v: unknown): string {
  if (v instanceof GoValue) return v.text;
  // ErrorBody turns a nil value into the string "null", then quotes it.
  if (v === undefined || v === null) return '"null"';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return goStrings(v);
  if (isObj(v) && Object.values(v).every((x) => typeof x === 'string')) return goStringMap(v);
  return JSON.stringify(v);
}

// ---------------------------------------------------------------------------------------------
// field.Error constructors. The cause message is `ErrorBody()`: the field path goes in `field`.

export const required = (field: string, detail = ''): StatusCause => ({
  reason: 'FieldValueRequired',
  message: detail ? `Required value: ${detail}` : 'Required value',
  field,
});

export const invalid = (field: string, value: unknown, detail = ''): StatusCause => ({
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${goValue(value)}${detail ? `: ${detail}` : ''}`,
  field,
});

export const notSupported = (field: string, value: unknown, supported: readonly string[]): StatusCause => ({
  reason: 'FieldValueNotSupported',
  message: `Unsupported value: ${goValue(value)}${
    supported.length > 0 ? `: supported values: ${supported.map(goQuote).join(', ')}` : ''
  }`,
  field,
});

export const duplicate = (field: string, value: unknown): StatusCause => ({
  reason: 'FieldValueDuplicate',
  message: `Duplicate value: ${goValue(value)}`,
  field,
});

export const forbidden = (field: string, detail: string): StatusCause => ({
  reason: 'FieldValueForbidden',
  message: detail ? `Forbidden: ${detail}` : 'Forbidden',
  field,
});

export const notFound = (field: string, value: unknown): StatusCause => ({
  reason: 'FieldValueNotFound',
  message: `Not found: ${goValue(value)}`,
  field,
});

export const tooLong = (field: string, maxBytes: number): StatusCause => ({
  reason: 'FieldValueTooLong',
  message: `Too long: may not be more than ${maxBytes} ${maxBytes === 1 ? 'byte' : 'bytes'}`,
  field,
});

/** `apivalidation.ValidateImmutableField`. */
export function immutable(field: string, next: unknown, old: unknown, value: unknown = next): StatusCause[] {
  return semanticEqual(next, old) ? [] : [invalid(field, value, 'field is immutable')];
}

export const FIELD_IMMUTABLE = 'field is immutable';

// ---------------------------------------------------------------------------------------------
// k8s.io/apimachinery/pkg/util/validation: names, labels, ports.

// The name rules are kubeloop/api's (apimachinery's, with Go's byte lengths).
export {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPathSegmentName,
} from 'kubeloop/api';

import type { Obj } from '../../util/object.js';

/** `IsValidPortNum`. */
export const isValidPortNum = (p: number): string[] =>
  Number.isInteger(p) && p >= 1 && p <= 65535 ? [] : ['must be between 1 and 65535, inclusive'];

/** `IsValidPortName` (IANA_SVC_NAME). */
export function isValidPortName(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(v))
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(v)) errs.push('must contain at least one letter (a-z)');
  if (v.includes('--')) errs.push('must not contain consecutive hyphens');
  if (v.length > 0 && (v.startsWith('-') || v.endsWith('-')))
    errs.push('must not begin or end with a hyphen');
  return errs;
}

/** `IsConfigMapKey`: keys of ConfigMap and Secret data. */
export function isConfigMapKey(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!/^[-._a-zA-Z0-9]+$/.test(v)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        '[-._a-zA-Z0-9]+',
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  }
  if (v === '.') errs.push("must not be '.'");
  else if (v === '..') errs.push("must not be '..'");
  else if (v.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export const NON_NEGATIVE = 'must be greater than or equal to 0';

/** `ValidateNonnegativeField`. */
export function nonNegative(field: string, v: unknown): StatusCause[] {
  const n = numOr(v);
  return n !== undefined && n < 0 ? [invalid(field, n, NON_NEGATIVE)] : [];
}

/** Validates label keys and values (`ValidateLabels`) of a field that may hold anything. */
export function validateLabels(labels: unknown, field: string): StatusCause[] {
  return apiValidateLabels(strMap(labels), field);
}

// ---------------------------------------------------------------------------------------------
// Label selectors.

/**
 * A parsed `metav1.LabelSelector`: kubeloop/api's selector, where `NOTHING` (a nil selector)
 * matches nothing and an empty one everything.
 */
export type Selector = LabelSelector;

/**
 * `metav1.LabelSelectorAsSelector` of a field that may hold anything; undefined when the
 * selector is not valid (an unknown operator, values where none belong, bad keys or values).
 */
export function labelSelectorAsSelector(v: unknown): Selector | undefined {
  if (v === undefined || v === null) return NOTHING;
  if (!isObj(v)) return undefined;
  try {
    return labelSelectorFromObject({
      matchLabels: strMap(v.matchLabels),
      matchExpressions: objs(v.matchExpressions).map((e) => ({
        key: str(e.key),
        operator: str(e.operator),
        values: strs(e.values),
      })),
    });
  } catch (err) {
    if (err instanceof ApiError) return undefined;
    throw err;
  }
}

/** Whether the selector selects everything (`{}`). */
export const selectorEmpty = (s: Selector): boolean => isEverything(s);

/** Whether `labels` satisfy the selector. */
export const selectorMatches = (s: Selector, labels: Record<string, string>): boolean =>
  matchesLabels(s, labels);

/** `labels.Selector.String()` ('' for a nil selector). */
export const selectorString = (s: Selector): string => apiFormatLabelSelector(s);

/** `metav1.FormatLabelSelector`: `<none>` for an empty or nil selector, `<error>` for an invalid one. */
export function formatLabelSelector(v: unknown): string {
  const s = labelSelectorAsSelector(v);
  if (!s) return '<error>';
  const out = selectorString(s);
  return out === '' ? '<none>' : out;
}

/** `labels.FormatLabels`: `k=v` sorted by key, `<none>` when empty. */
export function formatLabels(v: unknown): string {
  const m = strMap(v);
  const keys = Object.keys(m).sort();
  return keys.length === 0 ? '<none>' : keys.map((k) => `${k}=${m[k]}`).join(',');
}

/** `ValidateLabelSelector`: operators, values and label syntax. */
export function validateLabelSelector(v: unknown, field: string): StatusCause[] {
  if (!isObj(v)) return [];
  const out: StatusCause[] = [];
  objs(v.matchExpressions).forEach((e, i) => {
    const p = `${field}.matchExpressions[${i}]`;
    const values = strs(e.values);
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          out.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) {
          out.push(
            forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
          );
        }
        break;
      default:
        out.push(invalid(`${p}.operator`, e.operator ?? '', 'not a valid selector operator'));
    }
    for (const m of isQualifiedName(str(e.key))) out.push(invalid(`${p}.key`, str(e.key), m));
  });
  out.push(...validateLabels(v.matchLabels, `${field}.matchLabels`));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Resource quantities and kubectl's durations are kubeloop/api's.

export { addQuantity, compareQuantity, humanDuration, parseQuantity, type Quantity } from 'kubeloop/api';

/** Milliseconds since the epoch of an RFC 3339 timestamp, or undefined when unset or malformed. */
export function parseTime(v: unknown): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** printers.go `translateTimestampSince`: `<unknown>` for a zero time. */
export function since(v: unknown, now: Date): string {
  const t = parseTime(v);
  return t === undefined ? '<unknown>' : humanDuration(now.getTime() - t);
}
