/**
 * The apiserver's Prometheus metrics (`/metrics`): request counts and latencies labelled as
 * k8s.io/apiserver's `endpoints/metrics` labels them, requests in flight, stored objects per
 * resource, and the process metrics every Prometheus client exposes. Each control plane owns
 * its registry, so that several in one process never share counts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry as TypeRegistry } from '../registry/registry.js';
import { storageOf } from '../registry/types.js';
import type { Store } from '../storage/store.js';
import { collectionPrefix } from '../storage/store.js';
import { Counter, Gauge, Histogram, Registry } from '../util/prom-client.js';
import { queryBool } from './params.js';
import type { RequestInfo } from './request-info.js';

/** The buckets of `apiserver_request_duration_seconds` in Kubernetes 1.32. */
const DURATION_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];
const REQUEST_LABELS = [
  'verb',
  'dry_run',
  'group',
  'version',
  'resource',
  'subresource',
  'scope',
  'component',
] as const;
/** The verbs the metrics report; anything else is `other` (`cleanVerb`). */
const VALID_VERBS = new Set([
  'APPLY',
  'CONNECT',
  'CREATE',
  'DELETE',
  'DELETECOLLECTION',
  'GET',
  'LIST',
  'PATCH',
  'POST',
  'PROXY',
  'PUT',
  'UPDATE',
  'WATCH',
  'WATCHLIST',
]);

/** The metrics of one control plane. */
export class ApiMetrics {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry();
  private readonly requests: Counter<(typeof REQUEST_LABELS)[number] | 'code'>;
  private readonly durations: Histogram<(typeof REQUEST_LABELS)[number]>;
  /** Requests in flight by kind, read by the gauge when scraped (no label lookup per request). */
  private readonly inflight = { readOnly: 0, mutating: 0 };
  /**
   * The labelled children of the counter and the histogram, by their label values: prom-client
   * validates and hashes a label object on every call, which a busy server pays per request.
   */
  private readonly children = new Map<string, { count(code: number): void; observe(s: number): void }>();

