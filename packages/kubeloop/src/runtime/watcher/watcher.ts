/**
 * The watcher: the first layer of the runtime (kube-rs's `watcher`, client-go's `Reflector`
 * without its store). It lists a collection, then watches it from the list's resourceVersion,
 * and turns everything that can go wrong on the way (dropped streams, 410 Gone, server errors,
 * silent connections) into one unbroken stream of changes:
 *
 * - every change arrives once, in order, as `ADDED`, `MODIFIED` or `DELETED`;
 * - after a relist (the watch's resourceVersion expired) only the differences are delivered,
 *   including `DELETED` for objects that vanished while nobody was watching;
 * - `SYNCED` marks the end of each complete (re)list.
 *
 * It stops only when its signal aborts (or its consumer stops iterating).
 */
import { ApiError, isBadRequest, isForbidden, isGone, isInvalid, isUnauthorized } from '../../api/status.js';
import type { ResourceApi } from '../../client/api.js';
import { deferredLineDecoder, isDeferred, managedFieldsCuttingDecoder } from '../../client/deferred.js';
import { formatGvk } from '../../client/descriptor.js';
import type { KubeObject } from '../../client/types.js';
import { eagerLineDecoder, type LineDecoder } from '../../client/watch.js';
import { toPartialObjectMetadata } from '../cache/transform.js';
import { type Clock, realClock, sleep } from '../clock.js';
import { objectKey } from '../keys.js';
import { Backoff } from './backoff.js';
import type {
  ListMode,
  WatcherEvent,
  WatcherLifecycleEvent,
  WatcherMemory,
  WatcherOptions,
} from './types.js';

/**
 * A stream ended almost as soon as it started, without an event: treated as a failure, so that
 * a server that keeps closing watches is not hammered.
 */
class ShortWatchError extends Error {
  constructor(ms: number) {
    super(`the watch ended after ${Math.round(ms)} ms without any event`);
    this.name = 'ShortWatchError';
  }
}

/** A watch-list stream ended before its `initial-events-end` bookmark. */
class IncompleteWatchListError extends Error {
  constructor() {
    super('the watch-list stream ended before all initial events were sent');
    this.name = 'IncompleteWatchListError';
  }
}

const rvOf = (obj: KubeObject): string | undefined =>
  isDeferred(obj) ? obj.resourceVersion : obj.metadata?.resourceVersion;
const keyOf = (obj: KubeObject): string => (isDeferred(obj) ? obj.key : objectKey(obj));

/** A 504 `ResourceVersionTooLarge`: the server is behind the resourceVersion asked for. */
const isTooLargeResourceVersion = (err: unknown): boolean =>
  err instanceof ApiError &&
  err.code === 504 &&
  (err.details?.causes ?? []).some((c) => c.reason === 'ResourceVersionTooLarge');

/**
 * How a watcher names its collection in messages.
 *
 * @example
 * ```ts
 * describeCollection(client.api(Deployment, 'web')); // 'deployments.apps (Deployment.v1.apps) in namespace "web"'
 * ```
 */
export function describeCollection(
  api: ResourceApi<KubeObject>,
  selectors: { labelSelector?: unknown; fieldSelector?: unknown } = {},
): string {
  const d = api.descriptor;
  const what = d.plural ? `${d.plural}${d.group ? `.${d.group}` : ''} (${formatGvk(d)})` : formatGvk(d);
  const where = api.namespace ? ` in namespace "${api.namespace}"` : '';
  const sel = [
    selectors.labelSelector !== undefined ? 'labelSelector' : '',
    selectors.fieldSelector !== undefined ? 'fieldSelector' : '',
  ].filter(Boolean);
  return `${what}${where}${sel.length ? ` (with ${sel.join(' and ')})` : ''}`;
}

/**
 * The default lifecycle listener: authentication and authorization failures become process
 * warnings, so that they are never silent.
 *
 * @example
 * ```ts
 * watcher(pods, { onLifecycle: (e) => { warnOnAuthErrors(e); metrics.record(e); } });
 * ```
 */
export function warnOnAuthErrors(event: WatcherLifecycleEvent): void {
  if (event.type === 'error' && event.auth)
    process.emitWarning(event.message, { type: 'KubeloopWatcherError' });
}

class MapMemory<T> implements WatcherMemory<T> {
  private readonly map = new Map<string, T>();
  get size() {
    return this.map.size;
  }
  get(key: string) {
    return this.map.get(key);
  }
  set(key: string, obj: T) {
    this.map.set(key, obj);
    return obj;
  }
  delete(key: string) {
    this.map.delete(key);
  }
  keys() {
    return this.map.keys();
  }
}

