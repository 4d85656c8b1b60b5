/**
 * The shapes every Kubernetes object and request body shares, independent of its kind.
 */
import type { ListMeta, ObjectMeta } from 'kubernetes-types/meta/v1.js';

export type { ListMeta, ObjectMeta };

/** Any Kubernetes object: the built-in types of `kubernetes-types` and custom resources alike. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A list answer (`PodList`, `FooList`, …): the items and the list's `resourceVersion`/`continue`. */
export interface ObjectList<T> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

/**
 * A JSON merge patch (RFC 7386) of `T`: every field optional, `null` deletes a field, arrays are
 * replaced whole.
 */
export type MergePatch<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { -readonly [K in keyof T]?: MergePatch<T[K]> | null }
    : T;

/** Every field of `T` optional, recursively (arrays keep their element type, partially). */
export type DeepPartial<T> = T extends readonly (infer E)[]
  ? DeepPartial<E>[]
  : T extends object
    ? { -readonly [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/**
 * The body of a server-side apply: the fields this manager owns, with the object's identity
 * (apiVersion, kind, name) spelled out.
 */
export type ApplyConfiguration<T> = DeepPartial<T> & {
  apiVersion: string;
  kind: string;
  metadata: DeepPartial<ObjectMeta> & { name: string };
};

/** One operation of a JSON patch (RFC 6902). */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };
