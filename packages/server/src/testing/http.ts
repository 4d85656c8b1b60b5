import type { IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { ControlPlane } from '../control-plane.js';
import { eventually } from './wait.js';

/** A JSON answer of the API server, read deeply by tests without declaring its shape. */
// biome-ignore lint/suspicious/noExplicitAny: tests read any field of any answer.
export type Json = any;

/** One answer of {@link httpClient}. */
export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body (undefined when it is not JSON). */
  json: Json;
}

/** Options of one request of {@link httpClient}. */
export interface HttpOptions {
  /** A body sent as JSON. */
  body?: unknown;
  /** Raw body bytes/string (sent as-is). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** Bearer token (default: the admin's); `null` sends none (an anonymous request). */
  token?: string | null;
}

/** The client {@link httpClient} returns. */
export type Http = ReturnType<typeof httpClient>;

/**
 * A minimal HTTPS client of the API server (trusts the cluster CA, authenticates as the admin):
 * for tests that check the exact bytes, status codes and headers a request gets, below any
 * Kubernetes client library. `close()` it when done.
 *
 * @example
 * ```ts
 * const http = httpClient(env);
 * const res = await http.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'a' } });
 * expect(res.status).toBe(201);
 * const w = http.watch('/api/v1/namespaces/default/configmaps?watch=1');
 * await eventually(() => w.events.length > 0);
 * w.close();
 * http.close();
 * ```
 */
export function httpClient(cp: Pick<ControlPlane, 'url' | 'clientConfig'>) {
  const agent = new Agent({ ca: cp.clientConfig.caData, keepAlive: true, maxSockets: 32 });
  const url = new URL(cp.url);
  const send = (method: string, path: string, opts: HttpOptions = {}): Promise<HttpResult> =>
    new Promise((resolve, reject) => {
      const payload = opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined);
      const headers: Record<string, string> = {
        Accept: 'application/json',
        ...(payload !== undefined && { 'Content-Type': 'application/json' }),
        ...opts.headers,
      };
      // Without a length node sends the body of a DELETE unframed, and the server misreads it.
      if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload));
      const token = opts.token === undefined ? cp.clientConfig.token : opts.token;
      if (token) headers.Authorization = `Bearer ${token}`;
      const req = httpsRequest(
        { host: url.hostname, port: url.port, path, method, headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return {
    send,
    get: (path: string, opts?: HttpOptions) => send('GET', path, opts),
    post: (path: string, body: unknown, opts?: HttpOptions) => send('POST', path, { ...opts, body }),
    put: (path: string, body: unknown, opts?: HttpOptions) => send('PUT', path, { ...opts, body }),
    patch: (path: string, body: unknown, type: string, opts?: HttpOptions) =>
      send('PATCH', path, { ...opts, body, headers: { 'Content-Type': type, ...opts?.headers } }),
    delete: (path: string, opts?: HttpOptions) => send('DELETE', path, opts),
    /**
     * Opens a watch and collects its events until `close()`. With `paused`, nothing is read
     * until `resume()` (the server's output backs up, as with a slow client).
     */
    watch(path: string, headers: Record<string, string> = {}, options: { paused?: boolean } = {}) {
      const events: Json[] = [];
      let response: IncomingMessage | undefined;
      let buffer = '';
      let ended = false;
      let status = 0;
      const req = httpsRequest(
        {
          host: url.hostname,
          port: url.port,
          path,
          method: 'GET',
          headers: {
            Accept: 'application/json',
            Authorization: `Bearer ${cp.clientConfig.token}`,
            ...headers,
          },
          agent: new Agent({ ca: cp.clientConfig.caData }),
        },
        (res) => {
          status = res.statusCode ?? 0;
          response = res;
          if (options.paused) res.pause();
          res.on('data', (c: Buffer) => {
            buffer += c.toString('utf8');
            let nl = buffer.indexOf('\n');
            while (nl >= 0) {
              const line = buffer.slice(0, nl).trim();
              buffer = buffer.slice(nl + 1);
              if (line) events.push(JSON.parse(line));
              nl = buffer.indexOf('\n');
            }
          });
          res.on('end', () => {
            ended = true;
          });
          res.on('error', () => {
            ended = true;
          });
        },
      );
      req.on('error', () => {
        ended = true;
      });
      req.end();
      return {
        events,
        get status() {
          return status;
        },
        get ended() {
          return ended;
        },
        resume: () => response?.resume(),
        close: () => req.destroy(),
      };
    },
    close: () => agent.destroy(),
  };
}

/** The collection of CustomResourceDefinitions. */
export const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/**
 * Path of a namespaced custom resource collection (or of one object in it).
 *
 * @example
 * ```ts
 * await http.post(crPath('example.com', 'v1', 'widgets'), widget); // in `default`
 * await http.get(crPath('example.com', 'v1', 'widgets', 'w1', 'team-a'));
 * ```
 */
export function crPath(
  group: string,
  version: string,
  plural: string,
  name?: string,
  ns = 'default',
): string {
  return `/apis/${group}/${version}/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`;
}

/**
 * The condition of a type on an object's status, if any.
 *
 * @example
 * ```ts
 * expect(condition(crd, 'Established')?.status).toBe('True');
 * ```
 */
export function condition(obj: Json, type: string): Json {
  return (obj?.status?.conditions ?? []).find((c: Json) => c.type === type);
}

/**
 * Creates a CRD over HTTP and waits until it is Established and its resource answers a list;
 * returns the established CRD.
 *
 * @example
 * ```ts
 * await establish(http, widgetsCrd);
 * ```
 */
export async function establish(http: Http, crd: Json): Promise<Json> {
  const res = await http.post(CRDS, crd);
  if (res.status !== 201) throw new Error(`CRD ${crd.metadata.name}: ${res.status} ${res.text}`);
  return waitEstablished(http, crd);
}

/**
 * Waits until a CRD (created by other means: kubectl, a client) is Established and the
 * collection of its first served version can be listed; returns the established CRD.
 *
 * @example
 * ```ts
 * await env.ok(['apply', '-f', 'crd.yaml']);
 * await waitEstablished(http, crd);
 * ```
 */
export async function waitEstablished(http: Http, crd: Json): Promise<Json> {
  const name = crd.metadata.name;
  const version = crd.spec.versions.find((v: Json) => v.served)?.name;
  const established = await eventually(
    async () => {
      const r = await http.get(`${CRDS}/${name}`);
      return condition(r.json, 'Established')?.status === 'True' ? r.json : undefined;
    },
    10_000,
    `${name} to be Established`,
  );
  const ns = crd.spec.scope === 'Cluster' ? '' : '/namespaces/default';
  await eventually(
    async () =>
      (await http.get(`/apis/${crd.spec.group}/${version}${ns}/${crd.spec.names.plural}`)).status === 200,
    10_000,
    `${crd.spec.names.plural} to be served`,
  );
  return established;
}

/**
 * The `Warning` header texts of a response (the quoted part of `299 - "..."`).
 *
 * @example
 * ```ts
 * expect(warnings(res.headers)).toEqual(['unknown field "spec.colour"']);
 * ```
 */
export function warnings(headers: Record<string, string | string[] | undefined>): string[] {
  const raw = headers.warning;
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : raw.split(/,(?=\s*299 )/);
  return list.map((w) => {
    const m = /^\s*299 - "(.*)"\s*$/.exec(w);
    return m ? JSON.parse(`"${m[1]}"`) : w;
  });
}
