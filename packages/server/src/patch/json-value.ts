import type { Obj } from '../util/object.js';

/**
 * Helpers shared by the patch engines: plain-JSON values, and the Go spellings of them that the
 * apiserver's error messages contain.
 *
 * The engines work on values produced by `JSON.parse`. Such objects can own a key named
 * `__proto__` (JSON.parse defines it as data), and inherited names such as `constructor` must
 * never be mistaken for fields, so every read goes through {@link hasOwn}/{@link getOwn} and
 * every write through {@link setOwn}.
 *
 * @internal
 */

/** A JSON object. */
export type { Obj } from '../util/object.js';

/** True for a JSON object (not null, not an array). */
export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when `obj` has `key` as its own property. */
export function hasOwn(obj: Obj, key: string): boolean {
  return Object.hasOwn(obj, key);
}

/** The own property `key` of `obj`, or `undefined`. */
export function getOwn(obj: Obj, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Sets `obj[key]` as an own data property, even for `__proto__`. */
export function setOwn(obj: Obj, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** Deletes the own property `key` of `obj`. */
export function deleteOwn(obj: Obj, key: string): void {
  if (Object.hasOwn(obj, key)) delete obj[key];
}

/**
 * Deep copy of a JSON value; the engines mutate their working copies, never their inputs. Walked
 * with an explicit stack rather than recursion: request bodies nest up to the decoder's depth
 * limit, deeper than the call stack has room for (structuredClone overflows at ~2,000 levels).
 */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  const root: unknown = Array.isArray(value) ? [] : {};
  const from: unknown[] = [value];
  const to: unknown[] = [root];
  while (from.length > 0) {
    const src = from.pop();
    const dst = to.pop();
    if (Array.isArray(src)) {
      const out = dst as unknown[];
      for (const v of src) {
        if (v !== null && typeof v === 'object') {
          const c = Array.isArray(v) ? [] : {};
          out.push(c);
          from.push(v);
          to.push(c);
        } else out.push(v);
      }
    } else {
      for (const [k, v] of Object.entries(src as Obj)) {
        if (v !== null && typeof v === 'object') {
          const c = Array.isArray(v) ? [] : {};
          setOwn(dst as Obj, k, c);
          from.push(v);
          to.push(c);
        } else setOwn(dst as Obj, k, v);
      }
    }
  }
  return root as T;
}

/** Structural equality of JSON values (key order does not matter, array order does). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isObj(a)) {
    if (!isObj(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * Go's `==` on two `interface{}` values holding decoded JSON: scalars compare by value and type;
 * maps and slices cannot be compared in Go (it panics), so here they are equal only to
 * themselves.
 */
export function goEqual(a: unknown, b: unknown): boolean {
  return a === b;
}

/**
 * The Go type of a decoded JSON value as `reflect.TypeOf` names it. The apiserver decodes
 * patches with integers preserved (`int64`) and other numbers as `float64`.
 */
export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return '%!s(<nil>)';
  if (Array.isArray(value)) return '[]interface {}';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(value) ? 'int64' : 'float64';
    case 'object':
      return 'map[string]interface {}';
    default:
      return typeof value;
  }
}

/** What `encoding/json` calls a JSON value in `cannot unmarshal <kind> into …` errors. */
export function jsonKindName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return 'number';
    default:
      return 'object';
  }
}

/**
 * Go's `%v` of a decoded number: integers were decoded as int64 (decimal), other numbers as
 * float64, printed like `strconv.FormatFloat(f, 'g', -1, 64)`.
 */
function goNumber(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const [mantissa = '0', expPart = '0'] = n.toExponential().split('e');
  const exp = Number(expPart);
  // Shortest-precision %g switches to exponent form below 1e-4 and from 1e6 on.
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const digits = String(Math.abs(exp)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(n);
}

/** Go's `fmt.Sprintf("%v", v)` for decoded JSON (maps print as `map[k:v]` with sorted keys). */
export function goSprint(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goSprint).join(' ')}]`;
  if (isObj(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${goSprint(value[k])}`).join(' ')}]`;
  }
  if (typeof value === 'number') return goNumber(value);
  return String(value);
}

/** Go's `fmt.Sprintf("%s", v)` for decoded JSON: non-strings print as `%!s(type=value)`. */
export function goSprintS(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '%!s(<nil>)';
  if (Array.isArray(value)) return `[${value.map(goSprintS).join(' ')}]`;
  if (isObj(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${goSprintS(value[k])}`).join(' ')}]`;
  }
  return `%!s(${goTypeName(value)}=${goSprint(value)})`;
}