/**
 * Watches a collection: lists it (as a streaming watch-list where the server supports it, else
 * first at resourceVersion 0 from the server's cache, as client-go does), then watches from the list's resourceVersion with bookmarks; resumes dropped streams
 * from the last resourceVersion seen, relists on 410 Gone delivering only the differences,
 * backs off on errors (jittered, 0.8 s to 30 s), and reopens a stream gone quiet. Runs until
 * `signal` aborts.
 *
 * @example
 * ```ts
 * const ac = new AbortController();
 * for await (const ev of watcher(client.api(ConfigMap, 'default'), { signal: ac.signal })) {
 *   if (ev.type === 'SYNCED') console.log('up to date at', ev.resourceVersion);
 *   else console.log(ev.type, ev.object.metadata?.name);
 * }
 * ```
 */
export async function* watcher<T extends KubeObject>(
  api: ResourceApi<T>,
  options: WatcherOptions<T> = {},
): AsyncGenerator<WatcherEvent<T>, void, undefined> {
  for await (const batch of watcherBatches(api, options)) yield* batch;
}

/**
 * The {@link watcher}'s events in batches, as they come off the network (all the changes of a
 * received chunk, or of a list page): for consumers of many events, such as informers. The
 * memory is up to date with a whole batch before it is delivered.
 *
 * @example
 * ```ts
 * for await (const batch of watcherBatches(api, { signal })) for (const ev of batch) handle(ev);
 * ```
 */
export function watcherBatches<T extends KubeObject>(
  api: ResourceApi<T>,
  options: WatcherOptions<T> = {},
): AsyncGenerator<WatcherEvent<T>[], void, undefined> {
  return new WatcherRun(api, options).run();
}

type Batch<T> = WatcherEvent<T>[];

class WatcherRun<T extends KubeObject> {
  private readonly signal: AbortSignal;
  private readonly clock: Clock;
  private readonly backoff: Backoff;
  private readonly memory: WatcherMemory<T>;
  private readonly report: (event: WatcherLifecycleEvent) => void;
  private readonly resource: string;
  private readonly idleTimeoutMs: number;
  private readonly pageSize: number;
  /** Where the next watch resumes; undefined when the collection must be (re)listed. */
  private rv: string | undefined;
  private relistReason: 'initial' | 'expired' | 'error' = 'initial';
  private watchListMode: boolean | 'auto';
  /** A continuation expired: list the next time in one request. */
  private fullList = false;
  /** The list under way is at resourceVersion 0 (from the server's cache). */
  private listingFromCache = false;
  /** The server could not serve a list at resourceVersion 0: list from storage. */
  private cacheUnavailable = false;
  private synced = false;
  /** Events delivered since the last failure: a failure after a healthy stream retries at once. */
  private healthy = false;
  private verb: 'list' | 'watch' = 'list';
  /** Events applied to the memory and not yet delivered. */
  private out: Batch<T> = [];
  /** Decodes the lines of watch streams, when decoding is deferred. */
  private readonly lineDecoder: LineDecoder<T> | undefined;

  constructor(
    private readonly api: ResourceApi<T>,
    private readonly o: WatcherOptions<T>,
  ) {
    this.signal = o.signal ?? new AbortController().signal;
    this.clock = o.clock ?? realClock;
    this.backoff = new Backoff(o.backoff, this.clock, o.random);
    this.memory = o.memory ?? new MapMemory<T>();
    const listener = o.onLifecycle ?? warnOnAuthErrors;
    this.report = (event) => {
      try {
        listener(event);
      } catch {
        // A broken listener must not break the watcher.
      }
    };
    this.resource = describeCollection(api as ResourceApi<KubeObject>, o);
    this.idleTimeoutMs = o.idleTimeoutMs ?? 180_000;
    this.pageSize = o.pageSize ?? 500;
    this.watchListMode = o.watchList ?? 'auto';
    const defer = o.defer;
    if (defer) {
      const deferred = deferredLineDecoder<T>({
        dropManagedFields: defer.dropManagedFields,
        finish: (obj) => this.prepare(obj as T),
      });
      // Decoded at once (handlers, indexes): managedFields, if dropped, are not even built.
      const eager = defer.dropManagedFields ? managedFieldsCuttingDecoder<T>() : eagerLineDecoder<T>;
      this.lineDecoder = (bytes) => (defer.when() ? deferred(bytes) : eager(bytes));
    }
  }

  /** The events applied so far, to deliver. */
  private take(): Batch<T> {
    const out = this.out;
    this.out = [];
    return out;
  }

