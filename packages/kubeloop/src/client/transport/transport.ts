/**
 * HTTP to one API server: credentials on every request, retries, optional rate limiting,
 * per-request timeouts and `AbortSignal`, `Warning` headers and a metrics hook, over a
 * {@link Connector} (node:http/https for HTTP/1.1 over TCP, TLS or a Unix socket; undici for HTTP/2).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { ApiError } from '../../api/status.js';
import { type Authenticator, type Credentials, createAuthenticator } from '../auth/authenticator.js';
import type { ConnectionConfig } from '../config/types.js';
import {
  type Connector,
  type ConnectorOptions,
  DeadlineExceeded,
  readText,
  wantsHttp2,
} from './connector.js';
import { apiErrorFromResponse, NetworkError, toNetworkError } from './errors.js';
import type { RequestRecord } from './metrics.js';
import { NodeConnector } from './node-connector.js';
import { type RateLimitOptions, TokenBucket } from './rate-limit.js';
import { isRetryable, type RetryOptions, retryDelayMs, sleep } from './retry.js';
import { parseWarningHeaders } from './warnings.js';

/** The undici connector (HTTP/2 over TLS), loaded only when asked for. */
async function createHttp2Connector(o: ConnectorOptions): Promise<Connector> {
  const { UndiciConnector } = await import('./undici-connector.js');
  return new UndiciConnector(o);
}

/** The kubeloop SDK version sent in the default `User-Agent`. */
export const CLIENT_VERSION = '0.1.0';

/** Transport settings of a client. */
export interface TransportOptions {
  /** `User-Agent` (default `kubeloop/<version> (<os>/<arch>) node/<version>`). */
  userAgent?: string;
  /**
   * Time limit of each attempt of a request, in ms, until its answer is read completely
   * (default 60 s; 0 = none). For a watch it bounds the wait for the response headers only.
   */
  timeoutMs?: number;
  /**
   * Offer HTTP/2 (ALPN `h2`, through undici); the server picks. Default false: HTTP/1.1 with
   * Node's own client, as client-go's default for watches.
   */
  http2?: boolean;
  /** Connections per server (default: as many as needed). */
  maxConnections?: number;
  /**
   * Reach the server over this Unix domain socket with plain HTTP/1.1 instead of TCP and TLS
   * (`server` still names it in URLs and errors). For a server on the same machine that offers
   * one; the local control plane's own controllers use it.
   */
  socketPath?: string;
  /** Retry settings, or false for none (default: 5 retries, 100 ms base, 30 s cap). */
  retry?: RetryOptions | false;
  /** Client-side rate limit; none by default (controller-runtime's choice). */
  rateLimit?: RateLimitOptions;
  /** Called once per attempt with client-go's metric labels; see {@link ClientMetrics}. */
  onRequest?: (record: RequestRecord) => void;
  /**
   * Called with each `Warning` the server sends (deprecations, unknown fields with
   * `fieldValidation=Warn`). Default: `process.emitWarning` once per distinct text.
   */
  onWarning?: (warning: string, request: { method: string; url: string }) => void;
}

/** One HTTP request to the API server. */
export interface HttpRequest {
  method: string;
  /** Path and query, e.g. `/api/v1/namespaces/default/pods?limit=10`. */
  path: string;
  body?: string;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal | undefined;
  /** Overrides {@link TransportOptions.timeoutMs} for this request. */
  timeoutMs?: number | undefined;
}

/** A complete answer. */
export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An answer whose body is still streaming (a watch). */
export interface StreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

