/**
 * Finalizers: keep an object until the controller has cleaned up what it made outside the
 * object's owner references (external resources, objects in other namespaces, …).
 */
import type { Client } from '../../client/client.js';
import type { KubeObject, MergePatch } from '../../client/types.js';

/** Whether `obj` carries `finalizer`. */
export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}

/** Whether the deletion of `obj` has started (`metadata.deletionTimestamp` is set). */
export function isBeingDeleted(obj: KubeObject): boolean {
  return obj.metadata?.deletionTimestamp != null;
}

/**
 * Adds a finalizer (a JSON patch guarded by the resourceVersion, so that a concurrent change
 * is a conflict to retry rather than a lost update). Never adds one to an object being
 * deleted — the API server refuses that anyway — and returns `obj` unchanged when present.
 *
 * @example
 * ```ts
 * foo = await addFinalizer(client, foo, 'example.com/cleanup');
 * ```
 */
export async function addFinalizer<T extends KubeObject>(
  client: Client,
  obj: T,
  finalizer: string,
): Promise<T> {
  if (hasFinalizer(obj, finalizer) || isBeingDeleted(obj)) return obj;
  const finalizers = [...(obj.metadata?.finalizers ?? []), finalizer];
  return client.patch(obj, {
    metadata: { finalizers, resourceVersion: obj.metadata?.resourceVersion },
  } as MergePatch<T>);
}

/**
 * Removes a finalizer (guarded by the resourceVersion); returns `obj` unchanged when absent.
 */
export async function removeFinalizer<T extends KubeObject>(
  client: Client,
  obj: T,
  finalizer: string,
): Promise<T> {
  if (!hasFinalizer(obj, finalizer)) return obj;
  const finalizers = (obj.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
  return client.patch(obj, {
    metadata: { finalizers, resourceVersion: obj.metadata?.resourceVersion },
  } as MergePatch<T>);
}

/**
 * The finalizer lifecycle in one call: while the object lives, makes sure the finalizer is
 * on it (before any work) and returns `'continue'`; once its deletion started, runs `cleanup`,
 * removes the finalizer and returns `'deleted'` (the reconcile should stop there). When the
 * object is being deleted and the finalizer is not on it (it was removed, or never added),
 * `cleanup` does not run.
 *
 * @example
 * ```ts
 * controller(Foo).reconcile(async (foo, { client }) => {
 *   if ((await finalize(client, foo, 'example.com/bucket', () => deleteBucket(foo))) === 'deleted') return;
 *   await ensureBucket(foo);
 * });
 * ```
 */
export async function finalize<T extends KubeObject>(
  client: Client,
  obj: T,
  finalizer: string,
  cleanup: (obj: T) => Promise<void> | void,
): Promise<'continue' | 'deleted'> {
  if (!isBeingDeleted(obj)) {
    await addFinalizer(client, obj, finalizer);
    return 'continue';
  }
  if (hasFinalizer(obj, finalizer)) {
    await cleanup(obj);
    await removeFinalizer(client, obj, finalizer);
  }
  return 'deleted';
}
