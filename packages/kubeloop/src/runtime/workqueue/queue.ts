/**
 * The workqueue of controllers (client-go's rate-limited, delaying workqueue), with its
 * guarantees:
 * - an item is never handed to two workers at once: one added while it is processed waits
 *   until `done`, then comes back once;
 * - an item added again while it waits is coalesced (it is processed once);
 * - delayed adds (`addAfter`) keep the earliest time asked for;
 * - rate-limited adds (`addRateLimited`) wait as the rate limiter says (default:
 *   controller-runtime's per-item exponential backoff combined with a token bucket);
 * - shutdown drains the queue or abandons it, as asked.
 */
import { type Clock, realClock, type Timer } from '../clock.js';
import type { InFlightWork, QueueMetricsSink, WorkQueueMetrics } from './metrics.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

/**
 * Options of a {@link WorkQueue}.
 *
 * @example
 * ```ts
 * new WorkQueue<string>({ name: 'foo', rateLimiter: defaultControllerRateLimiter({ maxDelayMs: 300_000 }), metrics });
 * ```
 */
export interface WorkQueueOptions<K> {
  /** Name of the queue in metrics (the controller's name). */
  name?: string;
  /** Delays of `addRateLimited` (default `defaultControllerRateLimiter()` on the queue's clock). */
  rateLimiter?: RateLimiter<K>;
  /** Metrics to report to (none by default). */
  metrics?: WorkQueueMetrics;
  /** Time source of delays and metrics (tests: `FakeClock`). */
  clock?: Clock;
}

/**
 * Options of {@link WorkQueue.shutdown}.
 *
 * @example
 * ```ts
 * await queue.shutdown({ drain: true, signal: AbortSignal.timeout(30_000) });
 * ```
 */
export interface ShutdownOptions {
  /**
   * `true`: refuse new items, let workers finish every queued and in-flight item, and resolve
   * when all are done. `false` (default): drop every queued and delayed item at once; workers'
   * `get()` returns `undefined`; in-flight items are abandoned (their `done` is accepted).
   */
  drain?: boolean;
  /** While draining: abort to abandon what is left. */
  signal?: AbortSignal;
}

interface Waiting<K> {
  item: K;
  readyAt: number;
  seq: number;
  index: number;
}

/** A binary min-heap of delayed items by ready time (then insertion order). */
class DelayHeap<K> {
  readonly entries: Waiting<K>[] = [];
  private before(a: Waiting<K>, b: Waiting<K>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }
  get size(): number {
    return this.entries.length;
  }
  peek(): Waiting<K> | undefined {
    return this.entries[0];
  }
  push(e: Waiting<K>): void {
    e.index = this.entries.length;
    this.entries.push(e);
    this.up(e.index);
  }
  pop(): Waiting<K> | undefined {
    const top = this.entries[0];
    const last = this.entries.pop();
    if (top === undefined || last === undefined) return undefined;
    if (last !== top) {
      this.entries[0] = last;
      last.index = 0;
      this.down(0);
    }
    return top;
  }
  /** After an entry's readyAt decreased. */
  moved(e: Waiting<K>): void {
    this.up(e.index);
  }
  clear(): void {
    this.entries.length = 0;
  }
  private swap(i: number, j: number): void {
    const a = this.entries[i]!;
    const b = this.entries[j]!;
    this.entries[i] = b;
    this.entries[j] = a;
    a.index = j;
    b.index = i;
  }
  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(this.entries[i]!, this.entries[parent]!)) break;
      this.swap(i, parent);
      i = parent;
    }
  }
  private down(i: number): void {
    const n = this.entries.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.before(this.entries[l]!, this.entries[m]!)) m = l;
      if (r < n && this.before(this.entries[r]!, this.entries[m]!)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }
}

/**
 * A deduplicating, delaying, rate-limited work queue. Items are usually object keys
 * (`namespace/name`); any value works, compared by identity (`Set` semantics).
 *
 * @example
 * ```ts
 * const queue = new WorkQueue<string>({ name: 'foo-controller' });
 * informer.addEventHandler({ onAdd: (o) => queue.add(objectKey(o)) });
 * async function worker(signal: AbortSignal) {
 *   for (let key = await queue.get(signal); key !== undefined; key = await queue.get(signal)) {
 *     try { await reconcile(key); queue.forget(key); }
 *     catch { queue.addRateLimited(key); }
 *     finally { queue.done(key); }
 *   }
 * }
 * ```
 */
export class WorkQueue<K = string> {
  readonly name: string;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter<K>;
  private readonly metrics: QueueMetricsSink | undefined;
  /** Ready items in order; `head` is the index of the first (amortised O(1) shift). */
  private ready: (K | undefined)[] = [];
  private head = 0;
  private readonly dirty = new Set<K>();
  private readonly processing = new Map<K, number>();
  private readonly addedAt = new Map<K, number>();
  private readonly waitingByItem = new Map<K, Waiting<K>>();
  private readonly heap = new DelayHeap<K>();
  private seq = 0;
  private timer: Timer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private getters: ((item: K | undefined) => void)[] = [];
  private shuttingDown = false;
  private abandoned = false;
  private drained: (() => void)[] = [];

  constructor(options: WorkQueueOptions<K> = {}) {
    this.name = options.name ?? '';
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>({ clock: this.clock });
    const work: InFlightWork = {
      unfinishedWorkSeconds: () => {
        const now = this.clock.now();
        let total = 0;
        for (const started of this.processing.values()) total += now - started;
        return total / 1000;
      },
      longestRunningProcessorSeconds: () => {
        const now = this.clock.now();
        let longest = 0;
        for (const started of this.processing.values()) longest = Math.max(longest, now - started);
        return longest / 1000;
      },
    };
    this.metrics = options.metrics?.forQueue(this.name, work);
  }

