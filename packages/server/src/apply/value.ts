import type { Obj } from '../util/object.js';

/**
 * JSON values as structured-merge-diff's `value` package sees them: a total order over values of
 * any type (`value.Compare`), their short human spelling (`value.ToString`) and Go's JSON encoding
 * (sorted object keys, HTML-safe escapes), which the FieldsV1 keys `k:{…}` and `v:…` are made of.
 *
 * @internal
 */

/** A JSON object. */
export type { Obj } from '../util/object.js';

/** True for a JSON object (not null, not an array). */
export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Sets `obj[key]` as an own data property, even when the key is `__proto__`. */
export function put(obj: Obj, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** The own property `key` of `obj`, or `undefined`. */
export function own(obj: Obj, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Rank of a value's type in `value.Compare`: numbers, strings, booleans, lists, maps, null. */
function rank(v: unknown): number {
  switch (typeof v) {
    case 'number':
      return 0;
    case 'string':
      return 1;
    case 'boolean':
      return 2;
    default:
      if (Array.isArray(v)) return 3;
      if (isObj(v)) return 4;
      return 5;
  }
}

/**
 * The total order of structured-merge-diff's `value.Compare`: numbers (ints and floats compared
 * numerically) before strings, booleans, lists, maps and null; lists element-wise then by length;
 * maps by their sorted keys.
 */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const la = a as unknown[];
      const lb = b as unknown[];
      for (let i = 0; i < la.length && i < lb.length; i++) {
        const c = compareValues(la[i], lb[i]);
        if (c !== 0) return c;
      }
      return la.length === lb.length ? 0 : la.length < lb.length ? -1 : 1;
    }
    case 4: {
      const ma = a as Obj;
      const mb = b as Obj;
      const keys = [...new Set([...Object.keys(ma), ...Object.keys(mb)])].sort(compareStrings);
      for (const k of keys) {
        const ha = Object.hasOwn(ma, k);
        const hb = Object.hasOwn(mb, k);
        if (!ha) return 1;
        if (!hb) return -1;
        const c = compareValues(ma[k], mb[k]);
        if (c !== 0) return c;
      }
      return 0;
    }
    default:
      return 0;
  }
}

/** Go's `strings.Compare`: byte-wise on UTF-8, which for JS strings is code point order. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // UTF-16 order differs from code point order only around surrogates; compare code points there.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) {
      const pa = a.codePointAt(i)!;
      const pb = b.codePointAt(i)!;
      return pa < pb ? -1 : 1;
    }
  }
  return a.length < b.length ? -1 : 1;
}

/** Structural equality of JSON values (key order does not matter). */
export function valueEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valueEquals(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !valueEquals((a as Obj)[k], (b as Obj)[k])) return false;
  }
  return true;
}

/** Go's `%q` of a string as `value.ToString` prints it (close to JSON for printable text). */
function goQuoted(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}

/** Go's `%v` of a float64 or int64 decoded from JSON. */
function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e >= -4 && e < 21) return String(n);
  return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}

/**
 * structured-merge-diff's `value.ToString`: how list-map keys and set values appear in field
 * paths of conflict messages (`[name="nginx"]`, `[=1]`).
 */
export function valueToString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'number':
      return goNumber(v);
    case 'string':
      return goQuoted(v);
    case 'boolean':
      return String(v);
    default:
      if (Array.isArray(v)) return `[${v.map(valueToString).join(',')}]`;
      return Object.entries(v as Obj)
        .map(([k, x]) => `${k}=${valueToString(x)}`)
        .join('');
  }
}

/** Go's `encoding/json` escaping of a string: HTML-safe, like the JSON in FieldsV1 keys. */
export function goJsonString(s: string): string {
  return JSON.stringify(s).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Go's `encoding/json` of a value decoded into `interface{}`: object keys sorted. */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'string':
      return goJsonString(v);
    case 'boolean':
      return String(v);
    default:
      if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
      return `{${Object.keys(v as Obj)
        .sort(compareStrings)
        .map((k) => `${goJsonString(k)}:${goJson((v as Obj)[k])}`)
        .join(',')}}`;
  }
}
