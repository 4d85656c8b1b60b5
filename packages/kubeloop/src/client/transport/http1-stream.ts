/**
 * A streaming HTTP/1.1 exchange (a watch) on a connection of its own: the request is written
 * and the answer read here, the socket reading into one buffer that is reused (`onread`) and
 * the body's bytes waiting in a {@link ByteQueue}, where a watch decodes them.
 *
 * Why not node:https: its answer is a stream of new Buffers, one per TLS record and then one
 * more per body piece (the HTTP parser copies them): a 6 MB watch-list's snapshot was 12 MB of
 * short-lived memory and most of a process's RSS growth, plus a stream's work per record.
 * A watch owns its connection for its lifetime anyway (HTTP/1.1 has one exchange at a time),
 * and asks the server to close it at the end (`Connection: close`).
 */

import type { IncomingHttpHeaders } from 'node:http';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { type ConnectionOptions, type SecureContext, connect as tlsConnect } from 'node:tls';
import { ByteQueue, type ByteSource } from './byte-queue.js';
import { abortError, type ConnectorResponse } from './connector.js';

/** Where and how to connect. */
export interface StreamTarget {
  hostname: string;
  port: number;
  /** A Unix domain socket instead of TCP (plain HTTP). */
  socketPath?: string | undefined;
  /** TLS, when set. */
  tls?:
    | {
        secureContext: SecureContext;
        rejectUnauthorized: boolean;
        servername?: string | undefined;
      }
    | undefined;
}

/** The exchange. */
export interface StreamRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  signal?: AbortSignal | undefined;
  /** Bound on the wait for the response headers, in ms (0 = none). */
  headersTimeoutMs: number;
}

/** An error of the answer's syntax, named as Node's HTTP parser names its own. */
const parseError = (code: string, message: string): Error =>
  Object.assign(new Error(`invalid HTTP answer: ${message}`), { code });

/** Headers larger than this are refused (Node's default limit). */
const MAX_HEAD_BYTES = 16 * 1024;
/** What the socket reads into; TLS hands over at most a record (16 KiB) per read. */
const READ_BYTES = 64 * 1024;
/**
 * The one buffer every stream's socket reads into. A read is handed to its callback at once
 * and consumed there (the head is copied, body bytes are copied into the stream's queue), and
 * reads of different sockets never interleave (libuv reads one socket and calls back before the
 * next), so the streams can share it: a process with 70 quiet watches (the control plane's
 * built-in controllers) held 70 of these, 4.5 MB, for nothing.
 */
let readBuffer: Buffer | undefined;

export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\r\n\0]/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
/** Headers of which Node keeps only the first of several (its IncomingMessage rules). */
const SINGLE = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/** The request's head, checked as node:http checks it (a header can never smuggle a line). */
function requestHead(target: StreamTarget, req: StreamRequest): string {
  if (!TOKEN.test(req.method)) throw new TypeError(`invalid HTTP method ${JSON.stringify(req.method)}`);
  if (!req.path.startsWith('/') || /[\s\0]/.test(req.path)) {
    throw new TypeError(`invalid request path ${JSON.stringify(req.path)}`);
  }
  let head = `${req.method} ${req.path} HTTP/1.1\r\n`;
  let host = false;
  for (const [name, value] of Object.entries(req.headers)) {
    if (!TOKEN.test(name)) throw new TypeError(`invalid HTTP header name ${JSON.stringify(name)}`);
    if (name.toLowerCase() === 'host') host = true;
    for (const v of Array.isArray(value) ? value : [value]) {
      if (BAD_VALUE.test(v)) throw new TypeError(`invalid character in the value of HTTP header ${name}`);
      head += `${name}: ${v}\r\n`;
    }
  }
  if (!host) {
    const name = isIP(target.hostname) === 6 ? `[${target.hostname}]` : target.hostname;
    const standard = target.port === (target.tls ? 443 : 80);
    head += `Host: ${standard ? name : `${name}:${target.port}`}\r\n`;
  }
  return `${head}Connection: close\r\n\r\n`;
}

/**
 * Header names as received → their lowercase key, each checked once: a server sends the same
 * few names in every answer, and checking and lowercasing them was a share of each request's CPU.
 */
const headerKeys = new Map<string, string>();
const MAX_HEADER_KEYS = 256;

/** Whether char code `c` is printable ASCII other than a space (what `trim` never removes). */
const solid = (c: number) => c > 32 && c < 127;

/**
 * The value of header line `line` after its colon, trimmed. The usual `Name: value` form is
 * sliced once; anything else (no space, more whitespace, other characters at the ends) is trimmed.
 */
function headerValue(line: string, colon: number): string {
  const from = colon + 2;
  if (
    line.length > from &&
    line.charCodeAt(colon + 1) === 32 &&
    solid(line.charCodeAt(from)) &&
    solid(line.charCodeAt(line.length - 1))
  )
    return line.slice(from);
  return line.slice(colon + 1).trim();
}

