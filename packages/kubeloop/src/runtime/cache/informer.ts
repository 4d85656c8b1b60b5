/**
 * The informer: a watcher that keeps a store (kube-rs's `reflector`, client-go's
 * `SharedIndexInformer`) and tells handlers about every change. Handlers run in order, after
 * the store was updated (it is at least as new as the event, as in client-go), synchronously;
 * they should be quick (typically: put a key on a workqueue).
 */
import { isForbidden, isUnauthorized } from '../../api/status.js';
import type { ResourceApi } from '../../client/api.js';
import type { KubeObject } from '../../client/types.js';
import {
  describeCollection,
  type WatcherEvent,
  type WatcherLifecycleEvent,
  type WatcherOptions,
  warnOnAuthErrors,
  watcherBatches,
} from '../watcher/watcher.js';
import { type IndexFunc, Store } from './store.js';
import { deepFreeze, type PartialObjectMetadata, stripManagedFields, type Transform } from './transform.js';

/**
 * What an informer tells its handlers. Every callback is optional.
 *
 * @example
 * ```ts
 * informer.addEventHandler({
 *   onAdd: (pod) => queue.add(objectKey(pod)),
 *   onUpdate: (_old, pod) => queue.add(objectKey(pod)),
 *   onDelete: (pod) => queue.add(objectKey(pod)),
 * });
 * ```
 */
export interface EventHandler<T> {
  /** A new object; `isInInitialList` while the first list is delivered (and for handlers added late, for the objects already cached). */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** A new version of an object. */
  onUpdate?(oldObj: T, newObj: T): void;
  /** An object is gone; `finalStateUnknown` when the deletion was noticed by a relist and `obj` is the last state seen. */
  onDelete?(obj: T, finalStateUnknown: boolean): void;
}

/**
 * Lifecycle events of an informer: its watcher's, plus failures of handlers.
 *
 * @example
 * ```ts
 * new Informer(api, { onLifecycle: (e) => { if (e.type === 'handlerError') log.error(e.error); } });
 * ```
 */
export type InformerLifecycleEvent =
  | WatcherLifecycleEvent
  | { type: 'handlerError'; resource: string; error: unknown };

/**
 * Options of an {@link Informer}.
 *
 * @example
 * ```ts
 * new Informer(client.api(Pod, ''), { indexers: { node: (p) => p.spec?.nodeName }, watchList: false });
 * ```
 */
export interface InformerOptions<T>
  extends Omit<WatcherOptions<T>, 'signal' | 'memory' | 'transform' | 'onLifecycle' | 'metadataOnly'> {
  /** Rewrites objects before they are cached (default {@link stripManagedFields}; `null`: none). */
  transform?: Transform<T> | null;
  /** Freeze cached objects (default true; see `Store`). */
  freeze?: boolean;
  /** Indexes of the store. */
  indexers?: Record<string, IndexFunc<T>>;
  /** Lifecycle events (default: 401/403 errors become process warnings). */
  onLifecycle?: (event: InformerLifecycleEvent) => void;
}

/**
 * Why {@link Informer.waitForSync} gave up.
 *
 * @example
 * ```ts
 * if (err instanceof InformerSyncError && err.reason === 'auth') process.exitCode = 2;
 * ```
 */
export type SyncFailure = 'timeout' | 'auth' | 'stopped' | 'aborted';

/**
 * An informer did not sync: says which one, and why (its state and last error).
 *
 * @example
 * ```ts
 * try { await informer.waitForSync({ timeoutMs: 30_000 }); }
 * catch (err) { if (err instanceof InformerSyncError && err.reason === 'auth') fixRbac(); }
 * ```
 */
export class InformerSyncError extends Error {
  constructor(
    message: string,
    /** The collection of the informer (`foos.example.com (Foo.v1.example.com) in namespace "x"`). */
    readonly informer: string,
    readonly reason: SyncFailure,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'InformerSyncError';
  }
}

interface SyncWaiter {
  resolve: () => void;
  reject: (err: InformerSyncError) => void;
  /** Rejected at a 401/403 (else it waits through them, for access granted later). */
  failOnAuth: boolean;
}

/**
 * Options of {@link Informer.waitForSync}.
 *
 * @example
 * ```ts
 * await informer.waitForSync({ timeoutMs: 120_000, failOnAuth: false });
 * ```
 */
export interface WaitForSyncOptions {
  /** Give up after this long (default: no limit). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Reject at once when the server refuses the credentials or permissions (401/403; default
   * true). With false the wait goes on while the informer retries — a manager whose RBAC is
   * being fixed syncs as soon as it is — and a timeout's error names the last refusal.
   */
  failOnAuth?: boolean;
}

/**
 * Keeps a {@link Store} of one collection (a kind, in a namespace or all, optionally narrowed
 * by selectors) in step with the server and calls handlers on every change. Prefer getting
 * informers from an {@link InformerFactory}, which shares one per collection.
 *
 * @example
 * ```ts
 * const informer = new Informer(client.api(ConfigMap, ''));
 * informer.addEventHandler({ onAdd: (cm) => console.log('cm', cm.metadata?.name) });
 * informer.start();
 * await informer.waitForSync({ timeoutMs: 30_000 });
 * console.log(informer.store.list({ namespace: 'default' }).length);
 * await informer.stop();
 * ```
 */
