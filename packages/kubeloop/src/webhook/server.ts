/**
 * The webhook server, after controller-runtime's `webhook.Server`: HTTPS on port 9443, one
 * path per webhook, `/convert` for conversions, certificates from a directory (hot-reloaded on
 * rotation) or made with a local CA when there are none, controller-runtime's metrics, and a
 * shutdown that lets in-flight reviews finish. Run it in a Manager with {@link WebhookServer.setupWithManager}.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import type { Client } from '../client/client.js';
import type { CacheReader } from '../runtime/controller/types.js';
import type { Runnable, RunnableContext, RunnableSetup } from '../runtime/manager/manager.js';
import { settlesWithin } from '../util/settles-within.js';
import type { AdmissionWebhook } from './admission.js';
import { CertWatcher, DEFAULT_CERT_DIR, ensureCertificates } from './certs.js';
import { answerConversion, type ConversionReview, type ConversionWebhook } from './conversion.js';
import { answerAdmission } from './handle.js';
import { type Http1Answer, type Http1Request, Http1Server } from './http1-server.js';
import { WebhookMetrics } from './metrics.js';

/** Options of a {@link WebhookServer}. */
export interface WebhookServerOptions {
  /** Port (default 9443, controller-runtime's; `0` picks a free one). */
  readonly port?: number;
  /** Address to bind (default `127.0.0.1` for local development; `0.0.0.0` in a cluster). */
  readonly host?: string;
  /** Directory of `tls.crt` and `tls.key` (default `/tmp/k8s-webhook-server/serving-certs`). */
  readonly certDir?: string;
  readonly certName?: string;
  readonly keyName?: string;
  /**
   * Names the generated certificate is valid for when the directory has none (default the
   * host, `localhost`, `127.0.0.1`, `::1`); add `<service>.<namespace>.svc` for a cluster.
   */
  readonly hosts?: readonly string[];
  /** How often the certificate files are re-read besides file events (default 10 000 ms). */
  readonly certPollIntervalMs?: number;
  /** Upper bound of one handler run (default 10 000 ms, or less when the API server's `?timeout=` is shorter). */
  readonly handlerTimeoutMs?: number;
  /** Where the metrics go (default: the manager's registry in a Manager, else a registry of its own). */
  readonly registry?: Registry;
  /** How long {@link WebhookServer.close} waits for in-flight reviews (default 30 000 ms). */
  readonly drainTimeoutMs?: number;
  /** The largest request body; a larger one is answered 413 before it is read (default 64 MiB). */
  readonly maxRequestBytes?: number;
  /** How long a kept-alive connection may sit with no request (default 60 000 ms). */
  readonly idleTimeoutMs?: number;
  /** How long a request's headers may take to arrive (default 60 000 ms; then 408). */
  readonly headersTimeoutMs?: number;
}

/** The webhook server; see the module docs. */
export class WebhookServer implements Runnable {
  readonly name = 'webhook-server';
  readonly needLeaderElection = false;
  private readonly admission = new Map<string, AdmissionWebhook>();
  private readonly conversions: ConversionWebhook[] = [];
  private server: Http1Server | undefined;
  private watcher: CertWatcher | undefined;
  private metricsOf: WebhookMetrics | undefined;
  private registry: Registry | undefined;
  private client: Client | undefined;
  private cache: CacheReader | undefined;
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private listening: Promise<void> | undefined;
  private closing = false;
  private ca = '';
  /** Whether the server listens (its readiness check). */
  started = false;

  constructor(private readonly options: WebhookServerOptions = {}) {
    this.registry = options.registry;
  }

  /** Adds webhooks (admission or conversion) before the server starts. */
  register(...webhooks: (AdmissionWebhook | ConversionWebhook)[]): this {
    for (const w of webhooks) {
      if ('convert' in w) {
        this.conversions.push(w);
        continue;
      }
      if (this.admission.has(w.path)) throw new Error(`a webhook is already registered at ${w.path}`);
      if (w.path === '/convert') throw new Error('/convert is the conversion path');
      this.admission.set(w.path, w);
    }
    return this;
  }

