/**
 * The compaction policy of the durable store, kube-apiserver's (`--etcd-compaction-interval`,
 * k8s.io/apiserver/pkg/storage/etcd3/compact.go): every interval, compact to the revision seen at
 * the previous tick. A revision therefore stays readable for one to two intervals after it was
 * written, and the history on disk holds at most about two intervals of changes (plus the current
 * state of every object), whatever the write rate. The first tick after a start only takes note,
 * so that a restart never shortens the window of the history written before it.
 */
import type { Store } from './store.js';

/** kube-apiserver's default `--etcd-compaction-interval`: 5 minutes. */
export const DEFAULT_COMPACTION_INTERVAL_MS = 5 * 60_000;

/** Options of {@link Compactor}. */
export interface CompactorOptions {
  /** Time between compactions; 0 disables them (the history then grows without bound). */
  intervalMs: number;
  /** Where a failed compaction is reported (it is retried at the next tick). */
  log?: (level: 'warn', msg: string, fields?: Record<string, unknown>) => void;
}

/**
 * Compacts a store's history on an interval.
 *
 * @example
 * ```ts
 * const compactor = new Compactor(store, { intervalMs: DEFAULT_COMPACTION_INTERVAL_MS });
 * compactor.start();
 * // ...
 * compactor.stop();
 * ```
 */
export class Compactor {
  private readonly store: Store;
  private readonly intervalMs: number;
  private readonly log: CompactorOptions['log'];
  /** The revision noted at the previous tick, the next compaction's target. */
  private noted: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(store: Store, opts: CompactorOptions) {
    if (!Number.isFinite(opts.intervalMs) || opts.intervalMs < 0) {
      throw new RangeError(`compaction interval must be a non-negative number of ms, got ${opts.intervalMs}`);
    }
    this.store = store;
    this.intervalMs = opts.intervalMs;
    this.log = opts.log;
  }

  /**
   * One tick of the policy: compacts to the revision noted at the previous tick (none at the
   * first), then notes the current committed revision. Resolves when the compaction is durable;
   * returns the revision compacted to, if any. Timers call it; tests call it directly.
   */
  async tick(): Promise<number | undefined> {
    const target = this.noted;
    this.noted = this.store.committedRevision;
    if (target === undefined || target <= this.store.oldestRevision) return undefined;
    await this.store.compact(target);
    return target;
  }

  /** Starts ticking every interval (nothing when the interval is 0). The timer keeps no process alive. */
  start(): void {
    if (this.intervalMs === 0 || this.timer) return;
    this.timer = setInterval(() => {
      // A compaction longer than the interval is not started twice.
      if (this.running) return;
      this.running = this.tick()
        .then(
          () => undefined,
          (err: unknown) => this.log?.('warn', 'storage compaction failed', { err: String(err) }),
        )
        .finally(() => {
          this.running = undefined;
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops ticking; waits for a compaction in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
