/**
 * The webhook server's HTTP/1.1 over TLS: a lean server on `node:tls` instead of node:https.
 * An admission review is one small POST answered with one small JSON body on a kept-alive
 * connection; node:http's `IncomingMessage` and `ServerResponse` (two streams, their events and
 * header objects per request) were about a quarter of a webhook process's CPU per review, which
 * shares the API server's cores. This parses what the API server sends and nothing more, strictly:
 *
 * - origin-form request targets only, ASCII; HTTP/1.1 and HTTP/1.0 (keep-alive as each defines);
 * - headers as RFC 9112 words them (token names, no obs-fold, no control characters), at most
 *   `maxHeaderBytes` (431 beyond);
 * - bodies by `Content-Length` or `Transfer-Encoding: chunked` (both at once is a 400, any other
 *   coding a 501), at most `maxBodyBytes` (413 beyond, before the body is read);
 * - requests pipelined on one connection are answered in order, one at a time;
 * - `Expect: 100-continue` is answered with a 100 before the body is read;
 * - anything malformed gets its status with `Connection: close`, and the connection is closed;
 * - a request whose head takes longer than `headersTimeoutMs`, or whose body longer than
 *   `requestTimeoutMs`, gets a 408 and is closed (slow clients); an idle kept-alive connection is
 *   closed after `idleTimeoutMs`. One timer per server checks them all (none per request).
 */
import { createServer, type Server, type TLSSocket, type TlsOptions } from 'node:tls';

/** One request, its body read whole. */
export interface Http1Request {
  readonly method: string;
  /** The request target as sent (`/path?query`). */
  readonly target: string;
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

/** The answer to a request. */
export interface Http1Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Buffer;
}

/** Handles one request; `respond` is called once (synchronously or later). */
export type Http1Handler = (request: Http1Request, respond: (answer: Http1Answer) => void) => void;

/** Limits of an {@link Http1Server}. */
export interface Http1Limits {
  /** Request line and headers together (default 16 KiB, node:http's). */
  readonly maxHeaderBytes?: number;
  /** A request's body (default 64 MiB). */
  readonly maxBodyBytes?: number;
  /** From a request's first byte to the end of its headers (default 60 s, node:http's). */
  readonly headersTimeoutMs?: number;
  /** From a request's first byte to the end of its body (default 300 s, node:http's). */
  readonly requestTimeoutMs?: number;
  /** A kept-alive connection with no request (default 60 s). */
  readonly idleTimeoutMs?: number;
}

const REASONS: Record<number, string> = {
  100: 'Continue',
  200: 'OK',
  400: 'Bad Request',
  404: 'Not Found',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  417: 'Expectation Failed',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
};

const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\/[\x21-\x7e]*) HTTP\/1\.([01])$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters a field value may not hold (HTAB is allowed; bytes ≥ 0x80 are obs-text). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/**
 * A field line's name and value (without the optional whitespace around it), or undefined when
 * it is not one: no colon, a name that is not a token (obs-fold's leading space included), or a
 * control character in the value.
 */
function fieldLine(line: string): [name: string, value: string] | undefined {
  const colon = line.indexOf(':');
  if (colon <= 0) return undefined;
  const name = line.slice(0, colon);
  if (!TOKEN.test(name)) return undefined;
  let from = colon + 1;
  let to = line.length;
  while (from < to && (line.charCodeAt(from) === 0x20 || line.charCodeAt(from) === 0x09)) from++;
  while (to > from && (line.charCodeAt(to - 1) === 0x20 || line.charCodeAt(to - 1) === 0x09)) to--;
  const value = line.slice(from, to);
  return BAD_VALUE.test(value) ? undefined : [name, value];
}
const CHUNK_SIZE = /^([0-9a-fA-F]{1,8})[ \t]*(?:;[\t\x20-\x7e\x80-\xff]*)?$/;
const CRLF = Buffer.from('\r\n');
const EMPTY = Buffer.alloc(0);

type State =
  | 'head'
  | 'fixed'
  | 'chunk-size'
  | 'chunk-data'
  | 'chunk-end'
  | 'trailers'
  | 'handling'
  | 'closed';

/** A malformed request: its status, then the connection closes. */
class Refused {
  constructor(
    readonly status: number,
    readonly message: string,
  ) {}
}

