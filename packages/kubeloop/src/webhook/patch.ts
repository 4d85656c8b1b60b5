/**
 * The JSON Patch (RFC 6902) from an object to its defaulted copy, as small as the change: what
 * controller-runtime's `PatchResponseFromRaw` computes with gomodules' jsonpatch, so a defaulter
 * can mutate an object in place and the API server receives only the fields it touched.
 */

/** One RFC 6902 operation of the kinds a defaulter's patch holds. */
export type JsonPatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** Escapes one reference token of a JSON Pointer (RFC 6901): `~` → `~0`, `/` → `~1`. */
export const escapePointerToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// JSON has no `undefined`: a property set to undefined is absent once serialised, as it is
// from the object the API server receives back.
const clean = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null)) as unknown;

const pointer = (segments: readonly string[]): string => {
  let out = '';
  for (const s of segments) out += `/${s.includes('~') || s.includes('/') ? escapePointerToken(s) : s}`;
  return out;
};

// One pass over both trees, building the pointer only for what changed: a review's object is
// mostly unchanged, and this runs on every admission request.
function diff(from: unknown, to: unknown, path: string[], out: JsonPatchOperation[]): void {
  if (from === to) return;
  if (isPlainObject(from) && isPlainObject(to)) {
    for (const key in from) {
      if (from[key] !== undefined && (to[key] === undefined || !Object.hasOwn(to, key)))
        out.push({ op: 'remove', path: pointer([...path, key]) });
    }
    for (const key in to) {
      const value = to[key];
      if (value === undefined) continue;
      const before = Object.hasOwn(from, key) ? from[key] : undefined;
      if (before === undefined) out.push({ op: 'add', path: pointer([...path, key]), value: clean(value) });
      else {
        path.push(key);
        diff(before, value, path, out);
        path.pop();
      }
    }
    return;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    const common = Math.min(from.length, to.length);
    for (let i = 0; i < common; i++) {
      path.push(String(i));
      diff(from[i], to[i], path, out);
      path.pop();
    }
    for (let i = common; i < to.length; i++)
      out.push({ op: 'add', path: pointer([...path, String(i)]), value: clean(to[i]) });
    // From the end, so that each index still names the element it meant.
    for (let i = from.length - 1; i >= common; i--)
      out.push({ op: 'remove', path: pointer([...path, String(i)]) });
    return;
  }
  out.push({ op: 'replace', path: pointer(path), value: clean(to) });
}

/** A deep copy of a JSON value (faster than `structuredClone` for the plain data of a review). */
export function cloneJson<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(cloneJson) as T;
  const out: Record<string, unknown> = {};
  for (const key in v) out[key] = cloneJson((v as Record<string, unknown>)[key]);
  return out as T;
}

/**
 * The minimal JSON Patch turning `from` into `to`: nothing when equal, `add`/`remove` for
 * object members that appear or go, element-wise changes for arrays (appended elements added,
 * dropped ones removed from the end), `replace` where a value changes type or scalar value.
 * Keys with `/` or `~` are escaped as RFC 6901 asks.
 *
 * @example
 * ```ts
 * createJsonPatch({ spec: {} }, { spec: { replicas: 1 } });
 * // [{ op: 'add', path: '/spec/replicas', value: 1 }]
 * ```
 */
export function createJsonPatch(from: unknown, to: unknown): JsonPatchOperation[] {
  const out: JsonPatchOperation[] = [];
  diff(from, to, [], out);
  return out;
}

/** Applies a patch of {@link createJsonPatch}'s operations to a copy of `doc` (for tests and dry runs). */
export function applyJsonPatch<T>(doc: T, patch: readonly JsonPatchOperation[]): T {
  let root = clean(doc);
  const unescapeToken = (t: string) => t.replace(/~1/g, '/').replace(/~0/g, '~');
  for (const op of patch) {
    if (op.path === '') {
      if (op.op === 'remove') throw new Error('cannot remove the document root');
      root = clean(op.value);
      continue;
    }
    const tokens = op.path.slice(1).split('/').map(unescapeToken);
    const last = tokens.pop() as string;
    let parent = root as Record<string, unknown> | unknown[];
    for (const t of tokens) parent = (parent as Record<string, unknown>)[t] as Record<string, unknown>;
    if (parent === undefined || parent === null) throw new Error(`path ${op.path} does not exist`);
    if (Array.isArray(parent)) {
      const i = last === '-' ? parent.length : Number(last);
      if (op.op === 'add') parent.splice(i, 0, clean(op.value));
      else if (op.op === 'remove') parent.splice(i, 1);
      else parent[i] = clean(op.value);
    } else if (op.op === 'remove') delete parent[last];
    else parent[last] = clean(op.value);
  }
  return root as T;
}
