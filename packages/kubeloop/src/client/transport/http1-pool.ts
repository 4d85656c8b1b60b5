/**
 * Kept-alive HTTP/1.1 connections to one server, for requests whose answer is read whole (every
 * request but a watch): a request takes an idle connection (the most recently used first, as
 * Node's agent does) or opens one, writes its head and body in one write, and reads the answer
 * with the {@link ResponseReader} watches use; the connection then serves the next request.
 *
 * Why not node:http/https: an operator makes a few requests per reconcile, and Node's client
 * cost ~0.3–0.5 ms of CPU each on this kind of machine (a `ClientRequest`, an
 * `IncomingMessage` stream, the agent's bookkeeping, listeners per request and per socket):
 * about 40 % of the sample operator's CPU on 1,000 Foos (`bench/operators`, perf). Here a
 * request is a string written and the answer's bytes copied once.
 *
 * What Node's client does that matters is kept: `Connection: keep-alive`, TCP keep-alive and
 * no Nagle delay on the sockets, idle connections that do not keep the process alive and leave
 * the pool when the server closes them, a connection limit with waiting requests, SNI as
 * Node's agent sets it, requests checked as Node checks them (a header never smuggles a line),
 * and a connection reused only after an answer read to its end that did not ask for `close`.
 * A request on a connection the server closes before answering fails as Node's does
 * (`ECONNRESET`, socket hang up); the transport's retry policy decides.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls';
import { abortError, type ConnectorResponse, DeadlineExceeded } from './connector.js';
import { ResponseReader, type StreamTarget, TOKEN } from './http1-stream.js';

/** One request for a whole answer. */
export interface PoolRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  /** The body: a string goes as UTF-8, bytes as they are. */
  body?: string | Buffer | undefined;
  signal?: AbortSignal | undefined;
  /** Bound on the wait for the response headers, in ms (0 = none). */
  headersTimeoutMs: number;
  /** Bound on the whole exchange, in ms (0 = none). */
  deadlineMs: number;
  /** A longer answer fails with code `ERR_BODY_TOO_LARGE` (none when unset). */
  maxBodyBytes?: number | undefined;
}

/** An answer read whole: `text` is its body; `body` streams the same text for generic readers. */
export interface PoolResponse extends ConnectorResponse {
  text: string;
}

/** What a socket reads into: answers are consumed during the read callback (see http1-stream.ts). */
const READ_BYTES = 64 * 1024;
let readBuffer: Buffer | undefined;

/** Node's rules (`ERR_INVALID_CHAR`, `ERR_UNESCAPED_CHARACTERS`). */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const INVALID_PATH = /[^\u0021-\u00ff]/;
const NON_ASCII = /[^\t\r\n\x20-\x7e]/;

const codeError = (ctor: ErrorConstructor, message: string, code: string): Error =>
  Object.assign(new ctor(message), { code });

/** The header lines of a headers object, checked, and whether they name a Host. */
interface HeaderLines {
  text: string;
  host: boolean;
}

/**
 * The checked lines of frozen headers objects: the transport gives the same object to the
 * requests of an accept/content type, so its lines are checked and joined once.
 */
const frozenLines = new WeakMap<object, HeaderLines>();

/** The request's head, checked as node:http checks it. */
function requestHead(req: PoolRequest, hostHeader: string, bodyBytes: number | undefined): string {
  if (!TOKEN.test(req.method))
    throw codeError(
      TypeError,
      `Method must be a valid HTTP token ["${req.method}"]`,
      'ERR_INVALID_HTTP_TOKEN',
    );
  if (INVALID_PATH.test(req.path))
    throw codeError(TypeError, 'Request path contains unescaped characters', 'ERR_UNESCAPED_CHARACTERS');
  let lines = frozenLines.get(req.headers);
  if (!lines) {
    lines = headerLines(req.headers);
    if (Object.isFrozen(req.headers)) frozenLines.set(req.headers, lines);
  }
  let head = `${req.method} ${req.path} HTTP/1.1\r\n${lines.text}`;
  if (!lines.host) head += `Host: ${hostHeader}\r\n`;
  if (bodyBytes !== undefined) head += `Content-Length: ${bodyBytes}\r\n`;
  return `${head}Connection: keep-alive\r\n\r\n`;
}

