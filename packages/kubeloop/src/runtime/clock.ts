/**
 * Time as the runtime sees it: the real clock, or a {@link FakeClock} that tests move by hand
 * so that backoffs, delays and rate limits are checked without waiting.
 */

/**
 * A pending timer of a {@link Clock}.
 *
 * @example
 * ```ts
 * const timer: Timer = clock.setTimer(tick, 1000);
 * timer.cancel();
 * ```
 */
export interface Timer {
  /** Cancels the timer; calling it after the timer fired does nothing. */
  cancel(): void;
}

/**
 * Options of {@link Clock.setTimer}.
 *
 * @example
 * ```ts
 * clock.setTimer(checkIdle, 60_000, { unref: true });
 * ```
 */
export interface TimerOptions {
  /**
   * Let the process exit while the timer is pending (Node's `unref`). For timers that only
   * watch over something else that keeps the process alive, such as a watchdog of a socket.
   */
  unref?: boolean;
}

/**
 * Where the runtime reads the time and schedules timers. Every owner of a timer cancels it when
 * it stops, so nothing is left running after shutdown.
 *
 * @example
 * ```ts
 * const timer = realClock.setTimer(() => console.log('later'), 1000);
 * timer.cancel();
 * ```
 */
export interface Clock {
  /** Milliseconds on a monotonic scale (not wall-clock time). */
  now(): number;
  /** Runs `fn` after `ms` milliseconds. */
  setTimer(fn: () => void, ms: number, options?: TimerOptions): Timer;
}

/**
 * The real clock: `performance.now()` and `setTimeout`.
 *
 * @example
 * ```ts
 * const queue = new WorkQueue({ clock: realClock }); // the default
 * ```
 */
export const realClock: Clock = Object.freeze({
  now: () => performance.now(),
  setTimer(fn: () => void, ms: number, options?: TimerOptions): Timer {
    const t = setTimeout(fn, Math.max(0, ms));
    if (options?.unref) t.unref();
    return { cancel: () => clearTimeout(t) };
  },
});

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that only moves when told to: `advance(ms)` runs the timers that fall due, in order
 * of due time. For tests of anything that takes a {@link Clock}.
 *
 * @example
 * ```ts
 * const clock = new FakeClock();
 * const queue = new WorkQueue<string>({ clock });
 * queue.addAfter('a', 100);
 * clock.advance(100);          // 'a' is now ready
 * expect(await queue.get()).toBe('a');
 * ```
 */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(startMs = 0) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const timer: FakeTimer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
        this.timers = this.timers.filter((x) => x !== timer);
      },
    };
  }

  /** Timers not yet fired nor cancelled. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, running every timer that falls due (also ones they set). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const timer of this.timers) {
        if (timer.at > end) continue;
        if (!next || timer.at < next.at || (timer.at === next.at && timer.seq < next.seq)) next = timer;
      }
      if (!next) break;
      this.timers = this.timers.filter((x) => x !== next);
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = end;
  }
}

/**
 * Resolves after `ms` on `clock`, or rejects with the signal's reason when it aborts first.
 * The timer is cancelled on abort, so nothing is left behind.
 *
 * @example
 * ```ts
 * await sleep(realClock, 800, signal);
 * ```
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Resolves once `signal` aborts (at once if it already has): how a `Runnable`'s `start`
 * waits for its manager to stop before cleaning up (a Go context's `<-ctx.Done()`).
 *
 * @example
 * ```ts
 * manager.add({ name: 'flush', async start({ signal }) { await untilAborted(signal); await recorder.close(); } });
 * ```
 */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
