/** Small helpers for plain JSON objects (Kubernetes objects as parsed from a request body). */

import type { JsonObject } from 'kubeloop/api';

/** A JSON object (kubeloop/api's `JsonObject`): the one object type of the server. */
export type Obj = JsonObject;

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A mutable deep copy of a JSON value (objects from the store are frozen). */
export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** Structural equality of two JSON values (key order does not matter). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Obj;
  const bo = b as Obj;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (!deepEqual(ao[k], bo[k])) return false;
  return true;
}

/** The object's `metadata`, created when absent. */
export function meta(obj: Obj): Obj {
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as Obj;
}

/** Reads a simple JSON path such as `.spec.replicas` (the form CRDs use for scale and columns). */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.').filter(Boolean)) {
    if (!isObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** Writes a simple JSON path such as `.spec.replicas`, creating intermediate objects. */
export function setPath(obj: Obj, path: string, value: unknown): void {
  const parts = path.split('.').filter(Boolean);
  let cur: Obj = obj;
  for (const part of parts.slice(0, -1)) {
    if (!isObject(cur[part])) cur[part] = {};
    cur = cur[part] as Obj;
  }
  cur[parts[parts.length - 1]!] = value;
}

/** RFC 3339 with second precision, as Kubernetes renders `metav1.Time`. */
export function timestamp(d?: Date): string {
  if (d !== undefined) return `${d.toISOString().slice(0, 19)}Z`;
  // Every write stamps several times (creation, managedFields, events): formatting once per
  // second is enough, as the text only changes with the second.
  const second = Math.floor(Date.now() / 1000);
  if (second !== lastStamp.second) {
    lastStamp.second = second;
    lastStamp.text = `${new Date(second * 1000).toISOString().slice(0, 19)}Z`;
  }
  return lastStamp.text;
}

/** The last text of {@link timestamp} (a cache of a pure function of the clock's second). */
const lastStamp = { second: Number.NaN, text: '' };