  constructor(
    store: Store,
    private readonly types: TypeRegistry,
  ) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...REQUEST_LABELS, 'code'],
      registers,
    });
    this.durations = new Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: [...REQUEST_LABELS],
      buckets: DURATION_BUCKETS,
      registers,
    });
    const inflight = this.inflight;
    new Gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      registers,
      collect() {
        this.set({ request_kind: 'readOnly' }, inflight.readOnly);
        this.set({ request_kind: 'mutating' }, inflight.mutating);
      },
    });
    new Gauge({
      name: 'apiserver_storage_objects',
      help: 'Number of stored objects at the time of last check split by kind.',
      labelNames: ['resource'],
      registers,
      collect() {
        this.reset();
        const seen = new Set<string>();
        for (const t of types.all()) {
          const { group, resource } = storageOf(t);
          const label = group ? `${resource}.${group}` : resource;
          if (seen.has(label)) continue;
          seen.add(label);
          this.set({ resource: label }, store.count(collectionPrefix(group, resource), ''));
        }
      },
    });
    processMetrics(this.registry);
  }

  /**
   * Accounts for a request from now until its response ends: in flight meanwhile (except
   * watches, which are long-running), then counted with its code and, unless long-running, timed.
   */
  track(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo | undefined,
    query: URLSearchParams,
  ): void {
    const start = process.hrtime.bigint();
    const method = (req.method ?? 'GET').toUpperCase();
    const resourceRequest = info?.isResourceRequest === true;
    const scope = !resourceRequest
      ? ''
      : info.name && info.verb !== 'watch' && info.verb !== 'deletecollection'
        ? 'resource'
        : info.namespace
          ? 'namespace'
          : 'cluster';
    let verb =
      method === 'GET' || method === 'HEAD'
        ? scope !== 'resource' && scope !== ''
          ? 'LIST'
          : 'GET'
        : method;
    if (info?.verb === 'watch') verb = 'WATCH';
    if (
      verb === 'PATCH' &&
      (req.headers['content-type'] ?? '').split(';')[0]!.trim() === 'application/apply-patch+yaml'
    )
      verb = 'APPLY';
    if (!VALID_VERBS.has(verb)) verb = 'other';
    const longRunning =
      verb === 'WATCH' ||
      info?.subresource === 'exec' ||
      info?.subresource === 'attach' ||
      info?.subresource === 'portforward' ||
      info?.subresource === 'proxy' ||
      (info?.subresource === 'log' && queryBool(query, 'follow') === true);
    const kind = ['GET', 'HEAD', 'OPTIONS'].includes(method) ? 'readOnly' : 'mutating';
    if (!longRunning) this.inflight[kind]++;
    const finish = () => {
      if (!longRunning) this.inflight[kind]--;
      // Only the resource handlers are instrumented: requests refused by authentication, and
      // paths of no served resource (Go's NotFound handler), are not counted.
      if (!resourceRequest || res.statusCode === 401) return;
      if (!this.types.lookup(info.group, info.version, info.resource)) return;
      const dryRun = query
        .getAll('dryRun')
        .filter((v) => v !== '')
        .sort()
        .join(',');
      const child = this.child(verb, dryRun, info, scope);
      child.count(res.statusCode);
      if (!longRunning) child.observe(Number(process.hrtime.bigint() - start) / 1e9);
    };
    // 'close' follows 'finish' on a completed response, and comes alone when the client left.
    res.once('close', finish);
  }

  private child(verb: string, dryRun: string, info: RequestInfo, scope: string) {
    const key = `${verb}\0${dryRun}\0${info.group}\0${info.version}\0${info.resource}\0${info.subresource}\0${scope}`;
    let c = this.children.get(key);
    if (!c) {
      const labels = {
        verb,
        dry_run: dryRun,
        group: info.group,
        version: info.version,
        resource: info.resource,
        subresource: info.subresource,
        scope,
        component: 'apiserver',
      };
      const timed = this.durations.labels(labels);
      const byCode = new Map<number, ReturnType<typeof this.requests.labels>>();
      c = {
        count: (code) => {
          let counter = byCode.get(code);
          if (!counter) {
            counter = this.requests.labels({ ...labels, code: String(code) });
            byCode.set(code, counter);
          }
          counter.inc();
        },
        observe: (seconds) => timed.observe(seconds),
      };
      this.children.set(key, c);
    }
    return c;
  }

  /** The text exposition of every metric. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** `process_*` metrics as the Prometheus clients define them, read when scraped. */
function processMetrics(registry: Registry): void {
  const registers = [registry];
  const startTime = Math.floor(Date.now() / 1000 - process.uptime());
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers,
    collect() {
      const u = process.cpuUsage();
      this.reset();
      this.inc((u.user + u.system) / 1e6);
    },
  });
  new Gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since unix epoch in seconds.',
    registers,
    collect() {
      this.set(startTime);
    },
  });
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  const status = (field: string): number | undefined => {
    try {
      const m = new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
      return m ? Number(m[1]) * 1024 : undefined;
    } catch {
      return undefined;
    }
  };
  new Gauge({
    name: 'process_virtual_memory_bytes',
    help: 'Virtual memory size in bytes.',
    registers,
    collect() {
      const v = status('VmSize');
      if (v !== undefined) this.set(v);
    },
  });
  new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers,
    collect() {
      try {
        this.set(readdirSync('/proc/self/fd').length);
      } catch {
        // Not Linux: no count.
      }
    },
  });
  new Gauge({
    name: 'process_max_fds',
    help: 'Maximum number of open file descriptors.',
    registers,
    collect() {
      try {
        const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
        if (m) this.set(Number(m[1]));
      } catch {
        // Not Linux.
      }
    },
  });
}
