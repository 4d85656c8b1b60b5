/**
 * Writes as kube's controllers make them: updates (what their bootstrap roles grant, `update` on
 * a resource and on its `status`), not patches, from the object the reconcile read or one read
 * live.
 */
import {
  type Client,
  isConflict,
  isNotFound,
  type KubeObject,
  type ResourceApi,
  type ResourceDescriptor,
} from 'kubeloop/client';

/**
 * `obj` with `status` merged over its current one (a `null` value removes that field, as in a
 * merge patch), or in its place with `replace`.
 */
export function withStatus<T extends KubeObject>(
  obj: T,
  status: Record<string, unknown>,
  { replace = false }: { replace?: boolean } = {},
): T {
  const merged: Record<string, unknown> = replace
    ? {}
    : { ...((obj as { status?: Record<string, unknown> }).status ?? {}) };
  for (const [k, v] of Object.entries(status)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  return { ...obj, status: merged } as T;
}

/**
 * Writes `status` ({@link withStatus}) with an update of `/status` based on `obj`'s
 * resourceVersion. A stale `obj` (409) asks the reconcile to run again; an object gone meanwhile
 * needs nothing more.
 */
export async function updateStatus<T extends KubeObject>(
  client: Client,
  kind: ResourceDescriptor<T>,
  obj: T,
  status: Record<string, unknown>,
  options: { replace?: boolean } = {},
): Promise<{ requeue: true } | undefined> {
  try {
    await client.api(kind, obj.metadata?.namespace).updateStatus(withStatus(obj, status, options));
  } catch (err) {
    if (isConflict(err)) return { requeue: true };
    if (!isNotFound(err)) throw err;
  }
  return undefined;
}

/** `T` with its top-level fields writable (kubernetes-types marks `status` read-only). */
type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Reads `name` live, lets `change` edit it, and writes it back with an update (of `/status` with
 * `status`); a write that lost a race (409) is tried once more on a fresh read.
 */
export async function modify<T extends KubeObject>(
  api: ResourceApi<T>,
  name: string,
  change: (obj: Writable<T>) => void,
  { status = false }: { status?: boolean } = {},
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const obj = structuredClone(await api.get(name));
    change(obj);
    try {
      return await (status ? api.updateStatus(obj) : api.update(obj));
    } catch (err) {
      if (!isConflict(err) || attempt > 0) throw err;
    }
  }
}