  async *run(): AsyncGenerator<Batch<T>, void, undefined> {
    while (!this.signal.aborted) {
      try {
        if (this.rv === undefined) {
          if (this.watchListMode) yield* this.watch(true);
          else {
            yield* this.list();
            yield* this.watch(false);
          }
        } else yield* this.watch(false);
      } catch (err) {
        // What was applied to the memory before the failure is delivered all the same.
        if (this.out.length > 0) yield this.take();
        if (this.signal.aborted) return;
        const delayMs = this.failed(err);
        if (delayMs > 0) {
          try {
            await sleep(this.clock, delayMs, this.signal);
          } catch {
            return;
          }
        }
      }
    }
  }

  /** Sorts out a failure; returns how long to wait before the next attempt. */
  private failed(err: unknown): number {
    const wasHealthy = this.healthy;
    this.healthy = false;
    if (this.verb === 'list' && this.listingFromCache && (isGone(err) || isTooLargeResourceVersion(err))) {
      // The server cannot serve resourceVersion 0 (its cache is not there, or behind what it was
      // asked before): a consistent list from storage, at once, as client-go's reflector does.
      this.cacheUnavailable = true;
      return 0;
    }
    if (isGone(err) || isTooLargeResourceVersion(err)) {
      // The resourceVersion is no longer served: only a relist can catch up.
      this.rv = undefined;
      this.relistReason = 'expired';
      return wasHealthy ? 0 : this.wait(err);
    }
    if (
      this.verb === 'watch' &&
      this.rv === undefined &&
      this.watchListMode === 'auto' &&
      (isInvalid(err) || isBadRequest(err))
    ) {
      this.watchListMode = false;
      this.report({ type: 'fallback', resource: this.resource, from: 'watch-list', to: 'list', cause: err });
      return 0;
    }
    if (err instanceof IncompleteWatchListError) this.relistReason = 'error';
    const auth = isUnauthorized(err) || isForbidden(err) || (err instanceof ApiError && err.code === 403);
    this.report({
      type: 'error',
      resource: this.resource,
      verb: this.verb,
      error: err,
      message: this.describeError(err, auth),
      auth,
    });
    if (this.rv === undefined && this.synced) this.relistReason = 'error';
    return this.wait(err);
  }

  private wait(cause: unknown): number {
    // A server that says how long to wait (429, 503 with Retry-After) is taken at its word.
    const asked = cause instanceof ApiError && cause.retryAfter !== undefined ? cause.retryAfter * 1000 : 0;
    const delayMs = Math.max(this.backoff.next(), asked);
    this.report({ type: 'backoff', resource: this.resource, delayMs, attempt: this.backoff.attempt, cause });
    return delayMs;
  }

  private describeError(err: unknown, auth: boolean): string {
    const what = err instanceof Error ? err.message : String(err);
    if (!auth) return `watcher of ${this.resource}: ${this.verb} failed: ${what}`;
    const code = (err as ApiError).code;
    const why =
      code === 401
        ? 'the server does not accept the client credentials (401 Unauthorized); renew them'
        : `the client is not allowed to ${this.verb} them (403 Forbidden); grant "${this.verb}" on this resource in RBAC`;
    return `watcher of ${this.resource}: cannot ${this.verb}: ${why}: ${what}`;
  }

  /** Makes a received object ready for delivery (a deferred one is, when it is decoded). */
  private prepare(obj: T): T {
    if (isDeferred(obj)) return obj;
    const out = this.o.metadataOnly ? (toPartialObjectMetadata(obj) as unknown as T) : obj;
    return this.o.transform ? this.o.transform(out) : out;
  }

  /**
   * An object of a (re)list: applied and queued for delivery when new or changed. `seen` is
   * undefined when nothing was known when the relist began (the first list): then nothing can
   * be stale or gone, and there is nothing to track.
   */
  private relisted(obj: T, seen: Set<string> | undefined): void {
    const key = keyOf(obj);
    if (seen === undefined) {
      this.deliver({ type: 'ADDED', object: this.memory.set(key, obj), initialList: !this.synced });
      return;
    }
    seen.add(key);
    const old = this.memory.get(key);
    if (old === undefined) {
      this.deliver({ type: 'ADDED', object: this.memory.set(key, obj), initialList: !this.synced });
    } else if (rvOf(old) !== rvOf(obj)) {
      this.deliver({ type: 'MODIFIED', object: this.memory.set(key, obj), old });
    }
  }

