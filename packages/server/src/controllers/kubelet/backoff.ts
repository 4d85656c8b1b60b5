/**
 * The kubelet's crash-loop back-off (client-go's flowcontrol.Backoff as `doBackOff` uses it, with
 * no jitter): a container that exits is restarted at once the first time; after that, each exit
 * waits out the current back-off counted from when it exited, 10 s doubling to 5 min. A
 * container that stayed up longer than twice the maximum (10 min) starts over at 10 s.
 */

/** Back-off durations of Kubernetes, in ms. */
export const BACKOFF_INITIAL_MS = 10_000;
export const BACKOFF_MAX_MS = 300_000;

/**
 * The back-off of one container. `scale` multiplies every duration (tests make them short).
 *
 * @example
 * ```ts
 * const b = new CrashLoopBackOff();
 * b.delay(exitedAt, now); // 0: restart now (and the next exit waits 10 s)
 * ```
 */
export class CrashLoopBackOff {
  private entry: { backoff: number; lastUpdate: number } | undefined;

  constructor(private readonly scale = 1) {}

  /** The nominal (unscaled) back-off in ms, as `back-off 10s restarting failed container` says it. */
  get nominalMs(): number {
    return this.entry ? this.entry.backoff / this.scale : 0;
  }

  /**
   * The container exited at `finishedAt`: how many ms from `now` until it may restart (0: now,
   * and the back-off then grows for the next exit, as `Next` does).
   */
  delay(finishedAt: number, now: number): number {
    const max = BACKOFF_MAX_MS * this.scale;
    const e = this.entry;
    const expired = e !== undefined && finishedAt - e.lastUpdate > 2 * max;
    if (e && !expired && now - finishedAt < e.backoff) return finishedAt + e.backoff - now;
    this.entry =
      !e || expired
        ? { backoff: BACKOFF_INITIAL_MS * this.scale, lastUpdate: now }
        : { backoff: Math.min(e.backoff * 2, max), lastUpdate: now };
    return 0;
  }
}

/** A duration as Go's `time.Duration.String()` writes whole seconds: `10s`, `1m20s`, `5m0s`. */
export function goDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${s % 60}s` : `${Math.floor(m / 60)}h${m % 60}m${s % 60}s`;
}
