/**
 * A status writer that writes only when the status changed, so that a reconcile triggered by
 * its own status write finds nothing to write and the loop ends.
 */
import type { Client, StatusOf } from '../../client/client.js';
import type { KubeObject } from '../../client/types.js';
import { mergePatchBetween } from './diff.js';

/**
 * Writes `status` to `obj` through the status subresource (a merge patch of the differences)
 * unless it already equals `obj.status`. Returns whether it wrote, and the object.
 *
 * @example
 * ```ts
 * await writeStatus(client, foo, { ...foo.status, availableReplicas: dep.status?.availableReplicas ?? 0 });
 * ```
 */
export async function writeStatus<T extends KubeObject & { status?: unknown }>(
  client: Client,
  obj: T,
  status: StatusOf<T>,
): Promise<{ changed: boolean; object: T }> {
  const patch = mergePatchBetween(obj.status, status);
  if (patch === undefined) return { changed: false, object: obj };
  return { changed: true, object: await client.patchStatus(obj, patch as never) };
}
