/**
 * controller-runtime's webhook metrics, with its names, labels and help texts, so dashboards
 * built for Go operators read a kubeloop operator unchanged.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

function once<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/** What each metric runs before it is read, per metric (servers sharing a registry share its metrics). */
const flushers = new WeakMap<object, Set<() => void>>();

/**
 * Runs `flush` whenever `metric` is read (scraped, or asked for its value), before its own
 * `collect`: counts kept in plain numbers between reads are handed to prom-client then.
 */
function beforeRead(metric: object, flush: () => void): void {
  let set = flushers.get(metric);
  if (!set) {
    const all = new Set<() => void>();
    set = all;
    flushers.set(metric, all);
    const m = metric as { collect?: (this: unknown) => unknown };
    const own = m.collect;
    m.collect = function (this: unknown) {
      for (const f of all) f();
      return own?.call(this);
    };
  }
  set.add(flush);
}

/** One path's bound series. */
export interface PathMetrics {
  readonly inFlight: { inc(): void; dec(): void };
  readonly latency: { observe(seconds: number): void };
  /** Counts one answer with its HTTP code. */
  count(code: number): void;
}

/** The webhook metrics on one registry (shared by every server using it). */
export class WebhookMetrics {
  readonly latency: Histogram<'webhook'>;
  readonly total: Counter<'webhook' | 'code'>;
  readonly inFlight: Gauge<'webhook'>;
  readonly panics: Counter<string>;
  readonly conversionPanics: Counter<string>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.latency = once(
      registry,
      'controller_runtime_webhook_latency_seconds',
      () =>
        new Histogram({
          name: 'controller_runtime_webhook_latency_seconds',
          help: 'Histogram of the latency of processing admission requests',
          labelNames: ['webhook'],
          registers,
        }),
    );
    this.total = once(
      registry,
      'controller_runtime_webhook_requests_total',
      () =>
        new Counter({
          name: 'controller_runtime_webhook_requests_total',
          help: 'Total number of admission requests by HTTP status code.',
          labelNames: ['webhook', 'code'],
          registers,
        }),
    );
    this.inFlight = once(
      registry,
      'controller_runtime_webhook_requests_in_flight',
      () =>
        new Gauge({
          name: 'controller_runtime_webhook_requests_in_flight',
          help: 'Current number of admission requests being served.',
          labelNames: ['webhook'],
          registers,
        }),
    );
    this.panics = once(
      registry,
      'controller_runtime_webhook_panics_total',
      () =>
        new Counter({
          name: 'controller_runtime_webhook_panics_total',
          help: 'Total number of webhook panics',
          registers,
        }),
    );
    this.conversionPanics = once(
      registry,
      'controller_runtime_conversion_webhook_panics_total',
      () =>
        new Counter({
          name: 'controller_runtime_conversion_webhook_panics_total',
          help: 'Total number of conversion webhook panics',
          registers,
        }),
    );
  }

  private readonly bound = new Map<string, PathMetrics>();

  /**
   * A path's series, made to exist at zero with the codes controller-runtime initialises (200,
   * 500). Answers with 200 and the requests in flight are counted in plain numbers and handed to
   * prom-client when the metrics are read: its `inc` and `dec` validate and hash the labels on
   * every call, even bound (~5 µs of a webhook server's CPU per review, three calls each).
   */
  forPath(path: string): PathMetrics {
    let m = this.bound.get(path);
    if (m) return m;
    const ok = this.total.labels({ webhook: path, code: '200' });
    this.total.inc({ webhook: path, code: '500' }, 0);
    ok.inc(0);
    const inFlightGauge = this.inFlight.labels({ webhook: path });
    inFlightGauge.set(0);
    const latency = this.latency.labels({ webhook: path });
    this.latency.zero({ webhook: path });
    let answered = 0;
    let inFlight = 0;
    /** The in-flight count the gauge was last given (a shared registry's gauge sums servers). */
    let inFlightShown = 0;
    beforeRead(this.total, () => {
      if (answered > 0) ok.inc(answered);
      answered = 0;
    });
    beforeRead(this.inFlight, () => {
      if (inFlight !== inFlightShown) inFlightGauge.inc(inFlight - inFlightShown);
      inFlightShown = inFlight;
    });
    m = {
      inFlight: {
        inc: () => {
          inFlight++;
        },
        dec: () => {
          inFlight--;
        },
      },
      latency,
      count: (code: number) => {
        if (code === 200) answered++;
        else this.total.inc({ webhook: path, code: String(code) });
      },
    };
    this.bound.set(path, m);
    return m;
  }
}