/** Parses a response head (without its final empty line); throws on what HTTP/1.1 forbids. */
function parseHead(text: string): { statusCode: number; headers: IncomingHttpHeaders; http11: boolean } {
  const lines = text.split('\r\n');
  const status = STATUS_LINE.exec(lines[0] ?? '');
  if (!status) throw parseError('HPE_INVALID_CONSTANT', `status line ${JSON.stringify(lines[0])}`);
  const headers: IncomingHttpHeaders = {};
  const all = headers as Record<string, string | string[] | undefined>;
  for (let k = 1; k < lines.length; k++) {
    const line = lines[k]!;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    let key = headerKeys.get(name);
    if (key === undefined) {
      if (!TOKEN.test(name))
        throw parseError('HPE_INVALID_HEADER_TOKEN', `header line ${JSON.stringify(line)}`);
      key = name.toLowerCase();
      if (headerKeys.size < MAX_HEADER_KEYS) headerKeys.set(name, key);
    }
    const value = headerValue(line, colon);
    // (The hoisted expression: a literal here made a RegExp per header line.)
    if (BAD_VALUE.test(value)) throw parseError('HPE_INVALID_HEADER_TOKEN', `header ${name}`);
    const had = all[key];
    if (key === 'set-cookie') all[key] = [...((had as string[] | undefined) ?? []), value];
    else if (had === undefined) all[key] = value;
    else if (!SINGLE.has(key)) all[key] = `${had as string}, ${value}`;
  }
  return { statusCode: Number(status[2]), headers, http11: status[1] === '1' };
}

/** The head read so far of a new answer: shared, as it is never written to (a Buffer each was ~1 % of a request's allocations). */
const NO_BYTES = Buffer.alloc(0);

const CR = 13;
const LF = 10;

// Where the body's framing is at.
/** Reading a chunk's size (hex digits). */
const SIZE = 0;
/** A chunk extension, up to the CR of its size line. */
const EXTENSION = 1;
/** The LF of a size line. */
const SIZE_LF = 2;
/** A chunk's data, then its CR LF. */
const DATA = 3;
const DATA_CR = 4;
const DATA_LF = 5;
/** The start of a trailer line (or of the final empty line). */
const TRAILER = 6;
/** Inside a trailer line, then its LF. */
const TRAILER_LINE = 7;
const TRAILER_LF = 8;
/** The LF of the final empty line. */
const FINAL_LF = 9;
/** A body of a known length. */
const LENGTH = 10;
/** A body that ends when the connection closes. */
const UNTIL_CLOSE = 11;
const DONE = 12;

/**
 * The body of a streaming answer: a {@link ByteSource} for the watch decoder, and a readable
 * stream of its bytes for anyone else (an error's body, read whole).
 */
class SocketBody extends Readable implements ByteSource {
  constructor(
    private readonly queue: ByteQueue,
    private readonly socket: Socket,
  ) {
    super();
  }

  next(): Promise<boolean> {
    return this.queue.next();
  }

  bytes(): Buffer {
    return this.queue.bytes();
  }

  consume(n: number): void {
    this.queue.consume(n);
  }

  private pumping = false;

  override _read(): void {
    if (this.pumping) return;
    this.pumping = true;
    const pump = async () => {
      for (;;) {
        const more = await this.queue.next();
        const b = this.queue.bytes();
        const copy = b.length > 0 ? Buffer.from(b) : undefined;
        this.queue.consume(b.length);
        if (!more) {
          if (copy) this.push(copy);
          this.push(null);
          return;
        }
        if (copy && !this.push(copy)) return;
      }
    };
    pump().then(
      () => {
        this.pumping = false;
      },
      (err: unknown) => {
        this.pumping = false;
        this.destroy(err as Error);
      },
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.queue.finish(err ?? undefined);
    this.socket.destroy();
    callback(err);
  }
}

/** What a {@link ResponseReader} finds. */
export interface ResponseSink {
  /**
   * The answer's status and headers (interim 1xx answers are skipped); `http11` false for an
   * HTTP/1.0 answer (whose connection is not kept unless it says so).
   */
  head(statusCode: number, headers: IncomingHttpHeaders, http11: boolean): void;
  /** Bytes of the body, `buf[from, to)`: valid during the call only. */
  body(buf: Buffer, from: number, to: number): void;
  /** The answer is complete. */
  end(): void;
}

/**
 * Reads an HTTP/1.1 answer from what its connection receives: the head, then the body through
 * its framing (chunked, a Content-Length, or up to the connection's end). Strict, as Node's
 * parser is: a syntax error throws, with the code Node's parser would give it.
 */
export class ResponseReader {
  /** The head received so far; undefined once it is complete. */
  private headBytes: Buffer | undefined = NO_BYTES;
  private framing = SIZE;
  /** Bytes left of a chunk or of a Content-Length body; a chunk's size while it is read. */
  private remaining = 0;
  private sizeDigits = 0;

