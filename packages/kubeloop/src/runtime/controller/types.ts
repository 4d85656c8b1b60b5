/**
 * The vocabulary of a reconcile: what it is asked to do, what it gets, what it answers.
 */
import type { Logger } from 'pino';
import type { Client } from '../../client/client.js';
import type { ResourceDescriptor } from '../../client/descriptor.js';
import type { FieldSelectorInput, LabelSelectorInput } from '../../client/options.js';
import type { KubeObject } from '../../client/types.js';
import type { PartialObjectMetadata } from '../cache/transform.js';

/**
 * Which object to reconcile: its namespace (`''` for cluster-scoped kinds) and name.
 *
 * @example
 * ```ts
 * const req: ReconcileRequest = { namespace: 'default', name: 'web' };
 * ```
 */
export interface ReconcileRequest {
  readonly namespace: string;
  readonly name: string;
}

/**
 * What a reconcile answers: nothing (done until the next change), or a later look. A thrown
 * error retries with rate-limited backoff (unless it is a `TerminalError`).
 *
 * @example
 * ```ts
 * return { requeueAfter: 30_000 }; // look again in 30 s
 * ```
 */
export type ReconcileResult = undefined | { readonly requeueAfter?: number; readonly requeue?: boolean };

/**
 * Reads from the manager's shared cache. Reads see every write the manager's client made
 * (read-your-writes): a read of an object the controller just wrote waits until the cache
 * holds that write (or, past the manager's `readYourWritesTimeoutMs`, reads the server).
 *
 * @example
 * ```ts
 * const dep = await cache.get(Deployment, foo.spec.deploymentName, foo.metadata?.namespace);
 * const pods = await cache.list(Pod, { namespace: 'apps', labelSelector: { app: 'web' } });
 * ```
 */
export interface CacheReader {
  /** One object, or `undefined` when it does not exist. */
  get<T extends KubeObject>(
    kind: ResourceDescriptor<T>,
    name: string,
    namespace?: string,
  ): Promise<T | undefined>;
  /**
   * Objects of a kind (all namespaces unless `namespace`), optionally filtered by labels and by
   * fields: `metadata.name`, `metadata.namespace`, and fields given an index with
   * `Manager.indexField` or the builder's `indexField` (controller-runtime's `MatchingFields`).
   */
  list<T extends KubeObject>(
    kind: ResourceDescriptor<T>,
    options?: { namespace?: string; labelSelector?: LabelSelectorInput; fieldSelector?: FieldSelectorInput },
  ): Promise<T[]>;
  /**
   * The metadata of one object (`PartialObjectMetadata`), from the shared metadata-only informer
   * of its kind (the one `watchesMetadata` uses), or `undefined` when it does not exist. These
   * reads do not wait for the manager's own writes: read what the controller writes with `get`.
   */
  getMetadata(
    kind: ResourceDescriptor,
    name: string,
    namespace?: string,
  ): Promise<PartialObjectMetadata | undefined>;
}

/**
 * The manager's cache read as it is now, synchronously (client-go's listers): what a map
 * function of `watches` reads to find the objects an event concerns, as controller-runtime's map
 * functions list from the cache. It does not wait for the manager's own writes (a map function
 * cannot wait); the reconcile it triggers reads through a {@link CacheReader}, which does. Read
 * the kinds the controller watches (the primary kind and those of `owns` and `watches`): their
 * informers are synced before any event reaches a map function.
 *
 * @example
 * ```ts
 * controller(ReplicaSet).watches(Pod, (pod, cache) =>
 *   cache
 *     .list(ReplicaSet, { namespace: pod.metadata!.namespace! })
 *     .filter((rs) => selects(rs, pod))
 *     .map((rs) => ({ namespace: rs.metadata!.namespace!, name: rs.metadata!.name! })),
 * );
 * ```
 */
export interface CacheLister {
  /** One object, or `undefined` when the cache holds none. */
  get<T extends KubeObject>(kind: ResourceDescriptor<T>, name: string, namespace?: string): T | undefined;
  /** Objects of a kind, filtered as {@link CacheReader.list} filters them. */
  list<T extends KubeObject>(
    kind: ResourceDescriptor<T>,
    options?: { namespace?: string; labelSelector?: LabelSelectorInput; fieldSelector?: FieldSelectorInput },
  ): T[];
}

/**
 * Records Kubernetes Events (`events.k8s.io/v1`) about one object; repeats of the same event
 * are aggregated into a series instead of piling up.
 *
 * @example
 * ```ts
 * ctx.events.normal('Scaled', `scaled to ${n} replicas`);
 * ctx.events.warning('InvalidSpec', 'spec.image is empty');
 * ```
 */
export interface ObjectEventRecorder {
  normal(reason: string, note: string, action?: string): void;
  warning(reason: string, note: string, action?: string): void;
}

/**
 * What a reconcile function gets beside the object.
 *
 * @example
 * ```ts
 * controller(Foo).reconcile(async (foo, { client, cache, log, events, signal }) => { ... });
 * ```
 */
export interface ReconcileContext {
  /** The manager's client: writes through it are tracked for read-your-writes. */
  readonly client: Client;
  /** Reads from the shared cache. */
  readonly cache: CacheReader;
  /** A logger with controller, kind, namespace, name and reconcileID. */
  readonly log: Logger;
  /** Events about the reconciled object. */
  readonly events: ObjectEventRecorder;
  /** Aborts at the reconcile timeout, when leadership is lost, and past the shutdown grace period. */
  readonly signal: AbortSignal;
  /** The key being reconciled. */
  readonly request: ReconcileRequest;
  /** A unique id of this reconcile (also in every log line). */
  readonly reconcileID: string;
  /** The controller's name. */
  readonly controller: string;
}

/**
 * What a reconcile function returns, synchronously or not: a {@link ReconcileResult} or nothing.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: an async function that returns nothing is a Promise<void>.
export type Reconciled = ReconcileResult | void;

/** The business logic: bring the world in line with `obj`. */
export type ReconcileFn<T> = (obj: T, ctx: ReconcileContext) => Promise<Reconciled> | Reconciled;

/**
 * Called instead of the reconcile function when the object is gone from the cache. `last` is
 * the object's last state the cache saw before its deletion, when this controller saw it
 * deleted (undefined when the object was already gone when the controller started, or when
 * the deletion was seen by an earlier reconcile of the same key).
 */
export type GoneFn<T = KubeObject> = (
  request: ReconcileRequest,
  ctx: ReconcileContext,
  last: T | undefined,
) => Promise<Reconciled> | Reconciled;
