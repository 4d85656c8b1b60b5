/**
 * Decoding of a watch stream: newline-delimited JSON `{"type": …, "object": …}` events into
 * typed {@link WatchEvent}s. Nothing is skipped: a line that is not a watch event becomes an
 * `ERROR` event carrying a {@link WatchDecodeError}, and a server `ERROR` event (such as 410
 * Gone for a too-old resourceVersion) is thrown as an `ApiError`.
 */
import type { Readable } from 'node:stream';
import type { JsonObject as Obj } from '../api/object.js';
import { ApiError, type Status } from '../api/status.js';
import { type ByteSource, isByteSource, readableSource } from './transport/byte-queue.js';
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

/**
 * A batch holds the events of at most about this many received bytes (more that arrived
 * together come in the next batches).
 */
const BATCH_BYTES = 1 << 20;

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
 * Decodes the complete lines at the front of `source` (up to about {@link BATCH_BYTES}) and
 * consumes them; undefined when no line is complete.
 */
function takeBatch<T>(
  source: ByteSource,
  decode: LineDecoder<T>,
): { events: WatchEvent<T>[]; error?: ApiError } | undefined {
  const bytes = source.bytes();
  let cut = bytes.lastIndexOf(10, BATCH_BYTES);
  // A line longer than a batch is decoded whole.
  if (cut < 0 && bytes.length > BATCH_BYTES) cut = bytes.indexOf(10, BATCH_BYTES);
  if (cut < 0) return undefined;
  const out = decode(bytes.subarray(0, cut));
  source.consume(cut + 1);
  return out;
}

/**
 * Turns a watch response body into batches of events: the complete events of what has been
 * received at each step, decoded where they lie (lines are cut on bytes: a UTF-8 sequence
 * split between two reads is whole by then, and a deferring decoder keeps bytes, not text).
 * Ends when the server ends the stream (its `timeoutSeconds`, or a dropped watch) or when
 * `signal` aborts; a broken connection throws {@link NetworkError}; a server ERROR event
 * throws its ApiError after the events before it were delivered.
 */
export async function* decodeWatchBatches<T extends KubeObject>(
  body: Readable | ByteSource,
  where: { method: string; url: string },
  signal?: AbortSignal,
  closed: () => boolean = () => false,
  decode: LineDecoder<T> = eagerLineDecoder,
): AsyncGenerator<WatchEvent<T>[], void, undefined> {
  const source = isByteSource(body) ? body : readableSource(body);
  try {
    while (await source.next()) {
      // No received bytes are referenced here while the generator waits: a watch can stay
      // quiet for long, and they would stay alive meanwhile.
      for (;;) {
        const out = takeBatch(source, decode);
        if (!out) break;
        if (out.events.length > 0) yield out.events;
        if (out.error) throw out.error;
      }
    }
    const tail = source.bytes().toString('utf8').trim();
    // A stream cut in the middle of an event: report it rather than lose it.
    if (tail !== '') yield [decodeWatchLine<T>(tail)];
  } catch (err) {
    if (signal?.aborted || closed()) return;
    if (err instanceof ApiError || err instanceof NetworkError) throw err;
    throw toNetworkError(err, where);
  } finally {
    source.destroy();
  }
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
