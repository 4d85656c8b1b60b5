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
  /** The TLS identity of this request (a rotated client certificate needs new connections). */
  creds: Credentials;
}

/** An answer whose body has not been read yet. */
export interface ConnectorResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
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

/** The connector for these options: undici to offer HTTP/2 over TLS, else Node's own client. */
export async function createConnector(o: ConnectorOptions): Promise<Connector> {
  if (o.http2 && o.socketPath === undefined) {
    const { UndiciConnector } = await import('./undici-connector.js');
    return new UndiciConnector(o);
  }
  const { NodeConnector } = await import('./node-connector.js');
  return new NodeConnector(o);
}

/** Reads a whole body as UTF-8 text. */
export async function readText(body: Readable): Promise<string> {
  // undici's body reads itself faster than an async iterator does.
  const own = (body as Readable & { text?: () => Promise<string> }).text;
  if (typeof own === 'function') return own.call(body);
  const chunks: Buffer[] = [];
  for await (const chunk of body)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return chunks.length === 1
    ? (chunks[0] as Buffer).toString('utf8')
    : Buffer.concat(chunks).toString('utf8');
}
