/**
 * Prometheus metrics of workqueues, with client-go's names and controller-runtime's labels
 * (`name` and `controller`, both the queue's name) and buckets, so existing dashboards and
 * alerts work unchanged.
 */
import { Counter, Gauge, register as globalRegistry, Histogram, type Registry } from '../prom-client.js';

/**
 * Exponential buckets from 10 ns to 1000 s (controller-runtime's `ExponentialBuckets(10e-9, 10, 12)`).
 *
 * @example
 * ```ts
 * new Histogram({ name: 'my_reconcile_seconds', help: '…', buckets: [...WORKQUEUE_BUCKETS] });
 * ```
 */
export const WORKQUEUE_BUCKETS: readonly number[] = Object.freeze(
  Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1))),
);

/** What a queue tells its metrics. */
export interface QueueMetricsSink {
  add(): void;
  get(queuedSeconds: number | undefined): void;
  done(workSeconds: number | undefined): void;
  retry(): void;
  /** Items dropped from the queue without being processed (shutdown): depth goes down. */
  drop(count: number): void;
  /** The queue is gone: stop reporting its in-flight work. */
  close(): void;
}

/** In-flight work of a queue, read at scrape time. */
export interface InFlightWork {
  /** Seconds of processing under way and not yet observed by `work_duration`. */
  unfinishedWorkSeconds(): number;
  /** Seconds the longest running item has been processed. */
  longestRunningProcessorSeconds(): number;
}

/**
 * The workqueue metrics of one registry: `workqueue_depth`, `workqueue_adds_total`,
 * `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
 * `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds`,
 * `workqueue_retries_total`. Make one per registry and give it to every queue.
 *
 * @example
 * ```ts
 * import { Registry } from 'prom-client';
 * const registry = new Registry();
 * const metrics = new WorkQueueMetrics({ registry });
 * const queue = new WorkQueue<string>({ name: 'foo-controller', metrics });
 * console.log(await registry.metrics());
 * ```
 */
export class WorkQueueMetrics {
  readonly registry: Registry;
  private readonly depth: Gauge<'name' | 'controller'>;
  private readonly adds: Counter<'name' | 'controller'>;
  private readonly latency: Histogram<'name' | 'controller'>;
  private readonly workDuration: Histogram<'name' | 'controller'>;
  private readonly retries: Counter<'name' | 'controller'>;
  private readonly unfinished: Gauge<'name' | 'controller'>;
  private readonly longest: Gauge<'name' | 'controller'>;
  private readonly inFlight = new Map<InFlightWork, string>();

  /**
   * @param options.registry Where the metrics are registered (default: prom-client's global
   *   registry). Registering a second `WorkQueueMetrics` in the same registry throws.
   */
  constructor(options: { registry?: Registry } = {}) {
    const registry = options.registry ?? globalRegistry;
    this.registry = registry;
    const labelNames = ['name', 'controller'] as const;
    const registers = [registry];
    const inFlight = this.inFlight;
    this.depth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames,
      registers,
    });
    this.adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames,
      registers,
    });
    this.latency = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames,
      buckets: [...WORKQUEUE_BUCKETS],
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames,
      buckets: [...WORKQUEUE_BUCKETS],
      registers,
    });
    this.unfinished = new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
      labelNames,
      registers,
      collect() {
        for (const [work, name] of inFlight)
          this.set({ name, controller: name }, work.unfinishedWorkSeconds());
      },
    });
    this.longest = new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames,
      registers,
      collect() {
        for (const [work, name] of inFlight)
          this.set({ name, controller: name }, work.longestRunningProcessorSeconds());
      },
    });
    this.retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames,
      registers,
    });
  }

  /** @internal The metrics of one queue. */
  forQueue(name: string, work: InFlightWork): QueueMetricsSink {
    const labels = { name, controller: name };
    const depth = this.depth.labels(labels);
    const adds = this.adds.labels(labels);
    const latency = this.latency.labels(labels);
    const workDuration = this.workDuration.labels(labels);
    const retries = this.retries.labels(labels);
    this.inFlight.set(work, name);
    // Series exist from the start, as client-go's do, so that rates are defined at once.
    depth.set(0);
    adds.inc(0);
    retries.inc(0);
    return {
      add: () => {
        adds.inc();
        depth.inc();
      },
      get: (queued) => {
        depth.dec();
        if (queued !== undefined) latency.observe(queued);
      },
      done: (seconds) => {
        if (seconds !== undefined) workDuration.observe(seconds);
      },
      retry: () => retries.inc(),
      drop: (count) => {
        if (count > 0) depth.dec(count);
      },
      close: () => {
        this.inFlight.delete(work);
        this.unfinished.set(labels, 0);
        this.longest.set(labels, 0);
      },
    };
  }
}