  /**
   * Queues an object's event for delivery, unless the consumer wants none now
   * ({@link WatcherOptions.delivering}): the memory is up to date either way.
   */
  private deliver(ev: WatcherEvent<T>): void {
    if (!this.o.delivering || this.o.delivering()) this.out.push(ev);
  }

  /** The end of a (re)list: objects not seen in it are gone; then SYNCED. */
  private finishRelist(
    seen: Set<string> | undefined,
    resourceVersion: string,
    mode: ListMode,
    started: number,
  ) {
    const gone: string[] = [];
    if (seen) for (const key of this.memory.keys()) if (!seen.has(key)) gone.push(key);
    const objects = seen ? seen.size : this.memory.size;
    // The keys of a large collection: not to be kept alive by a generator frame while watching.
    seen?.clear();
    for (const key of gone) {
      const old = this.memory.get(key);
      this.memory.delete(key);
      if (old !== undefined) this.deliver({ type: 'DELETED', object: old, finalStateUnknown: true });
    }
    this.rv = resourceVersion;
    this.fullList = false;
    const initial = !this.synced;
    this.synced = true;
    this.report({
      type: 'synced',
      resource: this.resource,
      resourceVersion,
      objects,
      mode,
      durationMs: this.clock.now() - started,
    });
    this.out.push({ type: 'SYNCED', resourceVersion, initial });
  }

