/**
 * Calls webhooks (admission and CRD conversion) over HTTPS, as kube-apiserver's webhook client
 * (`k8s.io/apiserver/pkg/util/webhook`) calls them: a POST of JSON with `?timeout=<n>s`, the
 * server's certificate verified with the configuration's `caBundle` (or the system roots), and
 * failures worded as Go's `net/http` and client-go word them, so that the texts kube puts after
 * `failed to call webhook: ` come out the same.
 *
 * How `clientConfig.service` reaches a process on this machine: the Service is looked up in the
 * store, its port (`service.port`, default 443) is matched to the ports of its ready endpoints
 * (EndpointSlices labelled `kubernetes.io/service-name`, else the Endpoints object of the same
 * name), and the call connects to the first ready endpoint's address and target port. Endpoint
 * addresses are loopback-routable here: an operator running on the host is reached through a
 * selector-less Service with an EndpointSlice (or Endpoints) of `127.0.0.1`, and process-backed
 * pods get addresses in 127.0.0.0/8. TLS still verifies the name `<name>.<namespace>.svc` (the SNI
 * and the certificate's names), and errors print the URL kube prints,
 * `https://<name>.<namespace>.svc:<port><path>?timeout=<n>s`. A Service without ready endpoints
 * fails as kube's endpoint resolver does (`no endpoints available for service "<name>"`).
 *
 * Connections are kept alive, since every admitted request pays for a handshake otherwise: one
 * pool of kubeloop's HTTP/1.1 client ({@link Http1Pool}) per CA bundle and address. Not
 * node:https: its `ClientRequest`, `IncomingMessage` and agent bookkeeping cost about half of
 * the server's CPU per webhook call (~0.2 ms; two calls per create with one mutating and one
 * validating webhook), where the pool writes a string and copies the answer's bytes once.
 */
import type { Socket } from 'node:net';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { Http1Pool } from 'kubeloop/client';
import { collectionPrefix, objectKey, type Store } from '../../storage/store.js';
import { isObject, type Obj } from '../../util/object.js';

/** Where a webhook is (the API's `WebhookClientConfig`). */
export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  /** Base64 PEM, as in the API. */
  caBundle?: string;
}

/** What went wrong calling a webhook, for callers that treat the cases apart. */
export type WebhookCallFailure = 'timeout' | 'connection' | 'status' | 'body';

/**
 * A failed webhook call. `message` is exactly the text kube-apiserver puts after
 * `failed to call webhook: `, e.g. `Post "https://x.y.svc:443/p?timeout=10s": context deadline exceeded`.
 */
export class WebhookCallError extends Error {
  constructor(
    message: string,
    /** timeout: no answer in time; connection: no connection (refused, TLS, no endpoints); status: a non-2xx answer; body: an answer that is not JSON. */
    readonly failure: WebhookCallFailure,
    /** The HTTP status of a `status` failure. */
    readonly statusCode?: number,
    /** The Status the webhook's non-2xx answer carried, or client-go's generic one for it. */
    readonly status?: Obj,
  ) {
    super(message);
    this.name = 'WebhookCallError';
  }
}

/**
 * A request body already encoded as JSON, posted as is: a conversion review of many stored
 * objects is put together from their cached encodings instead of parsed and encoded again.
 * Its text is `head`, the `items` separated by commas, then `tail`; they are written into the
 * request's bytes one by one, without first joining them into one string (a copy of the whole
 * body, which the encoding to UTF-8 would then copy again).
 */
export class EncodedJson {
  constructor(
    readonly head: string,
    readonly items: readonly string[],
    readonly tail: string,
  ) {}

  /** The body's UTF-8 bytes. */
  bytes(): Buffer {
    let length =
      Buffer.byteLength(this.head) + Buffer.byteLength(this.tail) + Math.max(0, this.items.length - 1);
    for (const item of this.items) length += Buffer.byteLength(item);
    const out = Buffer.allocUnsafe(length);
    let at = out.write(this.head, 0);
    for (let n = 0; n < this.items.length; n++) {
      if (n > 0) out[at++] = 0x2c; // ','
      at += out.write(this.items[n]!, at);
    }
    out.write(this.tail, at);
    return out;
  }

  /** The body's text (what {@link bytes} encodes). */
  get text(): string {
    return `${this.head}${this.items.join(',')}${this.tail}`;
  }
}

/** Calls webhooks. */
export interface WebhookCaller {
  /** POSTs `body` as JSON (an {@link EncodedJson} as it is), returns the parsed JSON response; rejects with WebhookCallError. */
  post(config: WebhookClientConfig, body: unknown, options: { timeoutSeconds: number }): Promise<unknown>;
  /** Closes the kept-alive connections (when the server stops). */
  close?(): void;
}