  /** Items ready to be handed out (not counting delayed or in-flight ones). */
  get length(): number {
    return this.ready.length - this.head;
  }

  /** Items waiting for their delay. */
  get delayed(): number {
    return this.heap.size;
  }

  /** Items handed out and not yet `done`. */
  get inFlight(): number {
    return this.processing.size;
  }

  /** True once `shutdown` was called. */
  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Marks `item` as needing processing (ignored after shutdown; coalesced while it waits). */
  add(item: K): void {
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.metrics?.add();
    if (!this.addedAt.has(item)) this.addedAt.set(item, this.clock.now());
    this.dirty.add(item);
    if (this.processing.has(item)) return; // comes back when its worker calls done()
    this.push(item);
  }

  /** Adds `item` after `delayMs`; an earlier pending delay of the same item wins. */
  addAfter(item: K, delayMs: number): void {
    if (this.shuttingDown) return;
    this.metrics?.retry();
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waitingByItem.get(item);
    if (existing) {
      if (existing.readyAt <= readyAt) return;
      existing.readyAt = readyAt;
      this.heap.moved(existing);
    } else {
      const entry: Waiting<K> = { item, readyAt, seq: this.seq++, index: 0 };
      this.waitingByItem.set(item, entry);
      this.heap.push(entry);
    }
    this.arm();
  }

  /** Adds `item` after the delay its rate limiter gives (a retry after a failure). */
  addRateLimited(item: K): void {
    if (this.shuttingDown) return;
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** `item` succeeded: its rate-limit backoff starts over. */
  forget(item: K): void {
    this.rateLimiter.forget(item);
  }

  /** Rate-limited retries of `item` since it was last forgotten. */
  numRequeues(item: K): number {
    return this.rateLimiter.numRequeues(item);
  }

  /**
   * The next item to process, waiting for one; `undefined` once the queue is shut down (and,
   * when draining, empty) or when `signal` aborts. Call {@link done} with the item when
   * finished with it.
   */
  get(signal?: AbortSignal): Promise<K | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    if (this.length > 0) return Promise.resolve(this.take());
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const getter = (item: K | undefined) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(item);
      };
      const onAbort = () => {
        this.getters = this.getters.filter((g) => g !== getter);
        resolve(undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.getters.push(getter);
    });
  }

  /** Ends the processing of `item`; if it was added meanwhile it is queued again. */
  done(item: K): void {
    const started = this.processing.get(item);
    if (started === undefined) return;
    this.processing.delete(item);
    this.metrics?.done((this.clock.now() - started) / 1000);
    if (this.dirty.has(item) && !this.abandoned) this.push(item);
    this.checkDrained();
  }

  /**
   * Stops the queue: new items are ignored, delayed ones dropped; then drains or abandons the
   * rest (see {@link ShutdownOptions}). Resolves when the queue is empty and idle (draining)
   * or at once (abandoning). Calling it again with `drain: false` abandons a drain under way.
   */
  shutdown(options: ShutdownOptions = {}): Promise<void> {
    this.shuttingDown = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.heap.clear();
    this.waitingByItem.clear();
    const getters = this.getters;
    this.getters = [];
    for (const g of getters) g(undefined);
    if (!options.drain || options.signal?.aborted) {
      this.abandon();
      return Promise.resolve();
    }
    const signal = options.signal;
    return new Promise<void>((resolve) => {
      const onAbort = () => {
        this.abandon();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.drained.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      this.checkDrained();
    });
  }

  private abandon(): void {
    this.abandoned = true;
    // Depth counts every dirty item, also those re-added while in flight.
    this.metrics?.drop(this.dirty.size);
    this.ready = [];
    this.head = 0;
    this.dirty.clear();
    this.addedAt.clear();
    this.metrics?.close();
    const drained = this.drained;
    this.drained = [];
    for (const d of drained) d();
  }

  private checkDrained(): void {
    if (!this.shuttingDown || this.abandoned || this.drained.length === 0) return;
    if (this.length > 0 || this.processing.size > 0) return;
    this.metrics?.close();
    const drained = this.drained;
    this.drained = [];
    for (const d of drained) d();
  }

  /** Hands `item` to a waiting worker, or queues it. */
  private push(item: K): void {
    const getter = this.getters.shift();
    if (getter) {
      this.ready.push(item);
      getter(this.take());
      return;
    }
    this.ready.push(item);
  }

  /** Takes the first ready item and marks it in flight. */
  private take(): K {
    const item = this.ready[this.head] as K;
    this.ready[this.head] = undefined;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.head);
      this.head = 0;
    }
    const now = this.clock.now();
    const addedAt = this.addedAt.get(item);
    this.addedAt.delete(item);
    this.metrics?.get(addedAt === undefined ? undefined : (now - addedAt) / 1000);
    this.processing.set(item, now);
    this.dirty.delete(item);
    return item;
  }

  /** Keeps one timer, for the earliest delayed item. */
  private arm(): void {
    const first = this.heap.peek();
    if (!first) return;
    if (this.timer && this.timerAt <= first.readyAt) return;
    this.timer?.cancel();
    this.timerAt = first.readyAt;
    this.timer = this.clock.setTimer(() => this.fire(), first.readyAt - this.clock.now());
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (let e = this.heap.peek(); e && e.readyAt <= now; e = this.heap.peek()) {
      this.heap.pop();
      this.waitingByItem.delete(e.item);
      this.add(e.item);
    }
    this.arm();
  }
}