  /** The admission webhooks registered, for `webhookConfigurations` in `kubeloop/manifests`. */
  get webhooks(): readonly AdmissionWebhook[] {
    return [...this.admission.values()];
  }

  /** The conversions registered. */
  get conversionWebhooks(): readonly ConversionWebhook[] {
    return [...this.conversions];
  }

  /** The port it listens on, once listening. */
  get port(): number {
    const a = this.server?.tls.address() as AddressInfo | null | undefined;
    if (!a) throw new Error('the webhook server is not listening');
    return a.port;
  }

  /** `https://host:port`, once listening. */
  get url(): string {
    const a = this.server?.tls.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `https://${host === '0.0.0.0' ? '127.0.0.1' : host}:${this.port}`;
  }

  /** PEM of the CA that signed the serving certificate (register it as `caBundle`, base64). */
  get caBundle(): string {
    return this.ca;
  }

  /** The metrics registry in use. */
  get metricsRegistry(): Registry {
    this.registry ??= new Registry();
    return this.registry;
  }

  /**
   * Runs the server in `manager`: it listens before the caches start (conversions may be needed
   * for the caches to sync, as in controller-runtime), adds a `webhook` readiness check and its
   * metrics to the manager's registry, and drains at shutdown.
   */
  setupWithManager(manager: {
    add(r: Runnable): unknown;
    addReadyzCheck(name: string, check: () => boolean): unknown;
    readonly registry: Registry;
  }): this {
    this.registry ??= manager.registry;
    manager.add(this);
    manager.addReadyzCheck('webhook', () => this.started);
    return this;
  }

  /** @internal Runnable: listens before the caches start. */
  async prepare(setup: RunnableSetup): Promise<void> {
    this.client = setup.client;
    this.cache = setup.cache;
    await this.listen();
    // The manager keeps the process alive; a manager stopped before start() must not be held up.
    this.server?.tls.unref();
  }

  /** @internal Runnable: serves until the manager stops, then drains. */
  async start(context: RunnableContext): Promise<void> {
    this.client = context.client;
    this.cache = context.cache;
    await this.listen();
    if (!context.signal.aborted) await once(context.signal, 'abort').catch(() => undefined);
    await this.close();
  }

  /** Starts listening (idempotent); resolves once it accepts connections. */
  listen(): Promise<void> {
    this.listening ??= this.doListen();
    return this.listening;
  }

  private async doListen(): Promise<void> {
    const o = this.options;
    const host = o.host ?? '127.0.0.1';
    const files = { dir: o.certDir ?? DEFAULT_CERT_DIR, certName: o.certName, keyName: o.keyName };
    const hosts =
      o.hosts ?? [...new Set([host, 'localhost', '127.0.0.1', '::1'])].filter((h) => h !== '0.0.0.0');
    const loaded = await ensureCertificates(files, hosts);
    this.ca = loaded.caBundle;
    const metrics = new WebhookMetrics(this.metricsRegistry);
    this.metricsOf = metrics;
    for (const path of this.admission.keys()) metrics.forPath(path);
    if (this.conversions.length > 0) metrics.forPath('/convert');
    const server = new Http1Server(
      { cert: loaded.cert, key: loaded.key },
      (req, respond) => this.serve(req, respond),
      {
        ...(o.maxRequestBytes !== undefined && { maxBodyBytes: o.maxRequestBytes }),
        ...(o.idleTimeoutMs !== undefined && { idleTimeoutMs: o.idleTimeoutMs }),
        ...(o.headersTimeoutMs !== undefined && { headersTimeoutMs: o.headersTimeoutMs }),
      },
    );
    this.server = server;
    this.watcher = new CertWatcher(
      files,
      ({ cert, key }) => server.tls.setSecureContext({ cert, key }),
      o.certPollIntervalMs ?? 10_000,
    );
    await server.listen(o.port ?? 9443, host);
    this.watcher.start(loaded);
    this.started = true;
  }

  /** Re-reads the certificate files now (a rotation is otherwise seen on the next file event or poll). */
  reloadCertificates(): Promise<void> {
    return this.watcher?.check() ?? Promise.resolve();
  }