export class Informer<T extends KubeObject> {
  /** The cache; read it through its lister methods. */
  readonly store: Store<T>;
  /** The collection, for messages: `configmaps (ConfigMap.v1) in namespace "default"`. */
  readonly description: string;
  private handlers: readonly EventHandler<T>[] = [];
  private readonly report: (event: InformerLifecycleEvent) => void;
  private controller: AbortController | undefined;
  private done: Promise<void> | undefined;
  private synced = false;
  private stopped = false;
  private syncRv: string | undefined;
  private error: unknown;
  private authError: unknown;
  private authMessage = '';
  private state = 'not started';
  private waiters: SyncWaiter[] = [];

  constructor(
    private readonly api: ResourceApi<T>,
    private readonly options: InformerOptions<T> & { metadataOnly?: boolean } = {},
  ) {
    this.store = new Store<T>({ indexers: options.indexers ?? {}, freeze: options.freeze ?? true });
    this.description = describeCollection(api as ResourceApi<KubeObject>, options);
    const user = options.onLifecycle ?? warnOnAuthErrors;
    this.report = (event) => {
      this.observe(event);
      try {
        user(event as WatcherLifecycleEvent);
      } catch {
        // A broken lifecycle listener must not stop the informer.
      }
    };
  }

  /**
   * An informer of the metadata of a kind only (`PartialObjectMetadata`): for kinds a
   * controller only maps to owners, at a fraction of the memory.
   *
   * @example
   * ```ts
   * const pods = Informer.metadata(client.api(Pod, ''));
   * pods.addEventHandler({ onAdd: (p) => enqueueOwner(p.metadata.ownerReferences) });
   * ```
   */
  static metadata(
    api: ResourceApi<KubeObject>,
    options: InformerOptions<PartialObjectMetadata> = {},
  ): Informer<PartialObjectMetadata> {
    return new Informer(api as unknown as ResourceApi<PartialObjectMetadata>, {
      ...options,
      metadataOnly: true,
    });
  }

  /** True once the first complete list is in the store. */
  get hasSynced(): boolean {
    return this.synced;
  }

  /** The resourceVersion of the last complete (re)list. */
  get lastSyncResourceVersion(): string | undefined {
    return this.syncRv;
  }

  /** The last error of the underlying watcher (cleared by the next sync). */
  get lastError(): unknown {
    return this.error;
  }

  /** Whether it was started and not stopped. */
  get running(): boolean {
    return this.done !== undefined && !this.stopped;
  }

  /** The ResourceApi it watches. */
  get resourceApi(): ResourceApi<T> {
    return this.api;
  }

