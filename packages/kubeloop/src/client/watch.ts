/**
 * Decoding of a watch stream: newline-delimited JSON `{"type": …, "object": …}` events into
 * typed {@link WatchEvent}s. Nothing is skipped: a line that is not a watch event becomes an
 * `ERROR` event carrying a {@link WatchDecodeError}, and a server `ERROR` event (such as 410
 * Gone for a too-old resourceVersion) is thrown as an `ApiError`.
 */
import type { Readable } from 'node:stream';
import { ApiError, type Status } from '../api/status.js';
import { NetworkError, toNetworkError } from './transport/errors.js';
import type { KubeObject } from './types.js';

/**
 * One event of a watch.
 * - `ADDED`/`MODIFIED`/`DELETED`: the object as of `resourceVersion`.
 * - `BOOKMARK`: no change, only the latest `resourceVersion` (`initialEventsEnd` marks the end
 *   of the initial state of a `sendInitialEvents` watch).
 * - `ERROR`: a line that could not be decoded; the stream goes on.
 */
export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T; resourceVersion: string }
  | { type: 'BOOKMARK'; resourceVersion: string; initialEventsEnd: boolean }
  | { type: 'ERROR'; error: WatchDecodeError };

/** A line of a watch stream that is not a valid watch event. */
export class WatchDecodeError extends Error {
  /** The offending line (truncated to 1 KiB). */
  readonly line: string;
  constructor(problem: string, line: string, cause?: unknown) {
    super(`watch: ${problem}`, cause === undefined ? undefined : { cause });
    this.name = 'WatchDecodeError';
    this.line = line.length > 1024 ? `${line.slice(0, 1024)}…` : line;
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Decodes one line; throws ApiError for a server ERROR event. */
export function decodeWatchLine<T extends KubeObject>(line: string): WatchEvent<T> {
  let doc: unknown;
  try {
    doc = JSON.parse(line);
  } catch (err) {
    return {
      type: 'ERROR',
      error: new WatchDecodeError(`invalid JSON: ${(err as Error).message}`, line, err),
    };
  }
  return decodeWatchDoc<T>(doc, () => line);
}

/** Decodes one parsed event; `line` gives its text for error reports. Throws ApiError for a server ERROR event. */
function decodeWatchDoc<T extends KubeObject>(doc: unknown, line: () => string): WatchEvent<T> {
  if (!isObj(doc) || typeof doc.type !== 'string') {
    return { type: 'ERROR', error: new WatchDecodeError('an event must be an object with a "type"', line()) };
  }
  const object = doc.object;
  switch (doc.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      if (!isObj(object))
        return { type: 'ERROR', error: new WatchDecodeError(`${doc.type} event without an object`, line()) };
      const meta = isObj(object.metadata) ? object.metadata : undefined;
      const rv = typeof meta?.resourceVersion === 'string' ? meta.resourceVersion : '';
      return { type: doc.type, object: object as T, resourceVersion: rv };
    }
    case 'BOOKMARK': {
      const meta = isObj(object) && isObj(object.metadata) ? object.metadata : undefined;
      if (typeof meta?.resourceVersion !== 'string') {
        return {
          type: 'ERROR',
          error: new WatchDecodeError('BOOKMARK event without metadata.resourceVersion', line()),
        };
      }
      const ann = isObj(meta.annotations) ? meta.annotations : undefined;
      return {
        type: 'BOOKMARK',
        resourceVersion: meta.resourceVersion,
        initialEventsEnd: ann?.['k8s.io/initial-events-end'] === 'true',
      };
    }
    case 'ERROR': {
      if (isObj(object) && object.kind === 'Status') throw ApiError.fromStatus(object as Partial<Status>);
      throw new ApiError({
        code: 500,
        reason: 'InternalError',
        message: `watch ERROR event: ${line().slice(0, 512)}`,
      });
    }
    default:
      return {
        type: 'ERROR',
        error: new WatchDecodeError(`unknown event type ${JSON.stringify(doc.type)}`, line()),
      };
  }
}

/**
 * Decodes complete lines (newline-separated, without the last newline) into events. Returns
 * the events before a server ERROR event, and that event's ApiError to throw once they are
 * delivered.
 */
export function decodeWatchLines<T extends KubeObject>(
  text: string,
): { events: WatchEvent<T>[]; error?: ApiError } {
  const events: WatchEvent<T>[] = [];
  let docs: unknown;
  // One JSON.parse for the whole chunk is about twice as fast as one per line. Events never
  // contain raw newlines (JSON escapes them), so the chunk's lines are the array's elements.
  try {
    docs = JSON.parse(`[${text.replaceAll('\n', ',')}]`);
  } catch {
    docs = undefined;
  }
  try {
    if (Array.isArray(docs)) {
      for (const doc of docs) events.push(decodeWatchDoc<T>(doc, () => JSON.stringify(doc)));
    } else {
      // Blank or broken lines: one at a time, so that one bad line costs only itself.
      for (const raw of text.split('\n')) {
        const line = raw.trim();
        if (line !== '') events.push(decodeWatchLine<T>(line));
      }
    }
  } catch (err) {
    if (err instanceof ApiError) return { events, error: err };
    throw err;
  }
  return { events };
}

/** A batch delivers at most about this many events (more that arrived together come next). */
const MAX_BATCH_EVENTS = 2000;

const EMPTY = Buffer.alloc(0);

/** The default {@link LineDecoder}: every event decoded at once. */
export function eagerLineDecoder<T extends KubeObject>(
  bytes: Buffer,
): { events: WatchEvent<T>[]; error?: ApiError } {
  return decodeWatchLines<T>(bytes.toString('utf8'));
}

/**
 * Decodes complete lines of received bytes (newline-separated, without the last newline) into
 * events; returns the events before a server ERROR event, and that event's ApiError. It may
 * rewrite `bytes`: they are the decoder's alone.
 */
export type LineDecoder<T> = (bytes: Buffer) => { events: WatchEvent<T>[]; error?: ApiError };

/**
 * Above this many received bytes not yet decoded, the body is paused (and the server waits).
 * A response stream's own limit is 16 KiB — one TLS record — which stopped and restarted the
 * socket for every record of a large watch-list: it arrived at a third of the speed the
 * connection can carry.
 */
const MAX_QUEUED_BYTES = 8 << 20;

/**
 * What arrives on `body`, as the chunks received since the last step. Reads in flowing mode
 * (see {@link MAX_QUEUED_BYTES}); waits one turn of the event loop after data arrives, so that
 * the rest of what the socket read comes in the same step. Ends with the body; throws its
 * error, or an `ERR_STREAM_PREMATURE_CLOSE` error when it closes before its end.
 */
async function* arrivals(body: Readable): AsyncGenerator<Buffer[], void, undefined> {
  let queue: Buffer[] = [];
  let queued = 0;
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const onData = (c: Buffer | string) => {
    // A body in text mode (setEncoding, or a stream of strings) works too.
    const chunk = typeof c === 'string' ? Buffer.from(c) : c;
    queue.push(chunk);
    queued += chunk.length;
    if (queued > MAX_QUEUED_BYTES) body.pause();
    notify();
  };
  const onEnd = () => {
    ended = true;
    notify();
  };
  const onError = (err: unknown) => {
    failure ??= err;
    notify();
  };
  const onClose = () => {
    if (!ended && failure === undefined) {
      failure = Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
    }
    notify();
  };
  body.on('data', onData);
  body.on('end', onEnd);
  body.on('error', onError);
  body.on('close', onClose);
  try {
    for (;;) {
      if (queue.length > 0) {
        const out = queue;
        queue = [];
        queued = 0;
        if (body.isPaused()) body.resume();
        yield out;
        continue;
      }
      if (failure !== undefined) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    body.off('data', onData);
    body.off('end', onEnd);
    body.off('error', onError);
    body.off('close', onClose);
  }
}

/**
 * Turns a watch response body into batches of events: the complete events of what has been
 * received at each step. Ends when the server ends the stream (its `timeoutSeconds`, or a
 * dropped watch) or when `signal` aborts; a broken connection throws {@link NetworkError}; a
 * server ERROR event throws its ApiError after the events before it were delivered.
 */
export async function* decodeWatchBatches<T extends KubeObject>(
  body: Readable,
  where: { method: string; url: string },
  signal?: AbortSignal,
  closed: () => boolean = () => false,
  decode: LineDecoder<T> = eagerLineDecoder,
): AsyncGenerator<WatchEvent<T>[], void, undefined> {
  // Bytes are kept until a batch is decoded: lines are cut on bytes (a UTF-8 sequence split
  // between two chunks is whole by then), and a deferring decoder keeps bytes, not text.
  /** The start of a line not ended yet. */
  let rest: Buffer[] = [];
  const steps = arrivals(body);
  try {
    for (;;) {
      // Nothing of a step outlives it: this generator waits between steps for as long as the
      // watch stays quiet, and its variables would keep what they point to alive meanwhile.
      let step: IteratorResult<Buffer[]> | undefined = await steps.next();
      if (step.done) break;
      const received = step.value;
      step = undefined;
      // Each chunk is decoded where it lies; only a line cut between two chunks is copied.
      let events: WatchEvent<T>[] = [];
      let error: ApiError | undefined;
      const decodeLines = (bytes: Buffer) => {
        const out = decode(bytes);
        for (const ev of out.events) events.push(ev);
        error = out.error;
      };
      for (let k = 0; k < received.length && !error; k++) {
        const chunk = received[k]!;
        received[k] = EMPTY;
        let from = 0;
        if (rest.length > 0) {
          const nl = chunk.indexOf(10);
          if (nl < 0) {
            rest.push(chunk); // a long line: its parts are joined once, when it ends
            continue;
          }
          rest.push(chunk.subarray(0, nl));
          const line = Buffer.concat(rest);
          rest = [];
          decodeLines(line);
          from = nl + 1;
          if (error) break;
        }
        const last = chunk.lastIndexOf(10);
        if (last < from) {
          // No line ends in the rest of this chunk. A copy: a view would keep the chunk alive.
          if (from < chunk.length) rest.push(Buffer.from(chunk.subarray(from)));
          continue;
        }
        if (last > from) decodeLines(chunk.subarray(from, last));
        if (last + 1 < chunk.length) rest.push(Buffer.from(chunk.subarray(last + 1)));
        if (events.length > MAX_BATCH_EVENTS) {
          yield events;
          events = [];
        }
      }
      if (events.length > 0) yield events;
      events = [];
      if (error) throw error;
    }
  } catch (err) {
    if (signal?.aborted || closed()) return;
    if (err instanceof ApiError || err instanceof NetworkError) throw err;
    throw toNetworkError(err, where);
  } finally {
    body.destroy();
    await steps.return(undefined);
  }
  const tail = Buffer.concat(rest).toString('utf8').trim();
  // A stream cut in the middle of an event: report it rather than lose it.
  if (tail !== '') yield [decodeWatchLine<T>(tail)];
}

/**
 * Turns a watch response body into events, one by one (see {@link decodeWatchBatches}).
 */
export async function* decodeWatchStream<T extends KubeObject>(
  body: Readable,
  where: { method: string; url: string },
  signal?: AbortSignal,
  closed: () => boolean = () => false,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  for await (const batch of decodeWatchBatches<T>(body, where, signal, closed)) yield* batch;
}
