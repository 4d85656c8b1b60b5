/**
 * HTTP/1.1 with node:http and node:https: TCP and TLS to any API server, or plain HTTP over a
 * Unix domain socket (a server on the same machine that offers one; the local control plane's
 * own controllers use it — the socket's file permissions guard it). Node's own client receives
 * a large answer with about a third of undici's CPU (6.3 MB watch-list: ~35 ms against
 * 86–105 ms); undici remains for HTTP/2. Watches take a connection of their own
 * ({@link openStream}), and need neither node:http nor node:https: those are loaded with the
 * first other request (they take 7–10 ms to load, which an informer's first sync would wait for).
 */
import type { ClientRequest, Agent as HttpAgent, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Credentials } from '../auth/authenticator.js';
import {
  abortError,
  type Connector,
  type ConnectorOptions,
  type ConnectorRequest,
  type ConnectorResponse,
  DeadlineExceeded,
} from './connector.js';
import { openStream } from './http1-stream.js';

type HttpModules = { http: typeof import('node:http'); https: typeof import('node:https') };
let httpModules: HttpModules | undefined;
const loadHttp = async (): Promise<HttpModules> => {
  const [http, https] = await Promise.all([import('node:http'), import('node:https')]);
  httpModules = { http, https };
  return httpModules;
};

/** A TLS identity (a client certificate, or none), and what is made for it. */
interface Identity {
  key: string;
  /** One TLS context for every connection of the identity (TLS targets only). */
  context: SecureContext | undefined;
  agent: HttpAgent | undefined;
}

export class NodeConnector implements Connector {
  /** The identity of the last request: a rotated client certificate needs new connections. */
  private identity: Identity | undefined;
  private readonly open = new Set<ClientRequest>();
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
    const modules = httpModules ?? (await loadHttp());
    if (this.destroyed) throw new Error('the client is closed');
    if (signal?.aborted) throw abortError(signal.reason);
    const agent = this.agentFor(req.creds, modules);
    const viaSocket = this.o.socketPath !== undefined;
    const send = viaSocket || !this.target.tls ? modules.http.request : modules.https.request;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | string[] | number> = { ...req.headers };
      if (viaSocket) headers.host = 'localhost';
      if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
      // The signal and the deadline are watched here rather than by http.request's own `signal`
      // option: that one wires end-of-stream listeners into every request, a measurable share of
      // an operator's CPU per request.
      const r = send({
        ...(viaSocket
          ? { socketPath: this.o.socketPath }
          : { hostname: this.target.hostname, port: this.target.port }),
        agent,
        path: req.path,
        method: req.method,
        headers,
      });
      let response: IncomingMessage | undefined;
      // The body fails too: an answer being read when the request is abandoned must not end quietly.
      // Rejected here as well: a request still queued for one of the agent's connections
      // (maxConnections) reports its destruction only once it gets a connection.
      const fail = (err: Error) => {
        response?.destroy(err);
        r.destroy(err);
        reject(err);
      };
      const onAbort = signal && (() => fail(abortError(signal.reason)));
      if (signal && onAbort) signal.addEventListener('abort', onAbort, { once: true });
      const deadlineMs = req.deadlineMs ?? 0;
      const deadline =
        deadlineMs > 0 ? setTimeout(() => fail(new DeadlineExceeded(deadlineMs)), deadlineMs) : undefined;
      this.open.add(r);
      // 'close' comes once the answer has been read to its end, or the exchange failed.
      r.on('close', () => {
        this.open.delete(r);
        if (deadline) clearTimeout(deadline);
        if (signal && onAbort) signal.removeEventListener('abort', onAbort);
      });
      r.on('socket', (s: Socket) => this.track(s));
      const timer =
        req.headersTimeoutMs > 0
          ? setTimeout(() => {
              const err = Object.assign(new Error(`no response headers within ${req.headersTimeoutMs} ms`), {
                code: 'ETIMEDOUT',
              });
              r.destroy(err);
            }, req.headersTimeoutMs)
          : undefined;
      r.on('response', (res: IncomingMessage) => {
        if (timer) clearTimeout(timer);
        response = res;
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      r.on('error', (err) => {
        if (timer) clearTimeout(timer);
        reject(err);
      });
      r.end(req.body);
    });
  }

  /** A streaming answer (a watch), on a connection of its own: see {@link openStream}. */
  private stream(req: ConnectorRequest): Promise<ConnectorResponse> {
    const { hostname, port } = this.target;
    const { context } = this.identityFor(req.creds);
    return openStream(
      {
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
      },
      this.o.socketPath === undefined ? req : { ...req, headers: { ...req.headers, host: 'localhost' } },
      (s) => this.track(s),
    );
  }

  private track(s: Socket): void {
    if (this.sockets.has(s)) return;
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    for (const r of this.open) r.destroy();
    for (const s of this.sockets) s.destroy();
    this.identity?.agent?.destroy();
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
      agent: undefined,
    };
    // Requests and watches on the old identity's connections finish; its idle ones close now
    // (Agent.destroy() would cut the ones in use too).
    if (old?.agent)
      for (const list of Object.values(old.agent.freeSockets)) for (const s of list ?? []) s.destroy();
    return this.identity;
  }

  private agentFor(creds: Credentials, modules: HttpModules): HttpAgent {
    const identity = this.identityFor(creds);
    if (identity.agent) return identity.agent;
    const common = {
      keepAlive: true,
      ...(this.o.maxConnections !== undefined && { maxSockets: this.o.maxConnections }),
    };
    const tls = this.o.config;
    identity.agent = identity.context
      ? new modules.https.Agent({
          ...common,
          secureContext: identity.context,
          rejectUnauthorized: !tls.insecureSkipTlsVerify,
          ...(tls.tlsServerName !== undefined && { servername: tls.tlsServerName }),
        })
      : new modules.http.Agent(common);
    return identity.agent;
  }
}
