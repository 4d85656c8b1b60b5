/**
 * The received bytes of a streaming answer (a watch), held in one buffer that is reused:
 * a watch decodes its lines where they lie, and what a step leaves (a line not ended yet) moves
 * to the front. A response stream instead hands over a new Buffer per TLS record (two, with
 * Node's HTTP parser copying each body piece): 6 MB of a watch-list's snapshot became 12 MB of
 * short-lived allocations, and the process's RSS kept most of them.
 */
import type { Readable } from 'node:stream';

/** Bytes received and not consumed yet, contiguous; see {@link ByteQueue}. */
export interface ByteSource {
  /**
   * Waits until bytes arrive that {@link bytes} did not show yet; false once the answer has
   * ended (whatever was not consumed stays readable). Throws the answer's error.
   */
  next(): Promise<boolean>;
  /** What was received and not consumed. Valid until the next call of `next` or `consume`. */
  bytes(): Buffer;
  /** Drops the first `n` bytes of {@link bytes}. */
  consume(n: number): void;
  /** Stops receiving and releases the connection. */
  destroy(): void;
}

/** Whether `body` offers its bytes as a {@link ByteSource}. */
export const isByteSource = (body: unknown): body is ByteSource =>
  typeof (body as Partial<ByteSource> | undefined)?.consume === 'function' &&
  typeof (body as Partial<ByteSource> | undefined)?.bytes === 'function';

/**
 * The size of a fresh queue. Most watches stay quiet (a process's informers of kinds that have
 * no objects get a bookmark now and then), so a queue starts small and grows on the first burst.
 */
const INITIAL_BYTES = 4 * 1024;
/** What a queue grown for a burst shrinks back to when it empties. */
const QUIET_BYTES = 64 * 1024;
/**
 * Above this many unconsumed bytes the sender is paused (and the server waits, its data in the
 * kernel's buffers rather than ours). Pausing at every TLS record, as a response stream's own
 * 16 KiB limit does, made a watch-list arrive at a third of the connection's speed.
 */
export const MAX_QUEUED_BYTES = 1 << 20;

/**
 * A {@link ByteSource} fed by {@link push}: the bytes wait in one buffer, which grows while the
 * consumer lags and shrinks back once it has caught up.
 */
export class ByteQueue implements ByteSource {
  private buf: Buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  private start = 0;
  private end = 0;
  /** Bytes arrived since the last {@link next}. */
  private fresh = false;
  private ended = false;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly flow: {
      /** Called when too much waits; {@link resume} follows once the consumer catches up. */
      pause: () => void;
      resume: () => void;
      destroy: () => void;
    },
  ) {}

  private paused = false;

  /** Appends `src[from, to)`. */
  push(src: Buffer, from = 0, to = src.length): void {
    const n = to - from;
    if (n <= 0 || this.ended) return;
    if (this.end + n > this.buf.length) this.makeRoom(n);
    src.copy(this.buf, this.end, from, to);
    this.end += n;
    this.fresh = true;
    if (!this.paused && this.end - this.start > MAX_QUEUED_BYTES) {
      this.paused = true;
      this.flow.pause();
    }
    this.notify();
  }

  /** The answer ended (cleanly when `error` is undefined). */
  finish(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    if (error !== undefined) this.failure = { error };
    this.notify();
  }

  async next(): Promise<boolean> {
    for (;;) {
      // What arrived before a failure is read first.
      if (this.fresh) {
        this.fresh = false;
        return true;
      }
      if (this.failure) throw this.failure.error;
      if (this.ended) return false;
      // The consumer took what it could (a line longer than the limit cannot be taken in part).
      if (this.paused) {
        this.paused = false;
        this.flow.resume();
      }
      // A queue grown for a burst (a watch-list's snapshot) is not kept while the watch is
      // quiet; in the burst it is kept, not grown again (and its pages touched again) each step.
      if (this.start === this.end && this.buf.length > QUIET_BYTES)
        this.buf = Buffer.allocUnsafe(QUIET_BYTES);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      // What the socket read in the same turn comes in the same step.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  bytes(): Buffer {
    return this.buf.subarray(this.start, this.end);
  }

  consume(n: number): void {
    this.start = Math.min(this.start + n, this.end);
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
    }
    if (this.paused && this.end - this.start <= MAX_QUEUED_BYTES / 2) {
      this.paused = false;
      this.flow.resume();
    }
  }

  destroy(): void {
    this.finish();
    this.buf = Buffer.alloc(0);
    this.start = 0;
    this.end = 0;
    this.flow.destroy();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** Makes room for `n` more bytes: moves the unconsumed ones to the front, or grows. */
  private makeRoom(n: number): void {
    const kept = this.end - this.start;
    if (kept + n <= this.buf.length) this.buf.copyWithin(0, this.start, this.end);
    else {
      const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, kept + n));
      this.buf.copy(grown, 0, this.start, this.end);
      this.buf = grown;
    }
    this.start = 0;
    this.end = kept;
  }
}

/**
 * A {@link ByteSource} over a readable stream (undici's bodies, a test's stream). Ends with
 * the stream; fails with its error, or with an `ERR_STREAM_PREMATURE_CLOSE` error when it
 * closes before its end.
 */
export function readableSource(body: Readable): ByteSource {
  const queue = new ByteQueue({
    pause: () => body.pause(),
    resume: () => body.resume(),
    destroy: () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      body.destroy();
    },
  });
  let ended = false;
  const onData = (c: Buffer | string) => {
    // A body in text mode (setEncoding, or a stream of strings) works too.
    queue.push(typeof c === 'string' ? Buffer.from(c) : c);
  };
  const onEnd = () => {
    ended = true;
    queue.finish();
  };
  const onError = (err: unknown) => queue.finish(err);
  const onClose = () => {
    if (!ended) {
      queue.finish(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    }
  };
  body.on('data', onData);
  body.on('end', onEnd);
  body.on('error', onError);
  body.on('close', onClose);
  return queue;
}