/** A response's status line and headers, up to and including the blank line. */
function responseHead(status: number, contentType: string, length: number, close: boolean): string {
  return `HTTP/1.1 ${status} ${REASONS[status] ?? 'Unknown'}\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
}

/** One connection's parser and writer. */
class Connection {
  state: State = 'head';
  /** The clock reading when the current state began (a request's first byte, or idleness). */
  since: number;
  /** Whether any byte of the next request has come (else the connection is idle). */
  started = false;
  private buf: Buffer = EMPTY;
  private parts: Buffer[] = [];
  private received = 0;
  private remaining = 0;
  private trailerBytes = 0;
  private method = '';
  private target = '';
  private contentType: string | undefined;
  private keepAlive = true;
  private looping = false;
  private paused = false;

  constructor(
    readonly socket: TLSSocket,
    private readonly server: Http1Server,
  ) {
    this.since = server.clock;
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => socket.destroy());
    // The client is done sending: answer what is under way, then close.
    socket.on('end', () => {
      this.keepAlive = false;
      if (this.state !== 'handling') this.closeAfterWrite();
    });
  }

  private onData(chunk: Buffer): void {
    if (this.state === 'closed') return;
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    if (!this.started && this.state === 'head') {
      this.started = true;
      this.since = this.server.clock;
    }
    if (this.state === 'handling') {
      // Pipelined requests wait for the answer in front of them; a client sending more than a
      // request's worth meanwhile is paused until then.
      if (this.buf.length > this.server.maxHeaderBytes + this.server.maxBodyBytes) {
        this.paused = true;
        this.socket.pause();
      }
      return;
    }
    this.run();
  }

  /** Parses and dispatches what is buffered, request after request. */
  private run(): void {
    // A handler answering synchronously calls back into run(): the loop below goes on instead.
    if (this.looping) return;
    this.looping = true;
    try {
      while (this.state !== 'handling' && this.state !== 'closed' && this.step());
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      this.refuse(err.status, err.message);
    } finally {
      this.looping = false;
    }
  }

  /** One step of the parser; false when it needs more bytes. */
  private step(): boolean {
    const limits = this.server;
    switch (this.state) {
      case 'head': {
        // RFC 9112 §2.2: empty lines before a request line are ignored.
        while (this.buf.length >= 2 && this.buf[0] === 0x0d && this.buf[1] === 0x0a)
          this.buf = this.buf.subarray(2);
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (this.buf.length > limits.maxHeaderBytes) throw new Refused(431, 'request headers too large');
          return false;
        }
        if (end + 4 > limits.maxHeaderBytes) throw new Refused(431, 'request headers too large');
        const head = this.buf.toString('latin1', 0, end);
        // Consumed before parsing: a request without a body is dispatched from parseHead.
        this.buf = this.buf.subarray(end + 4);
        this.parseHead(head);
        return true;
      }
      case 'fixed':
      case 'chunk-data': {
        if (this.buf.length === 0) return false;
        const take = Math.min(this.remaining, this.buf.length);
        this.parts.push(this.buf.subarray(0, take));
        this.buf = this.buf.subarray(take);
        this.remaining -= take;
        if (this.remaining > 0) return false;
        if (this.state === 'fixed') this.dispatch();
        else this.state = 'chunk-end';
        return true;
      }
      case 'chunk-size': {
        const eol = this.buf.indexOf(CRLF);
        if (eol < 0) {
          if (this.buf.length > 1024) throw new Refused(400, 'invalid chunk size line');
          return false;
        }
        const m = CHUNK_SIZE.exec(this.buf.toString('latin1', 0, eol));
        if (!m) throw new Refused(400, 'invalid chunk size');
        const size = Number.parseInt(m[1] as string, 16);
        this.buf = this.buf.subarray(eol + 2);
        this.received += size;
        if (this.received > limits.maxBodyBytes) throw new Refused(413, 'request body too large');
        if (size === 0) this.state = 'trailers';
        else {
          this.remaining = size;
          this.state = 'chunk-data';
        }
        return true;
      }
      case 'chunk-end': {
        if (this.buf.length < 2) return false;
        if (this.buf[0] !== 0x0d || this.buf[1] !== 0x0a) throw new Refused(400, 'invalid chunk end');
        this.buf = this.buf.subarray(2);
        this.state = 'chunk-size';
        return true;
      }
      case 'trailers': {
        const eol = this.buf.indexOf(CRLF);
        if (eol < 0) {
          if (this.trailerBytes + this.buf.length > limits.maxHeaderBytes)
            throw new Refused(431, 'request trailers too large');
          return false;
        }
        if (eol > 0) {
          // Trailer fields are checked and dropped: a review's meaning is all in its body.
          const line = this.buf.toString('latin1', 0, eol);
          if (!fieldLine(line)) throw new Refused(400, 'invalid trailer');
          this.trailerBytes += eol + 2;
          if (this.trailerBytes > limits.maxHeaderBytes) throw new Refused(431, 'request trailers too large');
        }
        this.buf = this.buf.subarray(eol + 2);
        if (eol === 0) this.dispatch();
        return true;
      }
      default:
        return false;
    }
  }

  private parseHead(head: string): void {
    const lines = head.split('\r\n');
    const m = REQUEST_LINE.exec(lines[0] as string);
    if (!m) throw new Refused(400, 'invalid request line');
    const http10 = m[3] === '0';
    let contentLength: string | undefined;
    let chunked = false;
    let connection = '';
    let expect: string | undefined;
    this.contentType = undefined;
    for (let i = 1; i < lines.length; i++) {
      const field = fieldLine(lines[i] as string);
      // A bare CR or LF inside the head lands in a value here; obs-fold's leading space in a name.
      if (!field) throw new Refused(400, 'invalid header line');
      const [name, value] = field;
      switch (name.toLowerCase()) {
        case 'content-length':
          // Several equal values are one (RFC 9110 §8.6); differing ones are a smuggling attempt.
          for (const v of value.split(',')) {
            const n = v.trim();
            if (!/^\d{1,15}$/.test(n) || (contentLength !== undefined && contentLength !== n))
              throw new Refused(400, 'invalid Content-Length');
            contentLength = n;
          }
          break;
        case 'transfer-encoding':
          if (chunked || value.toLowerCase() !== 'chunked')
            throw new Refused(501, `unsupported Transfer-Encoding "${value}"`);
          chunked = true;
          break;
        case 'connection':
          connection += `,${value.toLowerCase()}`;
          break;
        case 'expect':
          expect = value.toLowerCase();
          break;
        case 'content-type':
          this.contentType = value;
          break;
      }
    }
    if (chunked && contentLength !== undefined)
      throw new Refused(400, 'both Transfer-Encoding and Content-Length');
    if (chunked && http10) throw new Refused(400, 'chunked body in HTTP/1.0');
    const tokens = connection.split(',').map((t) => t.trim());
    this.keepAlive = http10 ? tokens.includes('keep-alive') : !tokens.includes('close');
    this.method = m[1] as string;
    this.target = m[2] as string;
    const length = contentLength === undefined ? 0 : Number(contentLength);
    if (length > this.server.maxBodyBytes) throw new Refused(413, 'request body too large');
    if (expect !== undefined) {
      if (expect !== '100-continue') throw new Refused(417, `unsupported expectation "${expect}"`);
      if (!http10 && (chunked || length > 0)) this.socket.write('HTTP/1.1 100 Continue\r\n\r\n');
    }
    this.parts = [];
    this.received = 0;
    this.trailerBytes = 0;
    if (chunked) this.state = 'chunk-size';
    else if (length > 0) {
      this.remaining = length;
      this.state = 'fixed';
    } else this.dispatch();
  }

  private dispatch(): void {
    const parts = this.parts;
    const body =
      parts.length === 1 ? (parts[0] as Buffer) : parts.length === 0 ? EMPTY : Buffer.concat(parts);
    this.parts = [];
    this.state = 'handling';
    let answered = false;
    try {
      this.server.handler(
        { method: this.method, target: this.target, contentType: this.contentType, body },
        (answer) => {
          if (answered) return;
          answered = true;
          this.answer(answer);
        },
      );
    } catch {
      // A handler that throws fails its request, not the process.
      if (!answered) {
        answered = true;
        this.refuse(500, 'internal error');
      }
    }
  }

  private answer(a: Http1Answer): void {
    if (this.state === 'closed') return;
    const close = !this.keepAlive || this.server.closing;
    const length = typeof a.body === 'string' ? Buffer.byteLength(a.body) : a.body.length;
    const head = responseHead(a.status, a.contentType, length, close);
    // One write of head and body (one TLS record for a small answer).
    if (typeof a.body === 'string') this.socket.write(head + a.body);
    else {
      this.socket.cork();
      this.socket.write(head);
      this.socket.write(a.body);
      this.socket.uncork();
    }
    if (close) {
      this.closeAfterWrite();
      return;
    }
    this.state = 'head';
    this.started = this.buf.length > 0;
    this.since = this.server.clock;
    if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
    if (this.buf.length > 0) this.run();
  }

  /** Answers a malformed or timed-out request with `status` and closes. */
  refuse(status: number, message: string): void {
    if (this.state === 'closed') return;
    const body = `${message}\n`;
    this.socket.write(
      responseHead(status, 'text/plain; charset=utf-8', Buffer.byteLength(body), true) + body,
    );
    this.closeAfterWrite();
  }

  private closeAfterWrite(): void {
    this.state = 'closed';
    this.since = this.server.clock;
    this.buf = EMPTY;
    this.parts = [];
    this.socket.end();
  }

  /** Whether no request is under way (nothing of one received, none being answered). */
  get idle(): boolean {
    return this.state === 'head' && !this.started;
  }
}

/** An HTTPS server of {@link Http1Handler}s; see the module docs. */
export class Http1Server {
  readonly tls: Server;
  readonly maxHeaderBytes: number;
  readonly maxBodyBytes: number;
  /** A coarse clock (ms), moved on by the sweep: the states' timestamps cost nothing per request. */
  clock = performance.now();
  closing = false;
  private readonly connections = new Set<Connection>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    options: TlsOptions,
    readonly handler: Http1Handler,
    private readonly limits: Http1Limits = {},
  ) {
    this.maxHeaderBytes = limits.maxHeaderBytes ?? 16 * 1024;
    this.maxBodyBytes = limits.maxBodyBytes ?? 64 * 1024 * 1024;
    this.tls = createServer({ ...options, ALPNProtocols: ['http/1.1'] }, (socket) => {
      const c = new Connection(socket, this);
      this.connections.add(c);
      socket.once('close', () => this.connections.delete(c));
      if (this.closing) c.socket.destroy();
    });
    // A failed handshake only closes its socket.
    this.tls.on('tlsClientError', () => undefined);
  }

  /** Listens on `port` and `host`; resolves once accepting connections. */
  listen(port: number, host: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.tls.once('error', reject);
      this.tls.listen(port, host, () => {
        this.tls.off('error', reject);
        resolve();
      });
      const sweepMs = Math.max(
        10,
        Math.min(1000, this.headersTimeoutMs / 4, this.requestTimeoutMs / 4, this.idleTimeoutMs / 4),
      );
      this.sweeper = setInterval(() => this.sweep(), sweepMs);
      this.sweeper.unref();
    });
  }

  private get headersTimeoutMs(): number {
    return this.limits.headersTimeoutMs ?? 60_000;
  }
  private get requestTimeoutMs(): number {
    return this.limits.requestTimeoutMs ?? 300_000;
  }
  private get idleTimeoutMs(): number {
    return this.limits.idleTimeoutMs ?? 60_000;
  }

  /** Closes the connections whose time in their state is up. */
  private sweep(): void {
    this.clock = performance.now();
    for (const c of this.connections) {
      const age = this.clock - c.since;
      if (c.state === 'handling') continue;
      if (c.state === 'closed') {
        // The peer did not close after our answer: no more waiting for it.
        if (age > 5_000) c.socket.destroy();
      } else if (c.idle) {
        if (age > this.idleTimeoutMs) c.socket.destroy();
      } else if (c.state === 'head' ? age > this.headersTimeoutMs : age > this.requestTimeoutMs)
        c.refuse(408, 'request timeout');
    }
  }

  /** Stops accepting connections and closes the idle ones; `done` once all have closed. */
  close(done?: () => void): void {
    this.closing = true;
    this.tls.close(() => {
      clearInterval(this.sweeper);
      done?.();
    });
    this.closeIdle();
  }

  /** Closes the connections with no request under way. */
  closeIdle(): void {
    for (const c of this.connections) if (c.idle) c.socket.destroy();
  }

  /** Closes every connection now. */
  closeAll(): void {
    for (const c of this.connections) c.socket.destroy();
  }
}
