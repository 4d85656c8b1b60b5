/**
 * The apiserver's Prometheus metrics (`/metrics`): request counts and latencies labelled as
 * k8s.io/apiserver's `endpoints/metrics` labels them, requests in flight, stored objects per
 * resource, and the process metrics every Prometheus client exposes. Each control plane owns
 * its registry, so that several in one process never share counts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metric } from 'prom-client';
import type { Registry as TypeRegistry } from '../registry/registry.js';
import { storageOf } from '../registry/types.js';
import type { Store } from '../storage/store.js';
import { collectionPrefix } from '../storage/store.js';
import type { Obj } from '../util/object.js';
import { Counter, Gauge, Registry } from '../util/prom-client.js';
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

/** The label values of one request series (every label but `code`). */
type RequestLabels = Record<(typeof REQUEST_LABELS)[number], string>;

/**
 * The requests of one label set: counts by code and, for requests that are not long-running,
 * their latencies bucketed as `apiserver_request_duration_seconds` buckets them. Plain numbers,
 * handed to the Prometheus registry when it is scraped: prom-client validates and hashes the
 * label set on every `inc` and `observe` (~2 µs a request), a busy server's cost per request.
 */
interface Series {
  readonly labels: RequestLabels;
  readonly codes: Map<number, number>;
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  readonly buckets: number[];
  sum: number;
  count: number;
}

/** The metrics of one control plane. */
export class ApiMetrics {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry();
  /** Requests in flight by kind, read by the gauge when scraped (no label lookup per request). */
  private readonly inflight = { readOnly: 0, mutating: 0 };
  /** The series by their label values. */
  private readonly series = new Map<string, Series>();
  /** The series met so far per resource type (a cache of {@link series} that needs no key string). */
  private readonly seriesByType = new WeakMap<object, Series[]>();
  /** Each series' codes in the order they were first counted (the counter's order, as prom-client keeps it). */
  private readonly counted: { series: Series; code: number }[] = [];
  /** The series in the order of their first observation (the histogram's order). */
  private readonly observed: Series[] = [];

  constructor(
    store: Store,
    private readonly types: TypeRegistry,
  ) {
    const registers = [this.registry];
    const counted = this.counted;
    new Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...REQUEST_LABELS, 'code'],
      registers,
      collect() {
        this.reset();
        for (const { series, code } of counted)
          this.inc({ ...series.labels, code: String(code) }, series.codes.get(code)!);
      },
    });
    this.registry.registerMetric(durationHistogram(this.observed) as unknown as Metric);
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
    const start = performance.now();
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
    const kind = method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? 'readOnly' : 'mutating';
    if (!longRunning) this.inflight[kind]++;
    // 'close' follows 'finish' on a completed response, and comes alone when the client left.
    // A plain listener and a flag: `once` wraps every listener in a bound function.
    let closed = false;
    res.on('close', () => {
      if (closed) return;
      closed = true;
      if (!longRunning) this.inflight[kind]--;
      // Only the resource handlers are instrumented: requests refused by authentication, and
      // paths of no served resource (Go's NotFound handler), are not counted.
      if (!resourceRequest || res.statusCode === 401) return;
      const t = this.types.lookup(info.group, info.version, info.resource);
      if (!t) return;
      const dryRun = query.has('dryRun')
        ? query
            .getAll('dryRun')
            .filter((v) => v !== '')
            .sort()
            .join(',')
        : '';
      const series = this.seriesOf(t, verb, dryRun, info, scope);
      const code = res.statusCode;
      const n = series.codes.get(code);
      if (n === undefined) this.counted.push({ series, code });
      series.codes.set(code, (n ?? 0) + 1);
      if (!longRunning) this.observe(series, (performance.now() - start) / 1000);
    });
  }

  /**
   * The series of a request's labels. Looked up first among those of its resource type by
   * comparing labels: the key string of {@link series} (seven parts joined, then flattened and
   * hashed) cost ~400 bytes and a few hundred ns per request; the string map still decides which
   * series exist (a CRD's type object is replaced on update, its series are not).
   */
  private seriesOf(t: object, verb: string, dryRun: string, info: RequestInfo, scope: string): Series {
    const known = this.seriesByType.get(t);
    if (known) {
      for (const s of known) {
        const l = s.labels;
        if (
          l.verb === verb &&
          l.dry_run === dryRun &&
          l.subresource === info.subresource &&
          l.scope === scope &&
          l.resource === info.resource &&
          l.version === info.version &&
          l.group === info.group
        )
          return s;
      }
    }
    const series = this.seriesOfKey(verb, dryRun, info, scope);
    if (known) known.push(series);
    else this.seriesByType.set(t, [series]);
    return series;
  }

  /** The series of a request's labels, by their key: made on the first request with them. */
  private seriesOfKey(verb: string, dryRun: string, info: RequestInfo, scope: string): Series {
    const key = `${verb}\0${dryRun}\0${info.group}\0${info.version}\0${info.resource}\0${info.subresource}\0${scope}`;
    let series = this.series.get(key);
    if (!series) {
      series = {
        labels: {
          verb,
          dry_run: dryRun,
          group: info.group,
          version: info.version,
          resource: info.resource,
          subresource: info.subresource,
          scope,
          component: 'apiserver',
        },
        codes: new Map(),
        buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      this.series.set(key, series);
    }
    return series;
  }

  /** prom-client's `Histogram.observe`: the first bucket whose bound is at least the value. */
  private observe(series: Series, seconds: number): void {
    if (series.count === 0) this.observed.push(series);
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    series.buckets[i]!++;
    series.sum += seconds;
    series.count++;
  }

  /** The text exposition of every metric. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * `apiserver_request_duration_seconds` as a metric of the registry, read from the series when
 * scraped: the values prom-client's Histogram gives the registry (cumulative buckets labelled
 * `le` first, `+Inf`, then `_sum` and `_count`, series in the order of their first observation).
 */
function durationHistogram(observed: readonly Series[]) {
  const name = 'apiserver_request_duration_seconds';
  return {
    name,
    help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    type: 'histogram',
    aggregator: 'sum',
    labelNames: [...REQUEST_LABELS],
    reset() {
      // The series belong to the request counter too; a registry reset leaves them.
    },
    async get() {
      const values: { value: number; metricName: string; exemplar?: null; labels: Obj }[] = [];
      for (const s of observed) {
        let acc = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          acc += s.buckets[i]!;
          values.push({
            value: acc,
            metricName: `${name}_bucket`,
            exemplar: null,
            labels: { le, ...s.labels },
          });
        });
        values.push(
          {
            value: s.count,
            metricName: `${name}_bucket`,
            exemplar: null,
            labels: { le: '+Inf', ...s.labels },
          },
          { value: s.sum, metricName: `${name}_sum`, labels: { ...s.labels } },
          { value: s.count, metricName: `${name}_count`, labels: { ...s.labels } },
        );
      }
      return { name, help: this.help, type: this.type, values, aggregator: this.aggregator };
    },
  };
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