  /** `bodiless`: the answer to a HEAD request, which has a head only whatever it says. */
  constructor(
    private readonly sink: ResponseSink,
    private readonly bodiless = false,
  ) {}

  /** Whether the whole answer has been read. */
  get done(): boolean {
    return this.framing === DONE;
  }

  /** Whether the head has been read. */
  get started(): boolean {
    return this.headBytes === undefined;
  }

  /**
   * Reads `buf[0, n)`; returns how many bytes were the answer's (fewer than `n` only when the
   * answer ended and more bytes followed it).
   */
  feed(buf: Buffer, n: number): number {
    let i = 0;
    if (this.headBytes) {
      i = this.readHead(buf, 0, n);
      if (this.headBytes) return n;
    }
    return this.readBody(buf, i, n);
  }

  /** The connection's end: completes a body that runs until then; whether the answer is complete. */
  eof(): boolean {
    if (this.headBytes === undefined && this.framing === UNTIL_CLOSE) this.finish();
    return this.framing === DONE;
  }

  /** Reads head bytes from `buf[from, n)`; returns where the body starts. */
  private readHead(buf: Buffer, from: number, n: number): number {
    const before = this.headBytes!.length;
    // A head that comes in one read (nearly all) is parsed where it is, without a copy.
    const all =
      before === 0 ? buf.subarray(from, n) : Buffer.concat([this.headBytes!, buf.subarray(from, n)]);
    // The empty line may begin in what came before.
    const end = all.indexOf('\r\n\r\n', Math.max(0, before - 3), 'latin1');
    if (end < 0 || end > MAX_HEAD_BYTES) {
      if (all.length > MAX_HEAD_BYTES) throw parseError('HPE_HEADER_OVERFLOW', 'headers too large');
      // Kept across reads: a copy, as the read buffer is reused.
      this.headBytes = before === 0 ? Buffer.from(all) : all;
      return n;
    }
    const { statusCode, headers, http11 } = parseHead(all.toString('latin1', 0, end));
    const bodyStart = from + end + 4 - before;
    if (statusCode >= 100 && statusCode < 200) {
      // An interim answer (100 Continue…): the real one follows.
      this.headBytes = NO_BYTES;
      return this.readHead(buf, bodyStart, n);
    }
    this.headBytes = undefined;
    const te = headers['transfer-encoding'];
    const length = headers['content-length'];
    if (this.bodiless) this.framing = DONE;
    else if (te !== undefined) {
      this.framing = /(?:^|,)\s*chunked\s*$/i.test(te) ? SIZE : UNTIL_CLOSE;
    } else if (length !== undefined) {
      if (!/^\d+$/.test(length)) throw parseError('HPE_INVALID_CONTENT_LENGTH', `Content-Length ${length}`);
      this.remaining = Number(length);
      this.framing = this.remaining === 0 ? DONE : LENGTH;
    } else if (statusCode === 204 || statusCode === 304) this.framing = DONE;
    else this.framing = UNTIL_CLOSE;
    this.sink.head(statusCode, headers, http11);
    if (this.framing === DONE) this.finish();
    return bodyStart;
  }

  private finish(): void {
    this.framing = DONE;
    this.sink.end();
  }

  /** Hands over up to `remaining` bytes of `buf[i, n)` (a chunk's, or a sized body's); returns where they end. */
  private takeBody(buf: Buffer, i: number, n: number): number {
    const take = Math.min(this.remaining, n - i);
    this.sink.body(buf, i, i + take);
    this.remaining -= take;
    return i + take;
  }

