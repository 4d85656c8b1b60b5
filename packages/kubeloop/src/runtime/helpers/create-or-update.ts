/**
 * Create-or-update and create-or-patch (controller-runtime's `controllerutil`): read the
 * object, let a mutate function set the fields the controller owns, and write only what
 * changed — reporting what happened.
 */
import { isNotFound } from '../../api/status.js';
import type { Client } from '../../client/client.js';
import type { KubeObject } from '../../client/types.js';
import { deepEqual, mergePatchBetween } from './diff.js';

/** What {@link createOrUpdate} did. */
export type OperationResult = 'created' | 'updated' | 'unchanged';

/** What {@link createOrPatch} did: as {@link OperationResult}, plus which parts it patched. */
export type PatchOperationResult = OperationResult | 'updatedStatus' | 'updatedStatusOnly';

/** Mutates the object in place to the desired state (keep its name and namespace). */
export type MutateFn<T> = (obj: T) => void | Promise<void>;

function checkIdentity(before: KubeObject, after: KubeObject): void {
  if (
    before.metadata?.name !== after.metadata?.name ||
    (before.metadata?.namespace ?? '') !== (after.metadata?.namespace ?? '')
  ) {
    throw new Error('the mutate function must not change the name or namespace of the object');
  }
}

async function read<T extends KubeObject>(client: Client, obj: T): Promise<T | undefined> {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError('the object needs metadata.name');
  try {
    return await client.forObject(obj).get(name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Creates `obj` after `mutate(obj)` if it does not exist; otherwise applies `mutate` to the
 * server's version and updates it (guarded by its resourceVersion) when that changed it.
 *
 * @example
 * ```ts
 * const { result } = await createOrUpdate(client, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'a' } },
 *   (cm) => { cm.data = { mode: 'fast' }; setControllerReference(foo, cm); });
 * ```
 */
export async function createOrUpdate<T extends KubeObject>(
  client: Client,
  obj: T,
  mutate: MutateFn<T>,
): Promise<{ result: OperationResult; object: T }> {
  const existing = await read(client, obj);
  if (!existing) {
    const fresh = structuredClone(obj);
    await mutate(fresh);
    checkIdentity(obj, fresh);
    return { result: 'created', object: await client.create(fresh) };
  }
  const desired = structuredClone(existing);
  await mutate(desired);
  checkIdentity(existing, desired);
  if (deepEqual(existing, desired)) return { result: 'unchanged', object: existing };
  return { result: 'updated', object: await client.update(desired) };
}

/**
 * Like {@link createOrUpdate}, but writes merge patches of what `mutate` changed — the object
 * and, through the status subresource, its status — so that fields set by others are left
 * alone.
 *
 * @example
 * ```ts
 * const { result } = await createOrPatch(client, svc, (s) => { s.spec = { ...s.spec, ports } });
 * ```
 */
export async function createOrPatch<T extends KubeObject>(
  client: Client,
  obj: T,
  mutate: MutateFn<T>,
): Promise<{ result: PatchOperationResult; object: T }> {
  const existing = await read(client, obj);
  if (!existing) {
    const fresh = structuredClone(obj);
    await mutate(fresh);
    checkIdentity(obj, fresh);
    return { result: 'created', object: await client.create(fresh) };
  }
  const desired = structuredClone(existing) as T & { status?: unknown };
  await mutate(desired);
  checkIdentity(existing, desired);
  const { status: oldStatus, ...oldRest } = existing as T & { status?: unknown };
  const { status: newStatus, ...newRest } = desired;
  const mainPatch = mergePatchBetween(oldRest, newRest) as Record<string, unknown> | undefined;
  const statusPatch = mergePatchBetween(oldStatus, newStatus);
  let object: T = existing;
  if (mainPatch !== undefined) {
    object = await client.patch(existing, {
      ...mainPatch,
      metadata: {
        ...(mainPatch.metadata as object | undefined),
        resourceVersion: existing.metadata?.resourceVersion,
      },
    } as never);
  }
  if (statusPatch !== undefined) {
    object = await client.patchStatus(object, statusPatch as never);
  }
  const result: PatchOperationResult =
    mainPatch !== undefined
      ? statusPatch !== undefined
        ? 'updatedStatus'
        : 'updated'
      : statusPatch !== undefined
        ? 'updatedStatusOnly'
        : 'unchanged';
  return { result, object };
}
