/**
 * The waits of a watcher between failed attempts: client-go's reflector backoff
 * (`NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`): exponential from 0.8 s, capped
 * at 30 s, with up to 100 % random jitter so that many clients do not come back at once, and
 * back to the start after a healthy period without failures.
 */
import { type Clock, realClock } from '../clock.js';

/**
 * Settings of a {@link Backoff}.
 *
 * @example
 * ```ts
 * watcher(api, { backoff: { initialMs: 200, maxMs: 10_000, resetAfterMs: 60_000 } });
 * ```
 */
export interface BackoffOptions {
  /** First wait (default 800 ms). */
  initialMs?: number;
  /** Longest wait (default 30 s), jitter included. */
  maxMs?: number;
  /** Growth per failure (default 2). */
  factor?: number;
  /** Extra random share of each wait, 0–1 (default 1: a wait of `d` lasts between `d` and `2d`). */
  jitter?: number;
  /** After this long without a failure the next wait starts again from `initialMs` (default 2 min). */
  resetAfterMs?: number;
}

/**
 * Jittered exponential backoff that resets after a healthy period.
 *
 * @example
 * ```ts
 * const backoff = new Backoff({ initialMs: 800, maxMs: 30_000 });
 * try { await list(); } catch { await sleep(realClock, backoff.next(), signal); }
 * ```
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private failures = 0;
  private lastFailureAt = Number.NEGATIVE_INFINITY;

  constructor(
    options: BackoffOptions = {},
    private readonly clock: Clock = realClock,
    private readonly random: () => number = Math.random,
  ) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 1;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    if (!(this.initialMs >= 0) || !(this.maxMs >= this.initialMs) || !(this.factor >= 1)) {
      throw new RangeError('backoff needs 0 <= initialMs <= maxMs and factor >= 1');
    }
  }

  /** Failures counted since the last reset. */
  get attempt(): number {
    return this.failures;
  }

  /** Records a failure and returns how long to wait before the next attempt, in ms. */
  next(): number {
    const now = this.clock.now();
    if (now - this.lastFailureAt >= this.resetAfterMs) this.failures = 0;
    this.lastFailureAt = now;
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.failures);
    this.failures++;
    return Math.min(this.maxMs, Math.round(base * (1 + this.jitter * this.random())));
  }

  /** Forgets past failures: the next wait is the initial one. */
  reset(): void {
    this.failures = 0;
    this.lastFailureAt = Number.NEGATIVE_INFINITY;
  }
}
