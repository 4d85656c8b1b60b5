/**
 * How a {@link Transport} reaches its server: the HTTP exchange below retries, credentials and
 * errors. Two exist: node:http/node:https for HTTP/1.1 (TCP and TLS, or a Unix domain socket),
 * and undici when HTTP/2 is asked for — loaded only then.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Credentials } from '../auth/authenticator.js';
import type { ConnectionConfig } from '../config/types.js';

/** One exchange as a connector sees it: credentials are already in the headers. */
export interface ConnectorRequest {
  path: string;
  method: string;
  headers: Record<string, string | string[]>;
  body?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Bound on the wait for the response headers, in ms (0 = none). */
  headersTimeoutMs: number;
  /**
   * Bound on the whole exchange, body included, in ms (0 = none). Past it the request, and the
   * body if it is still being read, fail with a {@link DeadlineExceeded}.
   */
  deadlineMs?: number | undefined;
  /** The TLS identity of this request (a rotated client certificate needs new connections). */
  creds: Credentials;
  /**
   * The answer streams for long (a watch): a connector may give it a connection of its own
   * and read it its own way.
   */
  stream?: boolean | undefined;
}

/** The error of an exchange that outlived its {@link ConnectorRequest.deadlineMs}. */
export class DeadlineExceeded extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(ms: number) {
    super(`no complete answer within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}

/** What a connector destroys an exchange with when its signal aborts (as Node's own `signal` option). */
export const abortError = (reason: unknown): Error =>
  Object.assign(new Error('The operation was aborted', { cause: reason }), {
    name: 'AbortError',
    code: 'ABORT_ERR',
  });

/** An answer: its body may still be coming (a watch), or have been read whole (`text`). */
export interface ConnectorResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
  /** The whole body, when the connector has read it already (then `body` streams the same). */
  text?: string;
}

/** A pool of connections to one server. */
export interface Connector {
  request(req: ConnectorRequest): Promise<ConnectorResponse>;
  /** Closes every connection at once, including streaming answers. */
  destroy(): Promise<void>;
}

/** Options a connector is built from. */
export interface ConnectorOptions {
  origin: string;
  config: ConnectionConfig;
  http2: boolean;
  maxConnections?: number | undefined;
  socketPath?: string | undefined;
}

/** Whether these options ask for undici (to offer HTTP/2 over TLS) rather than Node's own client. */
export const wantsHttp2 = (o: ConnectorOptions): boolean => o.http2 && o.socketPath === undefined;

/** Reads a whole body as UTF-8 text. */
export function readText(body: Readable): Promise<string> {
  // undici's body reads itself faster than an async iterator does.
  const own = (body as Readable & { text?: () => Promise<string> }).text;
  if (typeof own === 'function') return own.call(body);
  // Plain listeners: an async iterator costs a measurable share of a small request's CPU
  // (promises per chunk, end-of-stream bookkeeping).
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const onData = (chunk: Buffer | string) => {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    };
    const finish = (err: Error | undefined) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      if (err) reject(err);
      else
        resolve(
          chunks.length === 1
            ? (chunks[0] as Buffer).toString('utf8')
            : Buffer.concat(chunks).toString('utf8'),
        );
    };
    const onEnd = () => finish(undefined);
    const onError = (err: Error) => finish(err);
    // Destroyed without an error before its end: the answer was cut short.
    const onClose = () =>
      finish(body.readableEnded ? undefined : Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    if (body.errored) {
      finish(body.errored);
      return;
    }
    if (body.readableEnded) {
      finish(undefined);
      return;
    }
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
    body.once('close', onClose);
  });
}
