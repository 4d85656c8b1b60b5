/**
 * HTTP/1.1 over node:net and node:tls: TCP and TLS to any API server, or plain HTTP over a
 * Unix domain socket (a server on the same machine that offers one; the local control plane's
 * own controllers use it — the socket's file permissions guard it). Requests read whole go
 * through a pool of kept-alive connections ({@link Http1Pool}); watches take a connection of
 * their own ({@link openStream}). Both read answers with one parser into one reused buffer:
 * node:http's client cost several times their CPU per request, and receives a large answer as
 * a Buffer per TLS record (undici, kept for HTTP/2, costs more still).
 */
import type { Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Credentials } from '../auth/authenticator.js';
import {
  abortError,
  type Connector,
  type ConnectorOptions,
  type ConnectorRequest,
  type ConnectorResponse,
} from './connector.js';
import { Http1Pool } from './http1-pool.js';
import { openStream, type StreamTarget } from './http1-stream.js';

/** A TLS identity (a client certificate, or none), and what is made for it. */
interface Identity {
  key: string;
  /** One TLS context for every connection of the identity (TLS targets only). */
  context: SecureContext | undefined;
  pool: Http1Pool | undefined;
}

export class NodeConnector implements Connector {
  /** The identity of the last request: a rotated client certificate needs new connections. */
  private identity: Identity | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly target: { hostname: string; port: number; tls: boolean };
  private destroyed = false;

  constructor(private readonly o: ConnectorOptions) {
    const url = new URL(o.origin);
    const tls = url.protocol === 'https:';
    this.target = {
      // URL keeps IPv6 literals bracketed; node:net wants them bare.
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port ? Number(url.port) : tls ? 443 : 80,
      tls,
    };
    // The identity of the configured client certificate (or of none), ready for the first request.
    try {
      this.identityFor({ cert: o.config.certData, key: o.config.keyData });
    } catch {
      // Unusable PEM data: the first request fails with it, as a request's error.
    }
  }

  async request(req: ConnectorRequest): Promise<ConnectorResponse> {
    if (this.destroyed) throw new Error('the client is closed');
    const { signal } = req;
    if (signal?.aborted) throw abortError(signal.reason);
    if (req.stream && req.body === undefined) return this.stream(req);
    return this.poolFor(req.creds).request({
      method: req.method,
      path: req.path,
      headers: req.headers,
      body: req.body,
      signal,
      headersTimeoutMs: req.headersTimeoutMs,
      deadlineMs: req.deadlineMs ?? 0,
    });
  }

  /** A streaming answer (a watch), on a connection of its own: see {@link openStream}. */
  private stream(req: ConnectorRequest): Promise<ConnectorResponse> {
    return openStream(
      this.targetOf(this.identityFor(req.creds)),
      this.o.socketPath === undefined ? req : { ...req, headers: { ...req.headers, host: 'localhost' } },
      (s) => this.track(s),
    );
  }

  /** Where and how an identity's connections go. */
  private targetOf({ context }: Identity): StreamTarget {
    const { hostname, port } = this.target;
    return {
      hostname,
      port,
      socketPath: this.o.socketPath,
      tls:
        context && this.o.socketPath === undefined
          ? {
              secureContext: context,
              rejectUnauthorized: !this.o.config.insecureSkipTlsVerify,
              servername: this.o.config.tlsServerName,
            }
          : undefined,
    };
  }

  private track(s: Socket): void {
    if (this.sockets.has(s)) return;
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    this.identity?.pool?.close();
    for (const s of this.sockets) s.destroy();
    this.identity = undefined;
  }

  /** The identity of `creds`; a new one closes the old one's idle connections. */
  private identityFor(creds: Credentials): Identity {
    const key = creds.cert ?? '';
    if (this.identity?.key === key) return this.identity;
    const old = this.identity;
    const tls = this.o.config;
    this.identity = {
      key,
      // Made per connection (what an agent does with ca/cert/key), it parsed the PEM data each time.
      context:
        this.o.socketPath === undefined && this.target.tls
          ? createSecureContext({
              ...(tls.caData !== undefined && { ca: tls.caData }),
              ...(creds.cert !== undefined && { cert: creds.cert, key: creds.key }),
            })
          : undefined,
      pool: undefined,
    };
    // Requests and watches on the old identity's connections finish; its idle ones close now.
    old?.pool?.retire();
    return this.identity;
  }

  private poolFor(creds: Credentials): Http1Pool {
    const identity = this.identityFor(creds);
    identity.pool ??= new Http1Pool(this.targetOf(identity), this.o.maxConnections, (s) => this.track(s));
    return identity.pool;
  }
}
