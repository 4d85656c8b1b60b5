import { HttpClient, type Response, type Stream } from './http.js';
import { configMap, isBenchObject, storedConfigMap } from './objects.js';
import type { ServerProcess } from './servers.js';

/** One page of a list, with the response it came from (whose timings exclude parsing). */
export interface Page {
  res: Response;
  count: number;
  /** Continuation for the next page; undefined on the last one. */
  next: string | undefined;
  /** Client-side milliseconds spent decoding the body. */
  parseMs: number;
}

/**
 * The operations the benchmarks run, over the API of one server: Kubernetes REST for kubeloop,
 * the v3 JSON gateway for etcd (with the key layout and transactions kube-apiserver uses).
 */
export interface Target {
  readonly server: ServerProcess;
  readonly http: HttpClient;
  /** Makes `namespace` usable. */
  prepare(namespace: string): Promise<void>;
  /** Creates one ConfigMap; throws unless the server created it. */
  create(namespace: string, name: string): Promise<Response>;
  /** Deletes every ConfigMap of `namespace`. */
  deleteAll(namespace: string): Promise<void>;
  /** Reads one page (`limit` 0: everything). */
  list(namespace: string, limit: number, next: string | undefined): Promise<Page>;
  /** Opens a watch on the ConfigMaps of `namespace`; resolves once it is established. */
  watch(namespace: string, onAdded: (name: string, at: bigint) => void): Promise<Stream>;
  close(): Promise<void>;
}

/** Connects to a running kubeloop server with `sockets` pooled connections. */
export function kubeloopTarget(server: ServerProcess, sockets: number): Target {
  const http = new HttpClient(server.endpoint, sockets);
  const collection = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
  return {
    server,
    http,
    async prepare(ns) {
      const res = await http.request(
        'POST',
        '/api/v1/namespaces',
        JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      );
      if (res.status !== 201 && res.status !== 409) throw failure('create namespace', res);
    },
    async create(ns, name) {
      const res = await http.request('POST', collection(ns), configMap(ns, name));
      if (res.status !== 201) throw failure(`create ${ns}/${name}`, res);
      return res;
    },
    async deleteAll(ns) {
      const res = await http.request('DELETE', collection(ns));
      if (res.status !== 200) throw failure(`deletecollection ${ns}`, res);
    },
    async list(ns, limit, next) {
      const q = new URLSearchParams();
      if (limit > 0) q.set('limit', String(limit));
      if (next) q.set('continue', next);
      const qs = q.size > 0 ? `?${q}` : '';
      const res = await http.request('GET', `${collection(ns)}${qs}`);
      if (res.status !== 200) throw failure(`list ${ns}`, res);
      const t0 = process.hrtime.bigint();
      const body = JSON.parse(res.body.toString('utf8')) as {
        items: { metadata: { name: string } }[];
        metadata: { continue?: string };
      };
      const parseMs = Number(process.hrtime.bigint() - t0) / 1e6;
      // Every namespace also holds the kube-root-ca.crt ConfigMap (as in Kubernetes): count only ours.
      const count = body.items.filter((i) => isBenchObject(i.metadata.name)).length;
      return { res, count, next: body.metadata.continue || undefined, parseMs };
    },
    async watch(ns, onAdded) {
      // The informer pattern: list for a resourceVersion, then watch from it.
      const listed = await http.request('GET', `${collection(ns)}?limit=1`);
      const rv = (JSON.parse(listed.body.toString('utf8')) as { metadata: { resourceVersion: string } })
        .metadata.resourceVersion;
      return http.stream(
        'GET',
        `${collection(ns)}?watch=true&resourceVersion=${rv}`,
        undefined,
        (line, at) => {
          const ev = JSON.parse(line) as { type: string; object: { metadata?: { name?: string } } };
          if (ev.type === 'ADDED' && ev.object.metadata?.name) onAdded(ev.object.metadata.name, at);
        },
      );
    },
    async close() {
      http.close();
    },
  };
}

