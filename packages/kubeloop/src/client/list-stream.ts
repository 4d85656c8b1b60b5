/**
 * Streaming decoding of a list answer (`{"kind":"FooList","metadata":{…},"items":[…]}`): the
 * items are cut out of the body as it arrives and decoded in batches, so that a whole
 * collection in one answer (a `resourceVersion=0` list, served from the API server's watch
 * cache without paging) never sits in memory as one string plus one parsed tree.
 *
 * Each item becomes the line of an `ADDED` watch event and goes through the same
 * {@link LineDecoder} as a watch stream's lines: an informer's list then defers (or eagerly
 * decodes without managedFields) exactly as its watch-list does.
 */
import type { Readable } from 'node:stream';
import { ApiError } from '../api/status.js';
import { type ByteSource, isByteSource, readableSource } from './transport/byte-queue.js';
import { NetworkError, toNetworkError } from './transport/errors.js';
import type { KubeObject, ListMeta } from './types.js';
import { eagerLineDecoder, type LineDecoder } from './watch.js';

/** The list's own fields: everything but its items. */
export interface ListHead {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Decoded items are handed over in batches of about this many bytes of JSON. */
const BATCH_BYTES = 1 << 20;
const EVENT_PREFIX = Buffer.from('{"type":"ADDED","object":');

/**
 * The end (after the closing quote) of the string whose opening quote is at `open`; -1 when
 * its end has not been received.
 */
function stringEnd(buf: Buffer, open: number): number {
  let from = open + 1;
  for (;;) {
    const q = buf.indexOf(QUOTE, from);
    if (q < 0) return -1;
    // Escaped when an odd number of backslashes precede it (they are all inside the string).
    let k = q - 1;
    while (buf[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

type Phase = 'start' | 'key' | 'colon' | 'itemsValue' | 'value' | 'items' | 'done';

/**
 * Cuts a list body into its items, resumably: {@link scan} is called again with the same
 * bytes plus what arrived since, until {@link Splitter.release} lets the caller drop what was
 * handed out. Offsets are relative to the start of the bytes not yet released.
 */
class Splitter {
  phase: Phase = 'start';
  /** Next byte to look at. */
  private pos = 0;
  /** Start of the token (item, value, key) being scanned, when one is incomplete. */
  private tokStart = -1;
  /** Open brackets of the container being scanned. */
  private depth = 0;
  private key = '';
  /** Bytes that nothing refers to any more: the caller may drop them. */
  private safe = 0;
  readonly head: Record<string, unknown> = {};

  /**
   * Scans `buf` from where the last call stopped; returns the items completed, `[start, end)`
   * pairs, stopping after about `maxBytes` of them. `more` tells whether it stopped early.
   */
  scan(buf: Buffer, maxBytes: number): { spans: number[]; more: boolean } {
    const spans: number[] = [];
    let taken = 0;
    const n = buf.length;
    while (this.phase !== 'done') {
      if (this.tokStart < 0) {
        while (this.pos < n && isSpace(buf[this.pos])) this.pos++;
        if (this.pos >= n) break;
      }
      const c = buf[this.pos]!;
      switch (this.phase) {
        case 'start':
          if (c !== LBRACE) throw malformed('the answer is not a JSON object');
          this.pos++;
          this.phase = 'key';
          break;
        case 'key': {
          if (c === COMMA) {
            this.pos++;
            break;
          }
          if (c === RBRACE) {
            this.pos++;
            this.phase = 'done';
            break;
          }
          if (c !== QUOTE) throw malformed('a field name was expected');
          const end = stringEnd(buf, this.pos);
          if (end < 0) return { spans, more: false };
          this.key = JSON.parse(buf.toString('utf8', this.pos, end)) as string;
          this.pos = end;
          this.phase = 'colon';
          break;
        }
        case 'colon':
          if (c !== COLON) throw malformed('":" was expected');
          this.pos++;
          this.phase = this.key === 'items' ? 'itemsValue' : 'value';
          break;
        case 'itemsValue':
          // The items, unless they are something else than an array (null): a value then.
          if (c === LBRACKET) {
            this.pos++;
            this.phase = 'items';
          } else this.phase = 'value';
          break;
        case 'value': {
          const start = this.tokStart < 0 ? this.pos : this.tokStart;
          const end = this.valueEnd(buf, start);
          if (end < 0) return { spans, more: false };
          this.head[this.key] = JSON.parse(buf.toString('utf8', start, end));
          this.pos = end;
          this.phase = 'key';
          this.safe = end;
          break;
        }
        case 'items': {
          if (this.tokStart < 0) {
            if (c === COMMA) {
              this.pos++;
              break;
            }
            if (c === RBRACKET) {
              this.pos++;
              this.phase = 'key';
              this.safe = this.pos;
              break;
            }
            if (c !== LBRACE) throw malformed('an item is not an object');
            this.tokStart = this.pos;
            this.depth = 0;
          }
          if (!this.container(buf)) return { spans, more: false };
          spans.push(this.tokStart, this.pos);
          taken += this.pos - this.tokStart;
          this.tokStart = -1;
          this.safe = this.pos;
          if (taken >= maxBytes) return { spans, more: true };
          break;
        }
      }
    }
    return { spans, more: false };
  }

  /** Bytes the caller may drop now; offsets move back by as much. */
  release(): number {
    const n = this.safe;
    this.pos -= n;
    if (this.tokStart >= 0) this.tokStart -= n;
    this.safe = 0;
    return n;
  }

  /** Scans the container at `tokStart` from `pos`; true once it is closed (`pos` after it). */
  private container(buf: Buffer): boolean {
    let i = this.pos;
    let d = this.depth;
    const n = buf.length;
    while (i < n) {
      const c = buf[i]!;
      if (c === QUOTE) {
        const e = stringEnd(buf, i);
        if (e < 0) break;
        i = e;
        continue;
      }
      if (c === LBRACE || c === LBRACKET) d++;
      else if (c === RBRACE || c === RBRACKET) {
        d--;
        if (d === 0) {
          this.pos = i + 1;
          this.depth = 0;
          return true;
        }
      }
      i++;
    }
    this.pos = i;
    this.depth = d;
    return false;
  }

  /** The end of the (small) value at `start`, or -1 when not all of it was received. */
  private valueEnd(buf: Buffer, start: number): number {
    const c = buf[start];
    if (c === LBRACE || c === LBRACKET) {
      if (this.tokStart < 0) {
        this.tokStart = start;
        this.depth = 0;
      }
      if (!this.container(buf)) return -1;
      this.tokStart = -1;
      return this.pos;
    }
    if (c === QUOTE) return stringEnd(buf, start);
    // A number, true, false or null: up to the next delimiter.
    let i = start;
    while (i < buf.length && buf[i] !== COMMA && buf[i] !== RBRACE && !isSpace(buf[i])) i++;
    return i < buf.length ? i : -1;
  }
}

const malformed = (why: string) => new SyntaxError(why);

/**
 * The lines of `ADDED` events of the items `spans` of `bytes` (newline-separated, without the
 * last newline). Items without `apiVersion` and `kind` (a built-in list's items come without
 * them, from any kube-apiserver) get `inject`'s, as `ResourceApi.list` fills them in.
 */
function eventLines(bytes: Buffer, spans: number[], inject: Buffer | undefined): Buffer {
  let total = 0;
  const injected: boolean[] = [];
  for (let k = 0; k < spans.length; k += 2) {
    const s = spans[k]!;
    const e = spans[k + 1]!;
    const add = inject !== undefined && !hasTypeFirst(bytes, s, e);
    injected.push(add);
    total += EVENT_PREFIX.length + (e - s) + 2 + (add ? inject.length + 1 : 0);
  }
  const out = Buffer.allocUnsafe(total);
  let o = 0;
  for (let k = 0; k < spans.length; k += 2) {
    const s = spans[k]!;
    const e = spans[k + 1]!;
    o += EVENT_PREFIX.copy(out, o);
    if (injected[k / 2]) {
      // `{"apiVersion":…,"kind":…` then the item's fields after its `{`.
      o += inject!.copy(out, o);
      let f = s + 1;
      while (f < e && isSpace(bytes[f])) f++;
      if (bytes[f] !== RBRACE) out[o++] = COMMA;
      o += bytes.copy(out, o, s + 1, e);
    } else o += bytes.copy(out, o, s, e);
    out[o++] = RBRACE;
    out[o++] = 0x0a;
  }
  return out.subarray(0, o - 1);
}

const API_VERSION_FIRST = Buffer.from('{"apiVersion"');
const KIND_FIRST = Buffer.from('{"kind"');

/**
 * Whether an item names its type in its first field, as every item that has one does (custom
 * resources: apiVersion first; objects with their type meta: kind first).
 */
const hasTypeFirst = (b: Buffer, s: number, e: number) =>
  (e - s > API_VERSION_FIRST.length &&
    b.compare(API_VERSION_FIRST, 0, API_VERSION_FIRST.length, s, s + API_VERSION_FIRST.length) === 0) ||
  (e - s > KIND_FIRST.length && b.compare(KIND_FIRST, 0, KIND_FIRST.length, s, s + KIND_FIRST.length) === 0);

/** Options of {@link decodeListBatches}. */
export interface ListDecoding<T> {
  /** How items become objects (default: decoded at once). */
  decode?: LineDecoder<T>;
  /** The type of items that come without it, e.g. `{ apiVersion: 'v1', kind: 'ConfigMap' }`. */
  itemType?: { apiVersion: string; kind: string };
  signal?: AbortSignal;
  /** Whether the client was closed (a broken stream then ends quietly). */
  closed?: () => boolean;
}

/**
 * Decodes a list answer's body as it arrives: yields its items in batches, and returns the
 * list's own fields once the body has ended. A body that is not a complete JSON list throws an
 * `ApiError` (500 InternalError); a broken connection a {@link NetworkError}.
 */
export async function* decodeListBatches<T extends KubeObject>(
  body: Readable | ByteSource,
  where: { method: string; url: string },
  o: ListDecoding<T> = {},
): AsyncGenerator<T[], ListHead, undefined> {
  const source = isByteSource(body) ? body : readableSource(body);
  const decode = o.decode ?? (eagerLineDecoder as LineDecoder<T>);
  const inject = o.itemType
    ? Buffer.from(
        `{"apiVersion":${JSON.stringify(o.itemType.apiVersion)},"kind":${JSON.stringify(o.itemType.kind)}`,
      )
    : undefined;
  const splitter = new Splitter();
  try {
    let more = true;
    while (more) {
      more = await source.next();
      for (;;) {
        const bytes = source.bytes();
        const scanned = splitter.scan(bytes, BATCH_BYTES);
        let items: T[] | undefined;
        if (scanned.spans.length > 0) {
          const { events } = decode(eventLines(bytes, scanned.spans, inject));
          items = [];
          for (const ev of events) {
            if (ev.type === 'ERROR') throw malformed(ev.error.message);
            if (ev.type !== 'BOOKMARK') items.push(ev.object);
          }
        }
        // Nothing received is referenced while the consumer has the batch.
        source.consume(splitter.release());
        if (items) yield items;
        if (!scanned.more) break;
      }
    }
    if (splitter.phase !== 'done') throw malformed('the answer ended before the list did');
    const head = splitter.head;
    return {
      ...(typeof head.apiVersion === 'string' && { apiVersion: head.apiVersion }),
      ...(typeof head.kind === 'string' && { kind: head.kind }),
      metadata: (head.metadata && typeof head.metadata === 'object' ? head.metadata : {}) as ListMeta,
    };
  } catch (err) {
    if (err instanceof SyntaxError) {
      throw new ApiError({
        code: 500,
        reason: 'InternalError',
        message: `${where.method} ${where.url}: the server's answer is not a JSON list: ${err.message}`,
      });
    }
    if (err instanceof ApiError || err instanceof NetworkError) throw err;
    if (o.signal?.aborted) throw o.signal.reason;
    if (o.closed?.()) throw new NetworkError('reset', 'the client was closed', where, err);
    throw toNetworkError(err, where);
  } finally {
    source.destroy();
  }
}