  /**
   * Adds a handler; returns the function that removes it. A handler added after the informer
   * started first receives every cached object as `onAdd(obj, true)`, before any later change.
   */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.handlers = [...this.handlers, handler];
    if (this.done !== undefined) {
      for (const obj of this.store.list()) this.call(() => handler.onAdd?.(obj, true));
    }
    return () => {
      this.handlers = this.handlers.filter((h) => h !== handler);
    };
  }

  /**
   * Starts listing and watching; runs until `stop()` or until `signal` aborts. Calling it
   * again does nothing.
   */
  start(signal?: AbortSignal): this {
    if (this.done !== undefined) return this;
    const controller = new AbortController();
    this.controller = controller;
    const onAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    this.state = 'listing';
    this.done = this.run(controller.signal).finally(() => signal?.removeEventListener('abort', onAbort));
    return this;
  }

  /** Stops watching and waits until every request and timer of the informer is gone. */
  async stop(): Promise<void> {
    this.controller?.abort(new Error('informer stopped'));
    await this.done;
    this.stopped = true;
  }

  /**
   * Resolves once the informer has synced. Rejects with {@link InformerSyncError} when
   * `timeoutMs` passes (default: no limit), when `signal` aborts, when the informer stops, and
   * at once when the server refuses the informer's credentials or permissions (401/403) unless
   * `failOnAuth` is false.
   */
  waitForSync(options: WaitForSyncOptions = {}): Promise<void> {
    const failOnAuth = options.failOnAuth ?? true;
    if (this.synced) return Promise.resolve();
    if (this.stopped) return Promise.reject(this.syncError('stopped'));
    if (failOnAuth && this.authError !== undefined)
      return Promise.reject(this.syncError('auth', this.authError));
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.waiters = this.waiters.filter((w) => w !== waiter);
      };
      const waiter: SyncWaiter = {
        failOnAuth,
        resolve: () => {
          cleanup();
          resolve();
        },
        reject: (err) => {
          cleanup();
          reject(err);
        },
      };
      const onAbort = () => waiter.reject(this.syncError('aborted'));
      if (options.signal?.aborted) {
        reject(this.syncError('aborted'));
        return;
      }
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(
          () => waiter.reject(this.syncError('timeout', undefined, options.timeoutMs)),
          options.timeoutMs,
        );
      }
      this.waiters.push(waiter);
    });
  }

  private syncError(reason: SyncFailure, cause: unknown = this.error, timeoutMs?: number): InformerSyncError {
    const last = cause instanceof Error ? cause.message : cause === undefined ? undefined : String(cause);
    const what = `informer of ${this.description}`;
    let message: string;
    switch (reason) {
      case 'timeout':
        message = `${what} did not sync within ${timeoutMs} ms: ${this.done ? this.state : 'it was never started'}`;
        break;
      case 'auth':
        return new InformerSyncError(this.authMessage, this.description, reason, cause);
      case 'stopped':
        message = `${what} was stopped before it synced (${this.state})`;
        break;
      default:
        message = `${what}: waiting for its sync was aborted (${this.state})`;
    }
    if (last !== undefined) message += `; last error: ${last}`;
    return new InformerSyncError(message, this.description, reason, cause);
  }

  private observe(event: InformerLifecycleEvent): void {
    switch (event.type) {
      case 'relisting':
        this.state = event.mode === 'list' ? 'listing' : 'receiving the initial events of a watch-list';
        // A new attempt: access may have been granted meanwhile.
        this.authError = undefined;
        break;
      case 'synced':
        this.state = 'watching';
        this.syncRv = event.resourceVersion;
        this.error = undefined;
        this.authError = undefined;
        this.authMessage = '';
        break;
      case 'connected':
        this.state = event.mode === 'watch' ? 'watching' : 'receiving the initial events of a watch-list';
        break;
      case 'error':
        this.error = event.error;
        if (event.auth || isUnauthorized(event.error) || isForbidden(event.error)) {
          this.authError = event.error;
          this.authMessage = `informer of ${this.description} cannot sync: ${event.message}`;
          if (!this.synced) {
            const err = this.syncError('auth', event.error);
            for (const w of [...this.waiters]) if (w.failOnAuth) w.reject(err);
          }
        }
        break;
      case 'backoff':
        this.state = `retrying in ${event.delayMs} ms after an error`;
        break;
      default:
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    const userTransform = this.options.transform === undefined ? stripManagedFields : this.options.transform;
    const freeze = this.options.freeze ?? true;
    const transform: Transform<T> | undefined = freeze
      ? userTransform
        ? (obj) => deepFreeze(userTransform(obj))
        : deepFreeze
      : (userTransform ?? undefined);
    const {
      indexers: _indexers,
      freeze: _freeze,
      transform: _transform,
      onLifecycle: _onLifecycle,
      ...watcherOptions
    } = this.options;
    try {
      const batches = watcherBatches(this.api, {
        ...watcherOptions,
        signal,
        memory: this.store.asWatcherMemory(),
        ...(transform && { transform }),
        // Objects nobody has asked for yet are kept as received (see `Store`); handlers and
        // indexes need every object at once, so with them decoding is eager.
        defer: {
          when: () => this.handlers.length === 0 && !this.store.indexed,
          dropManagedFields: userTransform === stripManagedFields,
        },
        // Without handlers, the store is all that needs the changes.
        delivering: () => this.handlers.length > 0,
        onLifecycle: this.report,
      });
      for await (const batch of batches) for (const ev of batch) this.dispatch(ev);
    } catch (err) {
      // The watcher only ends by its signal; anything else is a bug worth reporting.
      this.error = err;
      this.report({ type: 'handlerError', resource: this.description, error: err });
    } finally {
      this.stopped = true;
      this.state = 'stopped';
      for (const w of [...this.waiters]) w.reject(this.syncError('stopped'));
    }
  }

  private dispatch(ev: WatcherEvent<T>): void {
    const handlers = this.handlers;
    if (handlers.length === 0 && ev.type !== 'SYNCED') return;
    switch (ev.type) {
      case 'ADDED': {
        if (!handlers.some((h) => h.onAdd)) break;
        const obj = this.store.decodedForm(ev.object);
        for (const h of handlers) if (h.onAdd) this.call(() => h.onAdd!(obj, ev.initialList));
        break;
      }
      case 'MODIFIED': {
        if (!handlers.some((h) => h.onUpdate)) break;
        const obj = this.store.decodedForm(ev.object);
        const old = this.store.decodedForm(ev.old);
        for (const h of handlers) if (h.onUpdate) this.call(() => h.onUpdate!(old, obj));
        break;
      }
      case 'DELETED': {
        if (!handlers.some((h) => h.onDelete)) break;
        const obj = this.store.decodedForm(ev.object);
        for (const h of handlers) if (h.onDelete) this.call(() => h.onDelete!(obj, ev.finalStateUnknown));
        break;
      }
      case 'SYNCED':
        if (!this.synced) {
          this.synced = true;
          for (const w of [...this.waiters]) w.resolve();
        }
        break;
    }
  }

  private call(fn: () => unknown): void {
    try {
      const out = fn();
      if (out instanceof Promise) out.catch((error: unknown) => this.reportHandlerError(error));
    } catch (error) {
      this.reportHandlerError(error);
    }
  }

  private reportHandlerError(error: unknown): void {
    this.report({ type: 'handlerError', resource: this.description, error });
  }
}
