/**
 * How long a failed item waits before it is retried (client-go's `workqueue` rate limiters).
 * The default of controllers, as in controller-runtime, is the slower of a per-item
 * exponential backoff (5 ms doubling to 1000 s) and an overall token bucket (10 per second,
 * bursts of 100), so one bad item backs off alone while a storm of failures is throttled.
 */
import { type Clock, realClock } from '../clock.js';

/**
 * Decides the delay of each retry of an item.
 *
 * @example
 * ```ts
 * const limiter: RateLimiter<string> = defaultControllerRateLimiter();
 * limiter.when('default/web'); // 5 (ms); then 10, 20, …
 * limiter.forget('default/web');
 * ```
 */
export interface RateLimiter<K> {
  /** Records a retry of `item` and returns how long it should wait, in ms. */
  when(item: K): number;
  /** The item succeeded: its backoff starts over. */
  forget(item: K): void;
  /** Retries recorded for `item` since it was last forgotten. */
  numRequeues(item: K): number;
}

/**
 * Per-item exponential backoff: `baseMs × 2^failures`, capped at `maxMs`.
 *
 * @example
 * ```ts
 * const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
 * ```
 */
export class ItemExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {
    if (!(baseMs >= 0) || !(maxMs >= baseMs)) throw new RangeError('needs 0 <= baseMs <= maxMs');
  }

  when(item: K): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    const backoff = this.baseMs * 2 ** exp;
    return Number.isFinite(backoff) && backoff < this.maxMs ? backoff : this.maxMs;
  }

  forget(item: K): void {
    this.failures.delete(item);
  }

  numRequeues(item: K): number {
    return this.failures.get(item) ?? 0;
  }
}

/**
 * Settings of a {@link BucketRateLimiter}.
 *
 * @example
 * ```ts
 * new BucketRateLimiter({ qps: 50, burst: 300 });
 * ```
 */
export interface BucketOptions {
  /** Tokens added per second (default 10). */
  qps?: number;
  /** Size of the bucket, which starts full (default 100). */
  burst?: number;
  clock?: Clock;
}

/**
 * An overall token bucket (Go's `rate.Limiter` reservations): every `when` takes a token, and
 * waits for it when the bucket is empty; later callers queue behind earlier ones. It does not
 * track items.
 *
 * @example
 * ```ts
 * const bucket = new BucketRateLimiter({ qps: 10, burst: 100 });
 * ```
 */
export class BucketRateLimiter<K = unknown> implements RateLimiter<K> {
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private last: number;

  constructor(options: BucketOptions = {}) {
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    this.clock = options.clock ?? realClock;
    if (!(this.qps > 0) || !(this.burst >= 1))
      throw new RangeError('the bucket needs qps > 0 and burst >= 1');
    this.tokens = this.burst;
    this.last = this.clock.now();
  }

  when(_item: K): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    // Reserve now, even into debt, so that the next caller waits behind this one.
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_item: K): void {}

  numRequeues(_item: K): number {
    return 0;
  }
}

/**
 * The slowest of several limiters (each is asked, so each keeps its own account).
 *
 * @example
 * ```ts
 * new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1e6), new BucketRateLimiter());
 * ```
 */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(item: K): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(item));
    return max;
  }

  forget(item: K): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: K): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(item));
    return max;
  }
}

/**
 * Settings of {@link defaultControllerRateLimiter}.
 *
 * @example
 * ```ts
 * defaultControllerRateLimiter({ baseDelayMs: 100, maxDelayMs: 60_000 });
 * ```
 */
export interface ControllerRateLimiterOptions {
  /** First per-item delay (default 5 ms). */
  baseDelayMs?: number;
  /** Longest per-item delay (default 1000 s). */
  maxDelayMs?: number;
  /** Overall retries per second (default 10). */
  qps?: number;
  /** Overall burst (default 100). */
  burst?: number;
  clock?: Clock;
}

/**
 * controller-runtime's default: max of per-item exponential backoff (5 ms → 1000 s) and an
 * overall token bucket (10/s, burst 100).
 *
 * @example
 * ```ts
 * const queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter({ maxDelayMs: 60_000 }) });
 * ```
 */
export function defaultControllerRateLimiter<K>(options: ControllerRateLimiterOptions = {}): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialFailureRateLimiter<K>(options.baseDelayMs ?? 5, options.maxDelayMs ?? 1_000_000),
    new BucketRateLimiter<K>({
      qps: options.qps ?? 10,
      burst: options.burst ?? 100,
      ...(options.clock && { clock: options.clock }),
    }),
  );
}
