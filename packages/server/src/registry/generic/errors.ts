/** How storage outcomes become API answers in the generic registry. */
import { ApiError } from 'kubeloop/api';
import { StorageError } from '../../storage/store.js';
import type { KubeObject, StoredObject } from '../../storage/types.js';
import { meta, type Obj } from '../../util/object.js';
import type { ResourceType } from '../types.js';

/** What every write request carries besides its object. */
export interface WriteContext {
  /** `dryRun=All`: run everything, persist nothing. */
  dryRun: boolean;
  /**
   * Who writes, for `metadata.managedFields`: the request's `fieldManager`, else its User-Agent
   * prefix. Undefined for the server's own writes, which are not tracked.
   */
  fieldManager?: string;
  /** A server-side apply: its managed fields are already computed. */
  applied?: boolean;
  /** Where admission's warnings go (to the response's `Warning` headers); unset, they are dropped. */
  warnings?: string[];
  /** The request's user; undefined for the server's own writes (its policy checks skip those). */
  user?: { username: string; groups: string[]; uid?: string };
}

export const gr = (t: ResourceType) => ({ group: t.group, resource: t.resource });
/**
 * The kind an Invalid error names: the internal type's, which for a kind stored as another is the
 * stored one's group (events.k8s.io Events are core Events: `Event "x" is invalid`).
 */
export const gk = (t: ResourceType) => ({ group: t.storedAs?.group ?? t.group, kind: t.kind });

/** A storage error as the ApiError kube-apiserver answers with (`storeerr.InterpretXError`). */
export function storageError(err: unknown, t: ResourceType, name: string): unknown {
  if (!(err instanceof StorageError)) return err;
  switch (err.code) {
    case 'AlreadyExists':
      return ApiError.alreadyExists(gr(t), name);
    case 'NotFound':
      return ApiError.notFound(gr(t), name);
    case 'Conflict':
      return ApiError.staleObject(gr(t), name);
    case 'TooOld':
      return ApiError.expired(err.message);
    case 'TooLarge':
      // kube-apiserver passes etcd's error through unmapped: a 500 without a reason.
      return new ApiError({ code: 500, message: err.message });
    default:
      return ApiError.serviceUnavailable(err.message);
  }
}

/**
 * `rest.BeforeDelete`'s early check of a delete's preconditions against the stored metadata: a
 * Conflict naming the kind where a resource goes (`on ConfigMap "x"`).
 */
export function checkDeletePreconditions(
  t: ResourceType,
  name: string,
  stored: Obj,
  pre: { uid?: string; resourceVersion?: string } | undefined,
): void {
  const kindAsResource = { group: t.group, resource: t.kind };
  if (pre?.uid && pre.uid !== stored.uid) {
    throw ApiError.conflict(
      kindAsResource,
      name,
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${String(stored.uid)}). The object might have been deleted and then recreated`,
    );
  }
  if (pre?.resourceVersion && pre.resourceVersion !== stored.resourceVersion) {
    throw ApiError.conflict(
      kindAsResource,
      name,
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${String(stored.resourceVersion)}). The object might have been modified`,
    );
  }
}

/** Whether `err` is a storage conflict (someone else wrote in between). */
export const isConflict = (err: unknown): boolean => err instanceof StorageError && err.code === 'Conflict';

/**
 * The create, update and patch handlers' second try: an object too large for etcd is written
 * again without its managed fields, which may be what made it large. An apply keeps them (its
 * fields are what it is about), and so fails. True when the object lost managed fields.
 */
export function dropManagedFieldsIfTooLarge(err: unknown, obj: Obj, ctx: WriteContext): boolean {
  if (!(err instanceof StorageError && err.code === 'TooLarge') || ctx.applied) return false;
  const m = meta(obj);
  if (m.managedFields === undefined) return false;
  delete m.managedFields;
  return true;
}

/** What a dry run answers: the object as it would have been written, never stored. */
export function dryRunResult(key: string, obj: Obj): StoredObject {
  return { key, object: obj as KubeObject, revision: 0, json: JSON.stringify(obj) };
}
