/**
 * Client-side rate limiting (client-go's token bucket `flowcontrol.NewTokenBucketRateLimiter`):
 * `qps` requests per second on average, bursts of up to `burst`. Off unless configured, as in
 * controller-runtime, which leaves throttling to the server's priority and fairness.
 */
import { sleep } from './retry.js';

/** Rate limit settings. */
export interface RateLimitOptions {
  qps: number;
  burst: number;
}

/** A token bucket; waiting callers are served in order. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly opts: RateLimitOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(opts.qps > 0) || !(opts.burst >= 1)) throw new RangeError('rateLimit needs qps > 0 and burst >= 1');
    this.tokens = opts.burst;
    this.last = this.now();
  }

  /** Milliseconds the next caller would wait (for tests and metrics); takes nothing. */
  get waitMs(): number {
    const tokens = Math.min(this.opts.burst, this.tokens + ((this.now() - this.last) / 1000) * this.opts.qps);
    return tokens >= 1 ? 0 : ((1 - tokens) / this.opts.qps) * 1000;
  }

  /** Takes a token, waiting for one when the bucket is empty. */
  async acquire(signal?: AbortSignal): Promise<void> {
    const t = this.now();
    this.tokens = Math.min(this.opts.burst, this.tokens + ((t - this.last) / 1000) * this.opts.qps);
    this.last = t;
    // Reserve now (the balance may go negative) so later callers queue behind this one.
    this.tokens -= 1;
    if (this.tokens >= 0) return;
    try {
      await sleep((-this.tokens / this.opts.qps) * 1000, signal);
    } catch (err) {
      this.tokens += 1;
      throw err;
    }
  }
}
