/**
 * How an object appears as an item of a list. A built-in list is a typed Go list (`ConfigMapList`
 * with `[]ConfigMap`): only the list carries `apiVersion`/`kind`, its items are encoded without
 * them. Custom resources are unstructured, so their items keep both. Watch events and Table rows
 * embed a whole object, which keeps them too.
 */
import type { StoredObject } from '../storage/types.js';
import type { ResourceType } from './types.js';

/** Encodings of items whose type meta does not lead their JSON, made once per stored state. */
const rebuilt = new WeakMap<StoredObject, string>();

/** The JSON of `stored` as an item of a list of `t`. */
export function listItemJson(t: ResourceType, stored: StoredObject): string {
  if (t.custom) return stored.json;
  const json = stored.json;
  // Nearly every stored object starts with its type meta: cut it from the cached encoding.
  const cut = typeMetaEnd(json);
  if (cut !== undefined) return `{${json.slice(cut)}`;
  let out = rebuilt.get(stored);
  if (out === undefined) {
    const { apiVersion: _a, kind: _k, ...rest } = stored.object;
    out = JSON.stringify(rest);
    rebuilt.set(stored, out);
  }
  return out;
}

/** The object of `stored` as an item of a list of `t` (a shallow copy without its type meta). */
export function listItemObject(t: ResourceType, stored: StoredObject): Readonly<Record<string, unknown>> {
  if (t.custom) return stored.object;
  const { apiVersion: _a, kind: _k, ...rest } = stored.object;
  return rest;
}

const API_VERSION = '"apiVersion":';
const KIND = '"kind":';

/**
 * Where the rest of `json` starts after a leading `"apiVersion":"…","kind":"…",` (either order),
 * or undefined when the object does not start so.
 */
function typeMetaEnd(json: string): number | undefined {
  let i = 1;
  let seen = 0;
  while (seen < 2) {
    const key = json.startsWith(API_VERSION, i) ? API_VERSION : json.startsWith(KIND, i) ? KIND : undefined;
    if (key === undefined) return undefined;
    i += key.length;
    // Type meta values are plain strings: no escapes, so the next quote closes them.
    if (json[i] !== '"') return undefined;
    const close = json.indexOf('"', i + 1);
    if (close < 0 || json.lastIndexOf('\\', close) > i) return undefined;
    i = close + 1;
    if (json[i] !== ',') return undefined;
    i++;
    seen++;
  }
  // Both keys must be present once: "apiVersion" twice would mean a malformed object.
  const head = json.slice(0, i);
  if (!head.includes(API_VERSION) || !head.includes(KIND)) return undefined;
  return i;
}