/** The largest answer read from a webhook; a larger one is a `body` failure. */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** Connections per webhook address at most (node:https's agent had `maxSockets: 64`). */
const MAX_CONNECTIONS = 64;

/** The webhook caller of a server, resolving Services from `store`. */
export function createWebhookCaller(store: Store): WebhookCaller {
  /** Per CA bundle: its TLS context and the pools of the addresses called with it. */
  const bundles = new Map<string, { context: SecureContext; pools: Map<string, Http1Pool> }>();
  /** Every connection, destroyed at close (the pools close only idle ones). */
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const poolFor = (caBundle: string | undefined, target: Target): Http1Pool => {
    const key = caBundle ?? '';
    let bundle = bundles.get(key);
    if (!bundle) {
      const ca = caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined;
      // One TLS context per CA bundle (the system roots without one): given only `ca`, each new
      // connection would parse the bundle into a context of its own.
      bundle = { context: createSecureContext(ca ? { ca } : {}), pools: new Map() };
      bundles.set(key, bundle);
    }
    const address = `${target.host} ${target.port} ${target.servername}`;
    let pool = bundle.pools.get(address);
    if (!pool) {
      pool = new Http1Pool(
        {
          hostname: target.host,
          port: target.port,
          tls: {
            secureContext: bundle.context,
            rejectUnauthorized: true,
            // SNI carries names only; a certificate for an IP address is checked against the host.
            servername: isIP(target.servername) ? undefined : target.servername,
          },
        },
        MAX_CONNECTIONS,
        track,
      );
      bundle.pools.set(address, pool);
    }
    return pool;
  };
  // A URL's target depends only on the URL and the timeout: parsed once, not per call (a
  // Service's is looked up each time, as its endpoints change).
  const urlTargets = new Map<string, Target>();
  return {
    post(config, body, options) {
      const timeout = `${options.timeoutSeconds}s`;
      let target: Target | undefined;
      let pool: Http1Pool;
      try {
        if (config.url) {
          const key = `${timeout} ${config.url}`;
          target = urlTargets.get(key);
          if (!target) {
            target = resolve(store, config, timeout);
            if (urlTargets.size > 1000) urlTargets.clear();
            urlTargets.set(key, target);
          }
        } else target = resolve(store, config, timeout);
        const kept = target.pool;
        if (kept && kept.caBundle === config.caBundle) pool = kept.pool;
        else {
          pool = poolFor(config.caBundle, target);
          target.pool = { caBundle: config.caBundle, pool };
        }
      } catch (err) {
        return Promise.reject(err);
      }
      // A review's text goes to the socket as it is, written with the request's head in one
      // piece, encoded once on the way out (no Buffer of it made here first).
      const payload = body instanceof EncodedJson ? body.bytes() : JSON.stringify(body);
      return send(target, pool, payload, options.timeoutSeconds, true);
    },
    close() {
      for (const bundle of bundles.values()) for (const pool of bundle.pools.values()) pool.close();
      bundles.clear();
      urlTargets.clear();
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** Where one call goes: the URL printed in errors, and the address actually dialled. */
interface Target {
  printed: string;
  host: string;
  port: number;
  path: string;
  servername: string;
  /** The pool a URL's target was last called through, and with which CA bundle (found without a key per call). */
  pool?: { caBundle: string | undefined; pool: Http1Pool };
}

function resolve(store: Store, config: WebhookClientConfig, timeout: string): Target {
  if (config.url) {
    let u: URL;
    try {
      u = new URL(config.url);
    } catch {
      throw new WebhookCallError(`parse "${config.url}": invalid URL`, 'connection');
    }
    u.searchParams.set('timeout', timeout);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = u.port ? Number(u.port) : 443;
    return {
      printed: u.toString(),
      host,
      port,
      path: `${u.pathname}${u.search}`,
      servername: host,
    };
  }
  const svc = config.service;
  if (!svc) throw new WebhookCallError('neither service nor url specified', 'connection');
  const port = svc.port ?? 443;
  const servername = `${svc.name}.${svc.namespace}.svc`;
  const path = `${svc.path ?? ''}?timeout=${timeout}`;
  const printed = `https://${servername}:${port}${path.startsWith('/') || path.startsWith('?') ? '' : '/'}${path}`;
  const fail = (reason: string): never => {
    throw new WebhookCallError(`Post "${printed}": ${reason}`, 'connection');
  };
  const service = store.get(objectKey('', 'services', svc.namespace, svc.name))?.object as Obj | undefined;
  if (!service) return fail(`service "${svc.name}" not found`);
  const spec = isObject(service.spec) ? service.spec : {};
  if (spec.type === 'ExternalName' && typeof spec.externalName === 'string') {
    return {
      printed,
      host: spec.externalName,
      port,
      path,
      servername,
    };
  }
  const ports = Array.isArray(spec.ports) ? (spec.ports as Obj[]) : [];
  const svcPort = ports.find((p) => p.port === port);
  if (!svcPort) return fail(`no service port ${port} found for service "${svc.name}"`);
  const address = readyEndpoint(store, svc.namespace, svc.name, svcPort);
  if (!address) return fail(`no endpoints available for service "${svc.name}"`);
  return {
    printed,
    host: address.ip,
    port: address.port,
    path,
    servername,
  };
}

/**
 * The first ready endpoint of a Service port: EndpointSlices first (what kube-proxy reads), then
 * the Endpoints object, for users who write only that.
 */
function readyEndpoint(
  store: Store,
  namespace: string,
  name: string,
  svcPort: Obj,
): { ip: string; port: number } | undefined {
  const portName = typeof svcPort.name === 'string' ? svcPort.name : '';
  const numericTarget = typeof svcPort.targetPort === 'number' ? svcPort.targetPort : undefined;
  const slices = store.list(collectionPrefix('discovery.k8s.io', 'endpointslices', namespace)).items;
  for (const s of slices) {
    const slice = s.object as Obj;
    const labels = isObject(slice.metadata) && isObject(slice.metadata.labels) ? slice.metadata.labels : {};
    if (labels['kubernetes.io/service-name'] !== name) continue;
    const ports = Array.isArray(slice.ports) ? (slice.ports as Obj[]) : [];
    const p = ports.find((x) => (typeof x.name === 'string' ? x.name : '') === portName) ?? ports[0];
    const port = typeof p?.port === 'number' ? p.port : numericTarget;
    if (port === undefined) continue;
    for (const e of Array.isArray(slice.endpoints) ? (slice.endpoints as Obj[]) : []) {
      const conditions = isObject(e.conditions) ? e.conditions : {};
      if (conditions.ready === false) continue;
      const ip = Array.isArray(e.addresses) ? e.addresses[0] : undefined;
      if (typeof ip === 'string') return { ip, port };
    }
  }
  const endpoints = store.get(objectKey('', 'endpoints', namespace, name))?.object as Obj | undefined;
  for (const subset of Array.isArray(endpoints?.subsets) ? (endpoints.subsets as Obj[]) : []) {
    const ports = Array.isArray(subset.ports) ? (subset.ports as Obj[]) : [];
    const p = ports.find((x) => (typeof x.name === 'string' ? x.name : '') === portName) ?? ports[0];
    const port = typeof p?.port === 'number' ? p.port : numericTarget;
    const address = Array.isArray(subset.addresses) ? (subset.addresses[0] as Obj | undefined) : undefined;
    if (port !== undefined && typeof address?.ip === 'string') return { ip: address.ip, port };
  }
  return undefined;
}

/** The request headers of every call (the pool adds Host, Content-Length and Connection). */
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, */*' };

/**
 * One POST. A kept-alive connection the webhook closed while it sat idle fails the next request
 * sent on it before any answer comes; Go's transport sends such a request again on a new
 * connection, and so does this (once, and only when the connection was reused and no answer
 * began), so that a webhook restarted between two requests is not reported as failed.
 */
async function send(
  target: Target,
  pool: Http1Pool,
  payload: Buffer | string,
  timeoutSeconds: number,
  mayRetry: boolean,
): Promise<unknown> {
  const prefix = `Post "${target.printed}": `;
  let res: { statusCode: number; text: string };
  try {
    res = await pool.request({
      method: 'POST',
      path: target.path,
      headers: HEADERS,
      body: payload,
      headersTimeoutMs: 0,
      // The context deadline of kube's call: the whole exchange, not only the connection.
      deadlineMs: timeoutSeconds * 1000,
      maxBodyBytes: MAX_RESPONSE_BYTES,
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { reusedConnection?: boolean };
    if (mayRetry && err.reusedConnection && err.code === 'ECONNRESET') {
      return send(target, pool, payload, timeoutSeconds, false);
    }
    if (err.name === 'DeadlineExceeded') {
      throw new WebhookCallError(`${prefix}context deadline exceeded`, 'timeout');
    }
    if (err.code === 'ERR_BODY_TOO_LARGE') {
      throw new WebhookCallError(`${prefix}http: response body too large`, 'body');
    }
    throw new WebhookCallError(prefix + goNetError(err, target), failureOf(err));
  }
  const code = res.statusCode;
  if (code < 200 || code > 206) throw statusFailure(code, res.text);
  try {
    return JSON.parse(res.text);
  } catch (err) {
    throw new WebhookCallError(jsonError(res.text, err), 'body');
  }
}

function failureOf(err: NodeJS.ErrnoException): WebhookCallFailure {
  return err.code === 'ETIMEDOUT' ? 'timeout' : 'connection';
}

/** A Node network or TLS error as Go's net/http and crypto/tls word it. */
function goNetError(err: NodeJS.ErrnoException, target: Target): string {
  const addr = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  const verify = (reason: string) => `tls: failed to verify certificate: x509: ${reason}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${addr}: connect: network is unreachable`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${target.host}: no such host`;
    case 'ECONNRESET':
      return `read tcp ${addr}: read: connection reset by peer`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'UNABLE_TO_GET_ISSUER_CERT':
      return verify('certificate signed by unknown authority');
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
      return verify('certificate has expired or is not yet valid');
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return verify(hostnameError(err, target.servername));
    default:
      if (err.code?.startsWith('ERR_SSL') || err.code?.startsWith('EPROTO'))
        return 'remote error: tls: handshake failure';
      return err.message;
  }
}

/** Go's x509.HostnameError text, from the certificate's names Node reports. */
function hostnameError(
  err: NodeJS.ErrnoException & { cert?: { subjectaltname?: string } },
  host: string,
): string {
  const sans = (err.cert?.subjectaltname ?? '')
    .split(', ')
    .filter((s) => s.startsWith('DNS:') || s.startsWith('IP Address:'))
    .map((s) => s.slice(s.indexOf(':') + 1));
  if (isIP(host)) {
    const ips = (err.cert?.subjectaltname ?? '')
      .split(', ')
      .filter((s) => s.startsWith('IP Address:'))
      .map((s) => s.slice('IP Address:'.length));
    if (ips.length === 0)
      return `cannot validate certificate for ${host} because it doesn't contain any IP SANs`;
    return `certificate is valid for ${ips.join(', ')}, not ${host}`;
  }
  if (sans.length === 0) return `certificate is not valid for any names, but wanted to match ${host}`;
  return `certificate is valid for ${sans.join(', ')}, not ${host}`;
}

/**
 * A non-2xx answer as client-go reads it: the webhook's own Status when it sent one, else the
 * generic text of `NewGenericServerResponse` for the code.
 */
function statusFailure(code: number, text: string): WebhookCallError {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed) && parsed.kind === 'Status' && typeof parsed.message === 'string') {
      return new WebhookCallError(parsed.message, 'status', code, parsed);
    }
  } catch {
    // Not a Status: client-go's generic answer below.
  }
  const body = text.trim();
  let reason = 'Unknown';
  let message = `the server responded with the status code ${code} but did not return more information`;
  const generic: Record<number, [string, string]> = {
    400: ['BadRequest', 'the server rejected our request for an unknown reason'],
    401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
    403: ['Forbidden', body],
    404: ['NotFound', 'the server could not find the requested resource'],
    405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    409: ['AlreadyExists', 'the server reported a conflict'],
    422: ['Invalid', 'the server rejected our request due to an error in our request'],
    429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
    503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
    504: [
      'Timeout',
      'the server was unable to return a response in the time allotted, but may still be processing the request',
    ],
  };
  const known = generic[code];
  if (known) [reason, message] = known;
  else if (code >= 500) {
    reason = 'InternalError';
    message = `an error on the server (${JSON.stringify(body)}) has prevented the request from succeeding`;
  }
  const status = {
    apiVersion: 'v1',
    kind: 'Status',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    details: { causes: [{ reason: 'UnexpectedServerResponse', message: body }] },
    code,
  };
  return new WebhookCallError(message, 'status', code, status);
}

/** client-go's decoding error for an answer that is not JSON. */
function jsonError(text: string, err: unknown): string {
  const first = text.trimStart()[0];
  const detail =
    first === undefined
      ? 'unexpected end of JSON input'
      : /[[{"\d\-tfn]/.test(first)
        ? `${err instanceof Error ? err.message : String(err)}`
        : `invalid character '${first}' looking for beginning of value`;
  return `couldn't get version/kind; json parse error: ${detail}`;
}