const DEFAULT_RETRY = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 30_000 };
const DEFAULT_TIMEOUT_MS = 60_000;

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The connection to one API server; owned by a `Client`, closed with it. */
export class Transport {
  readonly origin: string;
  /** `host:port`, the `host` label of the metrics. */
  readonly host: string;
  private readonly basePath: string;
  private readonly userAgent: string;
  private readonly auth: Authenticator;
  private readonly limiter: TokenBucket | undefined;
  private readonly retry:
    | (Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'>)
    | undefined;
  private readonly warned = new Set<string>();
  private readonly headerSets = new Map<
    string,
    { creds: Credentials; headers: Readonly<Record<string, string | string[]>> }
  >();
  private connector: Promise<Connector> | undefined;
  /** The connector once made: requests then reach it without awaiting its promise. */
  private ready: Connector | undefined;
  private closed = false;

  constructor(
    private readonly config: ConnectionConfig,
    private readonly options: TransportOptions = {},
    auth: Authenticator = createAuthenticator(config),
  ) {
    let url: URL;
    try {
      url = new URL(config.server);
    } catch {
      throw new TypeError(`server ${JSON.stringify(config.server)} is not a URL`);
    }
    this.origin = url.origin;
    this.host = url.host;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.userAgent =
      options.userAgent ??
      `kubeloop/${CLIENT_VERSION} (${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}) node/${process.version}`;
    this.auth = auth;
    this.limiter = options.rateLimit ? new TokenBucket(options.rateLimit) : undefined;
    this.retry = options.retry === false ? undefined : { ...DEFAULT_RETRY, ...options.retry };
    // Node's client is made at once, as client-go builds its transport with the client: the
    // first request (often an informer's watch) does not wait for the TLS context to be made.
    const o = this.connectorOptions();
    if (!wantsHttp2(o)) this.connector = this.newConnector(o);
  }

  /** True once {@link close} was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends a request and reads its whole answer; error answers throw {@link ApiError}, failures {@link NetworkError}. */
  async request(req: HttpRequest): Promise<HttpResponse> {
    return (await this.send(req, false)) as HttpResponse;
  }

  /** Sends a request and returns as soon as a 2xx answer's headers arrive; the body streams. */
  async stream(req: HttpRequest): Promise<StreamResponse> {
    return (await this.send(req, true)) as StreamResponse;
  }

  /** Closes every connection, including open watches. */
  async close(): Promise<void> {
    this.closed = true;
    const connector = this.connector;
    this.connector = undefined;
    this.ready = undefined;
    await (await connector?.catch(() => undefined))?.destroy();
  }

  private connect(): Promise<Connector> {
    if (this.closed) throw new Error('the client is closed');
    this.connector ??= this.newConnector(this.connectorOptions());
    return this.connector;
  }

  private newConnector(o: ConnectorOptions): Promise<Connector> {
    const made = wantsHttp2(o) ? createHttp2Connector(o) : Promise.resolve(new NodeConnector(o));
    made.then(
      (c) => {
        if (!this.closed && this.connector === made) this.ready = c;
      },
      () => undefined,
    );
    return made;
  }

  private connectorOptions(): ConnectorOptions {
    return {
      origin: this.origin,
      config: this.config,
      http2: this.options.http2 ?? false,
      maxConnections: this.options.maxConnections,
      socketPath: this.options.socketPath,
    };
  }

  /**
   * The headers of a request: one frozen object per accept/content type and credentials, so
   * that a connector can keep what it derives from them (the pool keeps their checked text).
   */
  private headers(req: HttpRequest, creds: Credentials): Record<string, string | string[]> {
    // Impersonation headers come from the configuration as it is at each request.
    if (this.config.impersonate) return this.makeHeaders(req, creds);
    const key =
      req.contentType === undefined ? (req.accept ?? '') : `${req.accept ?? ''}\n${req.contentType}`;
    const known = this.headerSets.get(key);
    if (known?.creds === creds) return known.headers;
    const headers = Object.freeze(this.makeHeaders(req, creds));
    // Bounded: requests use a handful of accept/content types.
    if (known || this.headerSets.size < 32) this.headerSets.set(key, { creds, headers });
    return headers;
  }

  private makeHeaders(req: HttpRequest, creds: Credentials): Record<string, string | string[]> {
    const h: Record<string, string | string[]> = {
      'user-agent': this.userAgent,
      accept: req.accept ?? 'application/json',
    };
    if (req.contentType) h['content-type'] = req.contentType;
    if (creds.authorization) h.authorization = creds.authorization;
    const imp = this.config.impersonate;
    if (imp) {
      h['impersonate-user'] = imp.user;
      if (imp.uid) h['impersonate-uid'] = imp.uid;
      if (imp.groups?.length) h['impersonate-group'] = imp.groups;
      for (const [k, v] of Object.entries(imp.extra ?? {}))
        h[`impersonate-extra-${encodeURIComponent(k)}`] = v;
    }
    return h;
  }

  private warn(headers: IncomingHttpHeaders, method: string, path: string): void {
    if (headers.warning === undefined) return;
    const url = this.origin + path;
    const texts = parseWarningHeaders(headers.warning);
    for (const text of texts) {
      if (this.options.onWarning) this.options.onWarning(text, { method, url });
      else if (!this.warned.has(text)) {
        if (this.warned.size < 1000) this.warned.add(text);
        process.emitWarning(text, { type: 'KubernetesWarning' });
      }
    }
  }

  /** Reports one attempt to the metrics hook. */
  private record(req: HttpRequest, started: number, attempt: number, code: string): void {
    this.options.onRequest?.({
      method: req.method,
      host: this.host,
      path: req.path,
      code,
      durationSeconds: (performance.now() - started) / 1000,
      attempt,
    });
  }

  private async send(req: HttpRequest, stream: boolean): Promise<HttpResponse | StreamResponse> {
    const path = this.basePath + req.path;
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let attempt = 0;
    let refreshed = false;
    for (;;) {
      if (req.signal?.aborted) throw req.signal.reason;
      if (this.limiter) await this.limiter.acquire(req.signal);
      const creds = await this.auth.credentials();
      const started = performance.now();

      let failure: ApiError | NetworkError;
      try {
        const res = await (this.ready ?? (await this.connect())).request({
          path,
          method: req.method,
          headers: this.headers(req, creds),
          body: req.body,
          signal: req.signal,
          // A whole-answer deadline for buffered requests; a watch only bounds the wait for headers.
          headersTimeoutMs: stream && timeoutMs > 0 ? timeoutMs : 0,
          deadlineMs: stream ? 0 : timeoutMs,
          creds,
          stream,
        });
        const ok = res.statusCode < 400;
        if (stream && ok) {
          this.record(req, started, attempt, String(res.statusCode));
          this.warn(res.headers, req.method, path);
          return { status: res.statusCode, headers: res.headers, body: res.body };
        }
        const body = res.text ?? (await readText(res.body));
        this.record(req, started, attempt, String(res.statusCode));
        this.warn(res.headers, req.method, path);
        if (ok) return { status: res.statusCode, headers: res.headers, body };
        failure = apiErrorFromResponse(res.statusCode, body, header(res.headers, 'retry-after'));
        if (res.statusCode === 401 && !refreshed) {
          refreshed = true;
          if (await this.auth.refresh(creds)) continue;
        }
      } catch (err) {
        this.record(req, started, attempt, '<error>');
        if (req.signal?.aborted) throw req.signal.reason;
        if (err instanceof DeadlineExceeded)
          throw new NetworkError(
            'timeout',
            `no complete answer within ${timeoutMs} ms`,
            { method: req.method, url: this.origin + path },
            err,
          );
        if (this.closed)
          throw new NetworkError(
            'reset',
            'the client was closed',
            { method: req.method, url: this.origin + path },
            err,
          );
        failure = toNetworkError(err, { method: req.method, url: this.origin + path });
      }

      if (!this.retry || attempt >= this.retry.maxRetries || !isRetryable(req.method, failure)) throw failure;
      attempt++;
      const delayMs = retryDelayMs(attempt, failure, this.retry);
      this.retry.onRetry?.({ method: req.method, url: this.origin + path, attempt, delayMs, error: failure });
      await sleep(delayMs, req.signal);
    }
  }
}