  /** Reads body bytes `buf[i, n)` through the framing; returns where the answer's bytes end. */
  private readBody(buf: Buffer, i: number, n: number): number {
    while (i < n) {
      switch (this.framing) {
        case DATA:
          i = this.takeBody(buf, i, n);
          if (this.remaining === 0) this.framing = DATA_CR;
          break;
        case SIZE: {
          const c = buf[i++]!;
          const digit = hexValue(c);
          if (digit >= 0) {
            if (++this.sizeDigits > 12) throw parseError('HPE_INVALID_CHUNK_SIZE', 'chunk size too large');
            this.remaining = this.remaining * 16 + digit;
          } else if (this.sizeDigits === 0) throw parseError('HPE_INVALID_CHUNK_SIZE', 'chunk size expected');
          else if (c === CR) this.framing = SIZE_LF;
          else if (c === 59 /* ; */) this.framing = EXTENSION;
          else throw parseError('HPE_INVALID_CHUNK_SIZE', 'invalid character in a chunk size');
          break;
        }
        case EXTENSION: {
          const c = buf[i++]!;
          if (c === CR) this.framing = SIZE_LF;
          else if (c === LF) throw parseError('HPE_INVALID_CHUNK_SIZE', 'bare LF in a chunk extension');
          break;
        }
        case SIZE_LF:
          expect(buf[i++]!, LF);
          this.sizeDigits = 0;
          this.framing = this.remaining === 0 ? TRAILER : DATA;
          break;
        case DATA_CR:
          expect(buf[i++]!, CR);
          this.framing = DATA_LF;
          break;
        case DATA_LF:
          expect(buf[i++]!, LF);
          this.framing = SIZE;
          break;
        case TRAILER:
          this.framing = buf[i++] === CR ? FINAL_LF : TRAILER_LINE;
          break;
        case TRAILER_LINE:
          if (buf[i++] === CR) this.framing = TRAILER_LF;
          break;
        case TRAILER_LF:
          expect(buf[i++]!, LF);
          this.framing = TRAILER;
          break;
        case FINAL_LF:
          expect(buf[i++]!, LF);
          this.finish();
          return i;
        case LENGTH:
          i = this.takeBody(buf, i, n);
          if (this.remaining === 0) {
            this.finish();
            return i;
          }
          break;
        case UNTIL_CLOSE:
          this.sink.body(buf, i, n);
          return n;
        default:
          return i; // bytes after the answer
      }
    }
    return n;
  }
}

/**
 * Sends `req` on a new connection to `target`; resolves with the answer once its headers have
 * arrived. `track` sees the socket (to destroy it with the connector).
 */
export function openStream(
  target: StreamTarget,
  req: StreamRequest,
  track: (socket: Socket) => void,
): Promise<ConnectorResponse> {
  let head: string;
  try {
    head = requestHead(target, req);
  } catch (err) {
    return Promise.reject(err);
  }
  const { signal } = req;
  if (signal?.aborted) return Promise.reject(abortError(signal.reason));
  return new Promise((resolve, reject) => {
    let queue: ByteQueue | undefined;
    let settled = false;
    const reader = new ResponseReader({
      head: (statusCode, headers) => {
        queue = new ByteQueue({
          pause: () => socket.pause(),
          resume: () => socket.resume(),
          destroy: () => socket.destroy(),
        });
        settled = true;
        if (timer) clearTimeout(timer);
        resolve({ statusCode, headers, body: new SocketBody(queue, socket) });
      },
      body: (buf, from, to) => queue!.push(buf, from, to),
      end: () => {
        queue!.finish();
        socket.destroy();
      },
    });
    readBuffer ??= Buffer.allocUnsafe(READ_BYTES);
    const onread = {
      buffer: readBuffer,
      callback: (n: number, buf: Buffer): boolean => {
        try {
          reader.feed(buf, n);
        } catch (err) {
          fail(err);
        }
        return true;
      },
    };
    const socket: Socket = target.socketPath
      ? netConnect({ path: target.socketPath, onread })
      : target.tls
        ? tlsConnect({
            host: target.hostname,
            port: target.port,
            secureContext: target.tls.secureContext,
            rejectUnauthorized: target.tls.rejectUnauthorized,
            ...(target.tls.servername !== undefined && { servername: target.tls.servername }),
            // Supported since Node 15 (nodejs/node#35753); @types/node lacks it.
            onread,
          } as ConnectionOptions)
        : netConnect({ host: target.hostname, port: target.port, onread });
    track(socket);

    const timer =
      req.headersTimeoutMs > 0
        ? setTimeout(() => {
            fail(
              Object.assign(new Error(`no response headers within ${req.headersTimeoutMs} ms`), {
                code: 'ETIMEDOUT',
              }),
            );
          }, req.headersTimeoutMs)
        : undefined;
    // The signal ends the exchange, its body included, until the connection closes.
    const onAbort = () => fail(abortError(signal?.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    function cleanup(): void {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    /** Fails the exchange: the promise before the headers, the body after. */
    function fail(err: unknown): void {
      if (!settled) {
        settled = true;
        if (timer) clearTimeout(timer);
        reject(err);
      } else queue?.finish(err);
      socket.destroy();
    }

    socket.write(head);
    socket.on('error', fail);
    socket.on('end', () => reader.eof());
    socket.on('close', () => {
      cleanup();
      if (reader.eof()) return;
      const message = reader.started
        ? 'the connection closed before the end of the answer'
        : 'socket hang up';
      fail(Object.assign(new Error(message), { code: 'ECONNRESET' }));
    });
  });
}

const expect = (c: number, want: number) => {
  if (c !== want) throw parseError('HPE_STRICT', `expected ${want === CR ? 'CR' : 'LF'} in the chunked body`);
};

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}
