/**
 * What happens to an object between the wire and the cache: an optional transform (by default
 * `managedFields` are dropped: they are often the biggest part of an object and controllers
 * never read them), then a deep freeze so that no reader can change what other readers see.
 */
import type { KubeObject, ObjectMeta } from '../../client/types.js';

/**
 * Rewrites an object before it enters a cache. It receives a freshly decoded object that
 * nothing else references, so it may change it in place, and returns what to store. Changing
 * fields in place (assigning, or deleting the last field) keeps the object compact; spreading
 * it into a new one (`{ ...obj }`) can double its memory once the cache freezes it.
 *
 * @example
 * ```ts
 * const dropStatus: Transform<Foo> = (foo) => {
 *   delete foo.status; // status is the last field of a Kubernetes object
 *   return foo;
 * };
 * ```
 */
export type Transform<T> = (obj: T) => T;

/**
 * The metadata-only view of an object (`meta.k8s.io/v1` `PartialObjectMetadata`): enough to
 * find owners, labels and finalizers without holding whole objects in memory.
 *
 * @example
 * ```ts
 * const owners = (m: PartialObjectMetadata) => m.metadata.ownerReferences ?? [];
 * ```
 */
export interface PartialObjectMetadata extends KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

/**
 * Drops `metadata.managedFields` (the default transform of informers). Like every
 * {@link Transform} it may change its argument: it does so when it can keep the object's
 * compact in-memory layout (a real API server puts managedFields last, and dropping the last
 * field is free); otherwise, and for frozen objects, it returns a copy.
 *
 * An informer with this transform never decodes managedFields: it cuts them out of each
 * object's text, which it keeps until the object is read (see `Store`) or, with handlers,
 * decodes as it arrives. This function drops them where an object was built with them.
 *
 * @example
 * ```ts
 * const informer = new Informer(client.api(Pod, ''), { transform: stripManagedFields }); // the default
 * ```
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (meta === undefined || !Object.hasOwn(meta, 'managedFields')) return obj;
  const keys = Object.keys(meta);
  if (keys[keys.length - 1] === 'managedFields' && !Object.isFrozen(meta)) {
    delete meta.managedFields;
    return obj;
  }
  // Rebuilt by plain assignments: `delete` of another field, or object rest, would leave V8's
  // fast layout and cost about twice the memory once the object is frozen.
  const rest: Record<string, unknown> = {};
  for (const k of keys) if (k !== 'managedFields') rest[k] = meta[k];
  if (Object.isFrozen(obj)) return { ...obj, metadata: rest };
  (obj as { metadata?: unknown }).metadata = rest;
  return obj;
}

/**
 * The {@link PartialObjectMetadata} of any object; objects that already are one are returned
 * as they are. Used by metadata-only informers when a server answers with whole objects.
 *
 * @example
 * ```ts
 * toPartialObjectMetadata(pod).metadata.ownerReferences;
 * ```
 */
export function toPartialObjectMetadata(obj: KubeObject): PartialObjectMetadata {
  if (obj.kind === 'PartialObjectMetadata' && obj.metadata) return obj as PartialObjectMetadata;
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: obj.metadata ?? {} };
}

/**
 * Freezes an object and everything it contains, so that a change attempt throws (in strict
 * mode, which ES modules always are) instead of silently corrupting a shared cache. Parts that
 * are already frozen are not walked again.
 *
 * @example
 * ```ts
 * const cached = deepFreeze(JSON.parse(body));
 * cached.metadata.labels.x = 'y'; // TypeError
 * ```
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  freezeObject(value);
  return value;
}

/** The walk of {@link deepFreeze}, written to call itself only for unfrozen objects. */
function freezeObject(v: object): void {
  Object.freeze(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'object' && x !== null && !Object.isFrozen(x)) freezeObject(x);
    }
  } else {
    for (const key in v) {
      const x: unknown = (v as Record<string, unknown>)[key];
      if (typeof x === 'object' && x !== null && !Object.isFrozen(x)) freezeObject(x);
    }
  }
}
