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

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

// JSON has no `undefined`: a property set to undefined is absent once serialised, as it is
// from the object the API server receives back.
const clean = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null)) as unknown;

function diff(from: unknown, to: unknown, path: string, out: JsonPatchOperation[]): void {
  if (deepEqual(from, to)) return;
  if (isPlainObject(from) && isPlainObject(to)) {
    for (const key of Object.keys(from)) {
      if (from[key] === undefined) continue;
      if (!Object.hasOwn(to, key) || to[key] === undefined)
        out.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
    }
    for (const key of Object.keys(to)) {
      if (to[key] === undefined) continue;
      const p = `${path}/${escapePointerToken(key)}`;
      if (!Object.hasOwn(from, key) || from[key] === undefined)
        out.push({ op: 'add', path: p, value: clean(to[key]) });
      else diff(from[key], to[key], p, out);
    }
    return;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    const common = Math.min(from.length, to.length);
    for (let i = 0; i < common; i++) diff(from[i], to[i], `${path}/${i}`, out);
    for (let i = common; i < to.length; i++)
      out.push({ op: 'add', path: `${path}/${i}`, value: clean(to[i]) });
    // From the end, so that each index still names the element it meant.
    for (let i = from.length - 1; i >= common; i--) out.push({ op: 'remove', path: `${path}/${i}` });
    return;
  }
  out.push({ op: 'replace', path, value: clean(to) });
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
  diff(from, to, '', out);
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
