import type { FieldSelectorInput, LabelSelectorInput } from '../../client/options.js';
import type { Clock } from '../clock.js';
import type { BackoffOptions } from './backoff.js';

/**
 * One change delivered by a {@link watcher}.
 *
 * @example
 * ```ts
 * for await (const ev of watcher(pods, { signal })) {
 *   if (ev.type === 'MODIFIED') console.log(ev.old.metadata?.resourceVersion, '→', ev.object.metadata?.resourceVersion);
 * }
 * ```
 *
 * - `ADDED`: an object the watcher did not know (`initialList`: part of the very first list).
 * - `MODIFIED`: a new version of a known object; `old` is the version delivered before.
 * - `DELETED`: the object is gone; its last state as the server reported it, or, when the
 *   deletion was only noticed by a relist (`finalStateUnknown`), the last state seen.
 * - `SYNCED`: a (re)list is complete: everything delivered so far is the state of the
 *   collection at `resourceVersion`. `initial` for the first one.
 */
export type WatcherEvent<T> =
  | { type: 'ADDED'; object: T; initialList: boolean }
  | { type: 'MODIFIED'; object: T; old: T }
  | { type: 'DELETED'; object: T; finalStateUnknown: boolean }
  | { type: 'SYNCED'; resourceVersion: string; initial: boolean };

/**
 * How the watcher reads the whole collection: paged lists, or one streaming watch-list.
 *
 * @example
 * ```ts
 * const mode: ListMode = 'watch-list';
 * ```
 */
export type ListMode = 'list' | 'watch-list';

/**
 * What the watcher is doing, for logs and metrics.
 *
 * @example
 * ```ts
 * watcher(pods, { signal, onLifecycle: (e) => { if (e.type === 'error') log.error(e.message) } });
 * ```
 *
 * - `relisting`: a (re)list starts (`reason`: the first one, an expired resourceVersion, or an error).
 * - `synced`: the (re)list is complete.
 * - `connected`: a watch stream was accepted by the server.
 * - `bookmark`: the server confirmed progress up to `resourceVersion` (a later resume starts
 *   there, so a quiet collection does not fall out of the server's history).
 * - `reconnecting`: a stream ended (the server closed it, or it was `idle` past the watchdog's
 *   bound) and is resumed from `resourceVersion`.
 * - `error`: a request failed; `auth` is set for 401 and 403, which need a human
 *   (credentials or RBAC) and are reported loudly.
 * - `backoff`: waiting before the next attempt.
 * - `fallback`: the server does not support watch-list; plain lists are used from now on.
 */
export type WatcherLifecycleEvent =
  | { type: 'relisting'; resource: string; reason: 'initial' | 'expired' | 'error'; mode: ListMode }
  | {
      type: 'synced';
      resource: string;
      resourceVersion: string;
      objects: number;
      mode: ListMode;
      durationMs: number;
    }
  | { type: 'connected'; resource: string; mode: 'watch' | 'watch-list'; resourceVersion: string | undefined }
  | { type: 'bookmark'; resource: string; resourceVersion: string }
  | { type: 'reconnecting'; resource: string; reason: 'closed' | 'idle'; resourceVersion: string | undefined }
  | {
      type: 'error';
      resource: string;
      verb: 'list' | 'watch';
      error: unknown;
      message: string;
      auth: boolean;
    }
  | { type: 'backoff'; resource: string; delayMs: number; attempt: number; cause: unknown }
  | { type: 'fallback'; resource: string; from: 'watch-list'; to: 'list'; cause: unknown };

/**
 * What a watcher remembers of the objects it delivered, to turn a relist into differences.
 * The watcher writes it before it delivers the events (a batch at a time), so a store passed
 * here is at least as new as any event a consumer is handling.
 *
 * @example
 * ```ts
 * const store = new Store<Pod>();
 * for await (const ev of watcher(pods, { memory: store.asWatcherMemory(), signal })) {
 *   if (ev.type === 'SYNCED') console.log(store.size, 'pods');
 * }
 * ```
 */
export interface WatcherMemory<T> {
  /** Number of remembered objects. */
  readonly size: number;
  get(key: string): T | undefined;
  /** Remembers `obj`; returns what to deliver (the same object, or the stored form of it). */
  set(key: string, obj: T): T;
  delete(key: string): void;
  /** Every remembered key. */
  keys(): Iterable<string>;
}

/**
 * Options of {@link watcher}.
 *
 * @example
 * ```ts
 * const options: WatcherOptions<Pod> = { signal, labelSelector: { app: 'web' }, backoff: { maxMs: 10_000 } };
 * ```
 */
export interface WatcherOptions<T> {
  /** Ends the watcher (and every request it has open). */
  signal?: AbortSignal;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: FieldSelectorInput;
  /**
   * Read the collection with a streaming watch-list (`sendInitialEvents=true`) instead of paged
   * lists: one request, no full list in memory. With `'auto'` (default) a server that rejects
   * it is detected and plain lists are used from then on.
   */
  watchList?: boolean | 'auto';
  /**
   * Page size of lists (default 500); 0 lists everything in one request. A kube-apiserver
   * answers the first list (at resourceVersion 0, from its watch cache) whole all the same.
   */
  pageSize?: number;
  /** Waits between failed attempts (default 0.8 s doubling to 30 s, jittered, reset after 2 min). */
  backoff?: BackoffOptions;
  /**
   * The watchdog: a stream with no event (bookmarks included) for this long is considered dead
   * and reopened from the last resourceVersion (default 3 min; bookmarks come every minute or so
   * from a real API server). 0 disables it.
   */
  idleTimeoutMs?: number;
  /** Server-side lifetime of each watch request (default: random 5–10 min, as client-go). */
  watchTimeoutSeconds?: number;
  /** Objects as PartialObjectMetadata only (metadata-only informers). */
  metadataOnly?: boolean;
  /** Applied to every object received, before anything else sees it. */
  transform?: (obj: T) => T;
  /**
   * Deferred decoding, for the informers of `kubeloop/runtime` only: while `when()` holds,
   * objects of watch streams travel as `DeferredObject`s (decoded by their reader, `transform`
   * applied then), with managedFields left out of their text when `dropManagedFields`.
   * @internal
   */
  defer?: { when: () => boolean; dropManagedFields: boolean };
  /**
   * While it returns false, changes are applied to `memory` but not delivered as events (an
   * informer without handlers has no use for them, only for its store); SYNCED always is.
   * @internal
   */
  delivering?: () => boolean;
  /** Where the delivered state is remembered (default: a private map). */
  memory?: WatcherMemory<T>;
  /**
   * Lifecycle events. Default: 401/403 errors are written as process warnings (never a
   * silent hang); everything else is quiet.
   */
  onLifecycle?: (event: WatcherLifecycleEvent) => void;
  /** Time source of backoffs and the watchdog (tests). */
  clock?: Clock;
  /** Source of backoff jitter (tests). */
  random?: () => number;
}
