/**
 * Request metrics with client-go's names and labels: `rest_client_requests_total{code,method,host}`
 * and `rest_client_request_duration_seconds{verb,host}` (a histogram with client-go's buckets).
 * The client calls a hook once per attempt; {@link ClientMetrics} is a ready-made hook that
 * keeps the numbers and renders them in the Prometheus text format.
 *
 * @example
 * ```ts
 * const metrics = new ClientMetrics();
 * const client = new Client(config, { onRequest: metrics.observe });
 * http.createServer((_, res) => res.end(metrics.render()));
 * ```
 */

/** One attempt of one request, as the metrics hook sees it. */
export interface RequestRecord {
  /** HTTP method. */
  method: string;
  /** `host:port` of the API server. */
  host: string;
  /** Path and query of the request. */
  path: string;
  /** HTTP status code as a string, or `<error>` when no answer came (client-go's convention). */
  code: string;
  /** From sending the request to the end of its answer (to the headers, for a watch). */
  durationSeconds: number;
  /** 0 for the first attempt, then 1, 2… for retries. */
  attempt: number;
}

/** client-go's `rest_client_request_duration_seconds` buckets. */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

/** One method's duration histogram to one host, and its request counts by code. */
interface ByMethod {
  duration: Duration;
  codes: Map<string, RequestCount>;
}

interface Duration {
  verb: string;
  host: string;
  h: Histogram;
}

interface RequestCount {
  code: string;
  method: string;
  host: string;
  value: number;
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** Keeps request counts and durations; pass {@link ClientMetrics.observe} as the client's `onRequest`. */
export class ClientMetrics {
  /**
   * The series by host, then method, then code: found with look-ups of the record's own strings,
   * where a key joined from them was a new string to build and hash on every request (~1 % of a
   * busy operator's CPU).
   */
  private readonly byHost = new Map<string, Map<string, ByMethod>>();
  /** The same series in the order they were first seen, the order they are rendered in. */
  private readonly requests: RequestCount[] = [];
  private readonly durations: Duration[] = [];

  /** The hook (bound, so it can be passed around). */
  readonly observe = (r: RequestRecord): void => {
    let methods = this.byHost.get(r.host);
    if (!methods) {
      methods = new Map();
      this.byHost.set(r.host, methods);
    }
    let m = methods.get(r.method);
    if (!m) {
      const duration = {
        verb: r.method,
        host: r.host,
        h: { counts: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 },
      };
      this.durations.push(duration);
      m = { duration, codes: new Map() };
      methods.set(r.method, m);
    }
    let req = m.codes.get(r.code);
    if (!req) {
      req = { code: r.code, method: r.method, host: r.host, value: 0 };
      this.requests.push(req);
      m.codes.set(r.code, req);
    }
    req.value++;
    const h = m.duration.h;
    h.sum += r.durationSeconds;
    h.count++;
    const counts = h.counts;
    for (let i = 0; i < DURATION_BUCKETS.length; i++)
      if (r.durationSeconds <= DURATION_BUCKETS[i]!) counts[i]!++;
  };

  /** `rest_client_requests_total` for one label set (0 when never seen). */
  requestsTotal(labels: { code: string; method: string; host: string }): number {
    return this.byHost.get(labels.host)?.get(labels.method)?.codes.get(labels.code)?.value ?? 0;
  }

  /** Observations of `rest_client_request_duration_seconds` for one label set. */
  durationCount(labels: { verb: string; host: string }): number {
    return this.byHost.get(labels.host)?.get(labels.verb)?.duration.h.count ?? 0;
  }

  /** Both metrics in the Prometheus text exposition format. */
  render(): string {
    const lines = [
      '# HELP rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host.',
      '# TYPE rest_client_requests_total counter',
    ];
    for (const r of this.requests) {
      lines.push(
        `rest_client_requests_total{code="${esc(r.code)}",host="${esc(r.host)}",method="${esc(r.method)}"} ${r.value}`,
      );
    }
    lines.push(
      '# HELP rest_client_request_duration_seconds Request latency in seconds. Broken down by verb, and host.',
      '# TYPE rest_client_request_duration_seconds histogram',
    );
    for (const d of this.durations) {
      const l = `host="${esc(d.host)}",verb="${esc(d.verb)}"`;
      DURATION_BUCKETS.forEach((b, i) => {
        lines.push(`rest_client_request_duration_seconds_bucket{${l},le="${b}"} ${d.h.counts[i]}`);
      });
      lines.push(`rest_client_request_duration_seconds_bucket{${l},le="+Inf"} ${d.h.count}`);
      lines.push(`rest_client_request_duration_seconds_sum{${l}} ${d.h.sum}`);
      lines.push(`rest_client_request_duration_seconds_count{${l}} ${d.h.count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}