/** Connects to a running etcd; objects are kept under `/registry/configmaps/<ns>/<name>` like kube-apiserver does. */
export function etcdTarget(server: ServerProcess, sockets: number): Target {
  const http = new HttpClient(server.endpoint, sockets);
  const prefix = (ns: string) => `/registry/configmaps/${ns}/`;
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const call = async (path: string, body: unknown): Promise<Response> => {
    const res = await http.request('POST', path, JSON.stringify(body));
    if (res.status !== 200) throw failure(`etcd ${path}`, res);
    return res;
  };
  return {
    server,
    http,
    async prepare() {
      // etcd has no namespaces: a key prefix is all there is.
    },
    async create(ns, name) {
      const key = b64(prefix(ns) + name);
      // kube-apiserver's create: put only if the key does not exist yet.
      const res = await call('/v3/kv/txn', {
        compare: [{ key, target: 'CREATE', result: 'EQUAL', create_revision: '0' }],
        success: [{ request_put: { key, value: b64(storedConfigMap(ns, name)) } }],
      });
      if (!(JSON.parse(res.body.toString('utf8')) as { succeeded?: boolean }).succeeded) {
        throw new Error(`etcd create ${ns}/${name}: key exists`);
      }
      return res;
    },
    async deleteAll(ns) {
      await call('/v3/kv/deleterange', { key: b64(prefix(ns)), range_end: b64(prefixEnd(prefix(ns))) });
    },
    async list(ns, limit, next) {
      const p = prefix(ns);
      let from = p;
      let revision: string | undefined;
      if (next) [revision, from] = JSON.parse(next) as [string, string];
      const res = await call('/v3/kv/range', {
        key: b64(from),
        range_end: b64(prefixEnd(p)),
        ...(limit > 0 && { limit: String(limit) }),
        // Later pages read at the first page's revision, as kube-apiserver's continue tokens do.
        ...(revision && { revision }),
      });
      const t0 = process.hrtime.bigint();
      const body = JSON.parse(res.body.toString('utf8')) as {
        header: { revision: string };
        kvs?: { key: string; value: string }[];
        more?: boolean;
      };
      const kvs = body.kvs ?? [];
      // A client of etcd must also decode every value from base64 to use it.
      for (const kv of kvs) Buffer.from(kv.value, 'base64');
      const parseMs = Number(process.hrtime.bigint() - t0) / 1e6;
      const last = kvs[kvs.length - 1];
      const cont =
        body.more && last
          ? JSON.stringify([
              revision ?? body.header.revision,
              `${Buffer.from(last.key, 'base64').toString()}\0`,
            ])
          : undefined;
      return { res, count: kvs.length, next: cont, parseMs };
    },
    async watch(ns, onAdded) {
      const p = prefix(ns);
      let created!: () => void;
      const established = new Promise<void>((r) => {
        created = r;
      });
      const stream = await http.stream(
        'POST',
        '/v3/watch',
        JSON.stringify({ create_request: { key: b64(p), range_end: b64(prefixEnd(p)) } }),
        (line, at) => {
          const msg = JSON.parse(line) as {
            result?: {
              created?: boolean;
              events?: { type?: string; kv: { key: string; version: string } }[];
            };
          };
          if (msg.result?.created) created();
          for (const ev of msg.result?.events ?? []) {
            // PUT is the default event type, omitted from JSON; version 1 means the key was created.
            if (ev.type === undefined && ev.kv.version === '1') {
              onAdded(Buffer.from(ev.kv.key, 'base64').toString('utf8').slice(p.length), at);
            }
          }
        },
      );
      await established;
      return stream;
    },
    async close() {
      http.close();
    },
  };
}

/** The smallest key greater than every key starting with `prefix` (etcd's range_end for a prefix). */
function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

function failure(what: string, res: Response): Error {
  return new Error(`${what}: HTTP ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
}