  /**
   * Stops taking connections and waits (up to `drainTimeoutMs`) for the reviews in flight to be
   * answered, as controller-runtime's graceful shutdown does.
   */
  async close(): Promise<void> {
    const server = this.server;
    if (!server || this.closing) return;
    this.closing = true;
    this.started = false;
    this.watcher?.stop();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.inFlight > 0) {
      const drained = new Promise<void>((resolve) => {
        this.drained = resolve;
      });
      await settlesWithin(drained, this.options.drainTimeoutMs ?? 30_000);
    }
    server.closeAll();
    await closed;
  }

  private serve(req: Http1Request, respond: (answer: Http1Answer) => void): void {
    const raw = req.target;
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    const admission = this.admission.get(path);
    const isConvert = path === '/convert' && this.conversions.length > 0;
    if (!admission && !isConvert) {
      respond({ status: 404, contentType: 'text/plain; charset=utf-8', body: '404 page not found\n' });
      return;
    }
    const metrics = this.metricsOf as WebhookMetrics;
    const series = metrics.forPath(path);
    const started = process.hrtime.bigint();
    this.inFlight++;
    series.inFlight.inc();
    const reply = (code: number, out: unknown) => {
      const text = out === undefined ? '' : JSON.stringify(out);
      // A large answer (a conversion of many objects) is encoded once, here, which gives its
      // length too: measuring the string's UTF-8 length and then letting the socket encode it
      // reads megabytes twice. A small one goes as its string, written with the head in one piece.
      respond({
        status: code,
        contentType: 'application/json',
        body: text.length > LARGE_ANSWER ? Buffer.from(text) : text,
      });
      series.count(code);
      series.latency.observe(Number(process.hrtime.bigint() - started) / 1e9);
      series.inFlight.dec();
      if (--this.inFlight === 0) this.drained?.();
    };
    if (!admission) {
      const converted = this.convert(req.body);
      reply(converted.code, converted.body);
      return;
    }
    // One promise per review, no wrapping: this path runs on every admission request.
    void answerAdmission(admission, req.body, req.contentType, {
      timeoutMs:
        q < 0
          ? (this.options.handlerTimeoutMs ?? 10_000)
          : handlerTimeout(raw.slice(q + 1), this.options.handlerTimeoutMs),
      client: this.client,
      cache: this.cache,
      onPanic: () => metrics.panics.inc(),
    }).then((review) => reply(200, review));
  }

  private convert(body: Buffer): { code: number; body: unknown } {
    let review: ConversionReview;
    try {
      review = JSON.parse(body.toString('utf8')) as ConversionReview;
    } catch {
      return { code: 400, body: undefined };
    }
    let out: ConversionReview | undefined;
    try {
      out = answerConversion(this.conversions, review);
    } catch (err) {
      this.metricsOf?.conversionPanics.inc();
      const uid = review.request?.uid ?? '';
      out = {
        apiVersion: review.apiVersion,
        kind: 'ConversionReview',
        response: { uid, result: { status: 'Failure', message: `panic: ${String(err)} [recovered]` } },
      };
    }
    return out ? { code: 200, body: out } : { code: 400, body: undefined };
  }
}

/** Answers longer than this (characters) are encoded to a Buffer before they are sent. */
const LARGE_ANSWER = 64 * 1024;

/** The handler's time: the server's bound, shortened to fit the API server's `?timeout=`. */
function handlerTimeout(query: string, configured = 10_000): number {
  // The API server sends the same `?timeout=` on every call of a webhook.
  const key = `${configured} ${query}`;
  let ms = timeouts.get(key);
  if (ms === undefined) {
    ms = parseHandlerTimeout(query, configured);
    if (timeouts.size > 100) timeouts.clear();
    timeouts.set(key, ms);
  }
  return ms;
}

const timeouts = new Map<string, number>();

function parseHandlerTimeout(query: string, configured: number): number {
  const m = /(?:^|&)timeout=(\d+(?:\.\d+)?)(ms|s|m)(?:&|$)/.exec(query);
  if (!m) return configured;
  const ms = Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 's' ? 1000 : 60_000);
  // Answer a little before the API server gives up, so the caller sees our reason.
  return Math.max(1, Math.min(configured, ms - 200));
}