/** Header lines, checked as node:http checks them (a header never smuggles a line). */
function headerLines(headers: PoolRequest['headers']): HeaderLines {
  let head = '';
  let host = false;
  for (const name in headers) {
    const value = headers[name]!;
    if (!TOKEN.test(name))
      throw codeError(
        TypeError,
        `Header name must be a valid HTTP token ["${name}"]`,
        'ERR_INVALID_HTTP_TOKEN',
      );
    if (!host && name.length === 4 && name.toLowerCase() === 'host') host = true;
    if (typeof value === 'string') {
      if (INVALID_VALUE.test(value))
        throw codeError(TypeError, `Invalid character in header content ["${name}"]`, 'ERR_INVALID_CHAR');
      head += `${name}: ${value}\r\n`;
    } else
      for (const v of value) {
        if (INVALID_VALUE.test(v))
          throw codeError(TypeError, `Invalid character in header content ["${name}"]`, 'ERR_INVALID_CHAR');
        head += `${name}: ${v}\r\n`;
      }
  }
  return { text: head, host };
}

/** One exchange on a connection: receives what the connection reads, until the answer's end. */
interface Exchange {
  feed(buf: Buffer, n: number): void;
  /** The connection failed or closed before the answer's end. */
  fail(err: Error): void;
}

/** A connection of the pool. */
class Connection {
  readonly socket: Socket;
  exchange: Exchange | undefined;
  /** Exchanges begun on it: a failure of one after the first is marked `reusedConnection`. */
  uses = 0;
  /**
   * When the server will close the connection if it stays idle (its `Keep-Alive: timeout=N`,
   * less a second, as Node's agent reckons it): past it the connection is not used again, so a
   * request is never written to a connection the server is closing at that moment.
   */
  idleUntil = Number.POSITIVE_INFINITY;

  constructor(target: StreamTarget, onIdleEvent: (c: Connection) => void) {
    readBuffer ??= Buffer.allocUnsafe(READ_BYTES);
    const onread = {
      buffer: readBuffer,
      callback: (n: number, buf: Buffer): boolean => {
        if (this.exchange) this.exchange.feed(buf, n);
        // Bytes nobody asked for: the connection's state is unknown, it cannot serve again.
        else this.socket.destroy();
        return true;
      },
    };
    const common = { onread };
    const tls = target.tls;
    this.socket = target.socketPath
      ? netConnect({ path: target.socketPath, ...common })
      : tls
        ? tlsConnect({
            host: target.hostname,
            port: target.port,
            secureContext: tls.secureContext,
            rejectUnauthorized: tls.rejectUnauthorized,
            // As Node's https agent: SNI is the host name, never an IP address.
            ...((tls.servername ?? (isIP(target.hostname) ? undefined : target.hostname)) !== undefined && {
              servername: tls.servername ?? target.hostname,
            }),
            ...common,
          } as ConnectionOptions)
        : netConnect({ host: target.hostname, port: target.port, ...common });
    // As Node's agent: no Nagle delay, TCP keep-alive probes after a second of silence.
    this.socket.setNoDelay(true);
    this.socket.setKeepAlive(true, 1000);
    const onError = (err: Error) => {
      const ex = this.exchange;
      this.exchange = undefined;
      ex?.fail(err);
      this.socket.destroy();
    };
    this.socket.on('error', onError);
    this.socket.on('end', () => {
      const ex = this.exchange;
      if (ex) ex.feed(Buffer.alloc(0), -1);
      this.socket.destroy();
    });
    this.socket.on('close', () => {
      const ex = this.exchange;
      this.exchange = undefined;
      ex?.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      onIdleEvent(this);
    });
  }
}

/** A connection pool to one target. */
export class Http1Pool {
  /** Idle connections, the most recently used last. */
  private readonly idle: Connection[] = [];
  private open = 0;
  private readonly waiting: ((c: Connection | undefined) => void)[] = [];
  private closed = false;
  /** Connections are not kept after their exchange (a rotated client certificate). */
  private retired = false;
  private readonly hostHeader: string;

  constructor(
    private readonly target: StreamTarget,
    private readonly maxConnections: number | undefined,
    /** Sees every socket (the connector destroys them all at once). */
    private readonly track: (socket: Socket) => void,
  ) {
    const name = isIP(target.hostname) === 6 ? `[${target.hostname}]` : target.hostname;
    const standard = target.port === (target.tls ? 443 : 80);
    this.hostHeader = target.socketPath ? 'localhost' : standard ? name : `${name}:${target.port}`;
  }

