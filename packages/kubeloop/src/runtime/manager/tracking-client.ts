/**
 * The manager's client: the same `Client` API, but every write is recorded in the manager's
 * {@link WriteTracker} so that its cache reads see the write (see read-your-writes.ts).
 */
import type { ResourceApi } from '../../client/api.js';
import type { Client } from '../../client/client.js';
import type { KubeObject } from '../../client/types.js';
import type { WriteTracker } from './read-your-writes.js';

const WRITES = new Set([
  'create',
  'update',
  'updateStatus',
  'patch',
  'patchStatus',
  'apply',
  'applyStatus',
  'delete',
]);

type Fn = (...args: unknown[]) => unknown;

function record(
  api: ResourceApi<KubeObject>,
  tracker: WriteTracker,
  verb: string,
  args: unknown[],
  res: unknown,
) {
  const { group, kind } = api.descriptor;
  const obj = res as KubeObject | undefined;
  const meta = obj?.metadata;
  if (obj && obj.kind !== 'Status' && meta?.name && meta.resourceVersion) {
    if (
      meta.deletionTimestamp &&
      (meta.finalizers?.length ?? 0) === 0 &&
      !gracefullyTerminating(verb, args, meta)
    ) {
      // The write removed the last finalizer of an object being deleted: it is gone now.
      tracker.deleted({ group, kind, namespace: meta.namespace ?? '', name: meta.name });
      return;
    }
    tracker.written({ group, kind, namespace: meta.namespace ?? '', name: meta.name }, meta.resourceVersion);
    return;
  }
  if (verb === 'delete' && typeof args[0] === 'string') {
    // The object is gone at once (no finalizers): the cache must stop holding it.
    tracker.deleted({ group, kind, namespace: api.namespace, name: args[0] });
  }
}

/**
 * Whether a delete left the object in place, terminating for its grace period: a pod its
 * kubelet still has to stop is deleted later, by the kubelet. The cache must then show this
 * version (or, later, the object gone), not the object gone at once. A delete with
 * `gracePeriodSeconds: 0` removes it at once.
 */
function gracefullyTerminating(
  verb: string,
  args: unknown[],
  meta: NonNullable<KubeObject['metadata']>,
): boolean {
  if (verb !== 'delete' || (meta.deletionGracePeriodSeconds ?? 0) <= 0) return false;
  const options = args[1] as { gracePeriodSeconds?: number } | undefined;
  return options?.gracePeriodSeconds !== 0;
}

function trackApi<T extends KubeObject>(api: ResourceApi<T>, tracker: WriteTracker): ResourceApi<T> {
  return new Proxy(api, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof prop !== 'string' || typeof value !== 'function') return value;
      if (prop === 'inNamespace') {
        return (ns: string) => trackApi(target.inNamespace(ns), tracker);
      }
      if (!WRITES.has(prop)) return value;
      return async (...args: unknown[]) => {
        const res = await (value as Fn).apply(target, args);
        record(target as unknown as ResourceApi<KubeObject>, tracker, prop, args, res);
        return res;
      };
    },
  });
}

/**
 * Wraps a client so that its writes (object-level and through `api()`) are tracked.
 *
 * @example
 * ```ts
 * const client = trackingClient(raw, tracker);
 * await client.apply(cm, { fieldManager: 'x' }); // the cache will show this version or newer
 * ```
 */
export function trackingClient(client: Client, tracker: WriteTracker): Client {
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'api') {
        return (...args: Parameters<Client['api']>) => trackApi(target.api(...args), tracker);
      }
      if (prop === 'forObject') {
        return (obj: KubeObject) => trackApi(target.forObject(obj), tracker);
      }
      // Object-level writes call `this.forObject`, which the proxy answers with a tracked API.
      return Reflect.get(target, prop, receiver);
    },
  });
}