  /** A change seen by a watch: applied and queued for delivery unless it is already known. */
  private changed(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void {
    const key = keyOf(obj);
    const old = this.memory.get(key);
    if (type === 'DELETED') {
      if (old === undefined) return;
      this.memory.delete(key);
      this.deliver({ type: 'DELETED', object: obj, finalStateUnknown: false });
    } else if (old === undefined) {
      this.deliver({ type: 'ADDED', object: this.memory.set(key, obj), initialList: false });
    } else if (rvOf(old) !== rvOf(obj)) {
      this.deliver({ type: 'MODIFIED', object: this.memory.set(key, obj), old });
    }
  }

  private selectors() {
    return {
      ...(this.o.labelSelector !== undefined && { labelSelector: this.o.labelSelector }),
      ...(this.o.fieldSelector !== undefined && { fieldSelector: this.o.fieldSelector }),
    };
  }

  /**
   * A (re)list, delivered as differences. The first one is asked as client-go's reflector asks
   * it: at `resourceVersion=0`, which a kube-apiserver serves from its watch cache in one answer
   * whatever the limit (a server without that cache pages it, and the pages are followed). A
   * later relist, after an expired resourceVersion, must not go back in time: it is a consistent
   * paged list from storage (whole after an expired continuation). Answers are decoded as they
   * arrive, in batches: a whole collection is never held as one text.
   */
  private async *list(): AsyncGenerator<Batch<T>, void, undefined> {
    this.verb = 'list';
    this.report({ type: 'relisting', resource: this.resource, reason: this.relistReason, mode: 'list' });
    const started = this.clock.now();
    const seen = this.memory.size > 0 ? new Set<string>() : undefined;
    this.listingFromCache = this.relistReason === 'initial' && !this.cacheUnavailable;
    const limit = this.fullList || this.pageSize === 0 ? undefined : this.pageSize;
    let resourceVersion = '';
    let cont: string | undefined;
    let pages = 0;
    try {
      do {
        const batches = this.api.listBatches({
          ...this.selectors(),
          signal: this.signal,
          ...(this.o.metadataOnly && { metadataOnly: true }),
          ...(this.lineDecoder && { lineDecoder: this.lineDecoder as LineDecoder<KubeObject> }),
          ...(limit !== undefined && { limit }),
          // resourceVersion and continue are exclusive: the token carries the revision.
          ...(cont ? { continue: cont } : this.listingFromCache && { resourceVersion: '0' }),
        });
        let r = await batches.next();
        try {
          for (; !r.done; r = await batches.next()) {
            for (const item of r.value) this.relisted(this.prepare(item), seen);
            if (this.out.length > 0) yield this.take();
          }
        } finally {
          // The consumer stopped while a page was streaming: its connection is let go.
          if (!r.done) await batches.return(undefined as never);
        }
        pages++;
        resourceVersion = r.value.metadata.resourceVersion ?? resourceVersion;
        cont = r.value.metadata.continue || undefined;
      } while (cont);
    } catch (err) {
      // The continuation expired (the list took longer than the server keeps history).
      if (pages > 0 && isGone(err)) this.fullList = true;
      throw err;
    }
    this.finishRelist(seen, resourceVersion, 'list', started);
    yield this.take();
  }

  /**
   * One watch stream. With `initial` it is a watch-list: the current state as ADDED events up
   * to a bookmark marking their end, delivered as the differences of a relist, then changes.
   */
  private async *watch(initial: boolean): AsyncGenerator<Batch<T>, void, undefined> {
    this.verb = 'watch';
    const started = this.clock.now();
    if (initial) {
      this.report({
        type: 'relisting',
        resource: this.resource,
        reason: this.relistReason,
        mode: 'watch-list',
      });
    }
    const ac = new AbortController();
    const onAbort = () => ac.abort(this.signal.reason);
    // The signal may have aborted while a list before this watch was being delivered.
    if (this.signal.aborted) return;
    this.signal.addEventListener('abort', onAbort, { once: true });
    let lastActivity = started;
    let idle = false;
    let watchdog: { cancel(): void } | undefined;
    const check = () => {
      const quiet = this.clock.now() - lastActivity;
      if (quiet >= this.idleTimeoutMs) {
        idle = true;
        ac.abort(new Error(`watch idle for ${Math.round(quiet)} ms`));
      } else watchdog = this.clock.setTimer(check, this.idleTimeoutMs - quiet, { unref: true });
    };
    if (this.idleTimeoutMs > 0) watchdog = this.clock.setTimer(check, this.idleTimeoutMs, { unref: true });

    // While the initial events of a watch-list arrive: the keys seen (none to track when nothing
    // was known before); `relisting` is cleared at their end bookmark.
    let relisting = initial;
    let seen = initial && this.memory.size > 0 ? new Set<string>() : undefined;
    let events = 0;
    const mode = initial ? 'watch-list' : 'watch';
    const from = initial ? undefined : this.rv;
    try {
      const stream = this.api.watchBatches({
        ...this.selectors(),
        ...(from !== undefined && { resourceVersion: from }),
        allowWatchBookmarks: true,
        ...(initial && { sendInitialEvents: true }),
        timeoutSeconds: this.o.watchTimeoutSeconds ?? Math.floor(300 + Math.random() * 300),
        signal: ac.signal,
        ...(this.o.metadataOnly && { metadataOnly: true }),
        ...(this.lineDecoder && { lineDecoder: this.lineDecoder }),
        onConnect: () => {
          lastActivity = this.clock.now();
          this.report({ type: 'connected', resource: this.resource, mode, resourceVersion: from });
        },
      });
      for await (const batch of stream) {
        lastActivity = this.clock.now();
        events += batch.length;
        for (const ev of batch) {
          switch (ev.type) {
            case 'ADDED':
            case 'MODIFIED':
            case 'DELETED': {
              const obj = this.prepare(ev.object);
              if (relisting) {
                // Initial events of a watch-list: the state to reconcile against what was known.
                if (ev.type !== 'DELETED') this.relisted(obj, seen);
              } else {
                this.changed(ev.type, obj);
                if (ev.resourceVersion) this.rv = ev.resourceVersion;
                this.healthy = true;
              }
              break;
            }
            case 'BOOKMARK':
              if (!relisting) {
                this.rv = ev.resourceVersion;
                this.healthy = true;
                this.report({
                  type: 'bookmark',
                  resource: this.resource,
                  resourceVersion: ev.resourceVersion,
                });
              } else if (ev.initialEventsEnd) {
                // From here on the stream carries changes after the bookmark, like any watch.
                this.finishRelist(seen, ev.resourceVersion, 'watch-list', started);
                relisting = false;
                seen = undefined;
              }
              break;
            case 'ERROR':
              throw ev.error;
          }
        }
        if (this.out.length > 0) yield this.take();
      }
    } finally {
      watchdog?.cancel();
      this.signal.removeEventListener('abort', onAbort);
    }
    this.afterStream(relisting, idle, events, started);
  }

  /** A stream ended without an error: resume, or count it as a failure when it was useless. */
  private afterStream(incomplete: boolean, idle: boolean, events: number, started: number): void {
    if (this.signal.aborted) return;
    if (incomplete) throw new IncompleteWatchListError();
    if (idle) {
      this.report({
        type: 'reconnecting',
        resource: this.resource,
        reason: 'idle',
        resourceVersion: this.rv,
      });
      return;
    }
    const ms = this.clock.now() - started;
    if (events === 0 && ms < 1000) throw new ShortWatchError(ms);
    this.report({
      type: 'reconnecting',
      resource: this.resource,
      reason: 'closed',
      resourceVersion: this.rv,
    });
  }
}

export type {
  ListMode,
  WatcherEvent,
  WatcherLifecycleEvent,
  WatcherMemory,
  WatcherOptions,
} from './types.js';