  /**
   * Closes the idle connections; those in use close after their answer, and requests waiting
   * for a connection get new ones (a client certificate was rotated: new requests go to a new
   * pool, this one's connections end).
   */
  retire(): void {
    this.retired = true;
    for (const c of this.idle.splice(0)) c.socket.destroy();
  }

  /** Closes the idle connections and fails the waiting requests (the client is closed). */
  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) c.socket.destroy();
    for (const w of this.waiting.splice(0)) w(undefined);
  }

  /** Sends `req`; resolves with the whole answer. */
  request(req: PoolRequest): Promise<PoolResponse> {
    let head: string;
    const body = req.body;
    try {
      head = requestHead(req, this.hostHeader, body === undefined ? undefined : Buffer.byteLength(body));
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.closed) return Promise.reject(new Error('the client is closed'));
    if (req.signal?.aborted) return Promise.reject(abortError(req.signal.reason));
    return this.exchange(req, head);
  }

  /** An idle connection, or a new one within the limit; undefined when the caller must wait. */
  private take(): Connection | undefined {
    if (this.closed) return undefined;
    for (let c = this.idle.pop(); c; c = this.idle.pop()) {
      if (c.socket.destroyed) continue;
      if (c.idleUntil <= performance.now()) {
        c.socket.destroy();
        continue;
      }
      c.socket.ref();
      return c;
    }
    if (this.maxConnections !== undefined && this.open >= this.maxConnections) return undefined;
    this.open++;
    const c = new Connection(this.target, (closed) => this.closedConnection(closed));
    this.track(c.socket);
    return c;
  }

  private closedConnection(c: Connection): void {
    this.open--;
    const at = this.idle.indexOf(c);
    if (at >= 0) this.idle.splice(at, 1);
    // A waiting request may open a connection in its place.
    const next = this.waiting.shift();
    if (next) {
      const fresh = this.take();
      if (fresh) next(fresh);
      else this.waiting.unshift(next);
    }
  }

  /** Gives a connection back after an exchange: to a waiting request, to the idle list, or closed. */
  private release(c: Connection, reusable: boolean, idleMs = Number.POSITIVE_INFINITY): void {
    c.exchange = undefined;
    c.idleUntil = performance.now() + idleMs;
    // (A server idle timeout of a second or less leaves no time to use the connection again.)
    if (!reusable || idleMs <= 0 || this.closed || this.retired || c.socket.destroyed) {
      c.socket.destroy();
      return;
    }
    const next = this.waiting.shift();
    if (next) {
      next(c);
      return;
    }
    // As Node's agent: an idle connection does not keep the process alive.
    c.socket.unref();
    this.idle.push(c);
  }

  private exchange(req: PoolRequest, head: string): Promise<PoolResponse> {
    const { signal } = req;
    return new Promise<PoolResponse>((resolve, reject) => {
      /** The connection, once there is one (a request may wait for one: `maxConnections`). */
      let c: Connection | undefined;
      let statusCode = 0;
      let headers: IncomingHttpHeaders = {};
      let keepAlive = false;
      let idleMs = Number.POSITIVE_INFINITY;
      const chunks: Buffer[] = [];
      let size = 0;
      /**
       * The body's bytes while they are all in one read (nearly every answer): a view of the
       * shared read buffer, decoded from there when the answer ends within that read, so that
       * they are not copied into a Buffer of their own first. Copied at the end of a read that
       * does not complete the answer, as the buffer is reused.
       */
      let view: Buffer | undefined;
      let viewFrom = 0;
      let viewTo = 0;
      const keepView = () => {
        if (view) chunks.push(Buffer.from(view.subarray(viewFrom, viewTo)));
        view = undefined;
      };
      let settled = false;
      const finish = (err: Error | undefined, reusable: boolean) => {
        if (settled) return;
        settled = true;
        if (headersTimer) clearTimeout(headersTimer);
        if (deadline) clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
        if (c) this.release(c, reusable, idleMs);
        else {
          const at = this.waiting.indexOf(wait);
          if (at >= 0) this.waiting.splice(at, 1);
        }
        if (err) {
          reject(err);
          return;
        }
        const text = view
          ? view.toString('utf8', viewFrom, viewTo)
          : chunks.length === 0
            ? ''
            : chunks.length === 1
              ? chunks[0]!.toString('utf8')
              : Buffer.concat(chunks).toString('utf8');
        view = undefined;
        resolve(new WholeResponse(statusCode, headers, text));
      };
      const reader = new ResponseReader(
        {
          head: (code, h, http11) => {
            statusCode = code;
            headers = h;
            const connection = h.connection?.toLowerCase();
            keepAlive = http11 ? connection !== 'close' : connection === 'keep-alive';
            const hint = h['keep-alive'];
            const timeout = typeof hint === 'string' ? /^timeout=(\d+)/.exec(hint) : null;
            // Node's agent: the server's idle timeout, less a second for the time a request takes to get there.
            if (timeout) idleMs = Number(timeout[1]) * 1000 - 1000;
            if (headersTimer) clearTimeout(headersTimer);
          },
          body: (buf, from, to) => {
            size += to - from;
            if (req.maxBodyBytes !== undefined && size > req.maxBodyBytes)
              throw codeError(Error, `an answer over ${req.maxBodyBytes} bytes`, 'ERR_BODY_TOO_LARGE');
            if (view === undefined && chunks.length === 0) {
              view = buf;
              viewFrom = from;
              viewTo = to;
            } else {
              keepView();
              chunks.push(Buffer.from(buf.subarray(from, to)));
            }
          },
          end: () => undefined,
        },
        req.method === 'HEAD',
      );
      const exchange: Exchange = {
        feed: (buf, n) => {
          try {
            if (n < 0) {
              // The server ended the connection: complete an answer that runs until then.
              if (reader.eof()) finish(undefined, false);
              return;
            }
            const used = reader.feed(buf, n);
            if (reader.done) finish(undefined, keepAlive && used === n);
            else keepView();
          } catch (err) {
            view = undefined;
            finish(err as Error, false);
          }
        },
        fail: (err) => {
          if (reader.eof()) finish(undefined, false);
          else if (reader.started && (err as { code?: string }).code === 'ECONNRESET')
            finish(
              Object.assign(new Error('the connection closed before the end of the answer'), {
                code: 'ECONNRESET',
              }),
              false,
            );
          // Nothing answered on a kept-alive connection the server may have closed meanwhile:
          // a caller may send the request again on a new one, as Go's transport does.
          else
            finish(
              !reader.started && (c?.uses ?? 0) > 1 ? Object.assign(err, { reusedConnection: true }) : err,
              false,
            );
        },
      };
      const send = (conn: Connection) => {
        c = conn;
        c.exchange = exchange;
        c.uses++;
        const body = req.body;
        if (body === undefined || body.length === 0) c.socket.write(head, 'latin1');
        else if (typeof body !== 'string' || NON_ASCII.test(head)) {
          // Header values beyond ASCII go as latin1 (as Node writes them), the body as UTF-8.
          c.socket.cork();
          c.socket.write(head, 'latin1');
          c.socket.write(body, 'utf8');
          c.socket.uncork();
        } else c.socket.write(head + body, 'utf8');
      };
      const wait = (conn: Connection | undefined) => {
        if (!conn) finish(new Error('the client is closed'), false);
        else if (settled) this.release(conn, true);
        else send(conn);
      };
      const onAbort = () => finish(abortError(signal?.reason), false);
      signal?.addEventListener('abort', onAbort, { once: true });
      const headersTimer =
        req.headersTimeoutMs > 0
          ? setTimeout(
              () =>
                finish(
                  Object.assign(new Error(`no response headers within ${req.headersTimeoutMs} ms`), {
                    code: 'ETIMEDOUT',
                  }),
                  false,
                ),
              req.headersTimeoutMs,
            )
          : undefined;
      const deadline =
        req.deadlineMs > 0
          ? setTimeout(() => finish(new DeadlineExceeded(req.deadlineMs), false), req.deadlineMs)
          : undefined;
      const conn = this.take();
      if (conn) send(conn);
      else this.waiting.push(wait);
    });
  }
}

/** A whole answer; its `body` stream is made only if someone asks for it. */
class WholeResponse implements PoolResponse {
  private stream: Readable | undefined;
  constructor(
    readonly statusCode: number,
    readonly headers: IncomingHttpHeaders,
    readonly text: string,
  ) {}

  get body(): Readable {
    this.stream ??= Readable.from(this.text === '' ? [] : [Buffer.from(this.text)]);
    return this.stream;
  }
}
