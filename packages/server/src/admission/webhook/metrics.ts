/**
 * The admission webhook metrics of k8s.io/apiserver's `admission/metrics`, with kube's names,
 * labels and buckets. They are made before the server's metrics registry exists and joined to
 * it with {@link WebhookMetrics.register}.
 *
 * Every call is timed and counted: those two are kept here per series (a Map lookup per call)
 * and handed to the registry when it is scraped, rendered as prom-client renders its own
 * histogram and counter. prom-client's `observe` and `inc` with labels validated, hashed and
 * looked up the labels on every call (~6 µs per webhook call, a tenth of the webhook client's
 * CPU per call). Rejections and fail-opens are rare and stay prom-client's.
 */
import type { Metric } from 'prom-client';
import { Counter, type Registry } from '../../util/prom-client.js';

/** `admit` for mutating webhooks, `validating` for validating ones (kube's step types). */
export type WebhookStep = 'admit' | 'validating';

/** Why a webhook rejected a request (kube's `WebhookRejectionErrorType`). */
export type WebhookRejectionType = 'calling_webhook_error' | 'apiserver_internal_error' | 'no_error';

/** Codes above 600 count as 600, as kube keeps the label's cardinality bounded. */
const code = (c: number): string => String(Math.min(c, 600));

/** kube's buckets of `apiserver_admission_webhook_admission_duration_seconds`. */
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25];
const DURATION_NAME = 'apiserver_admission_webhook_admission_duration_seconds';

/** The calls of one webhook, step, operation and outcome. */
interface CallSeries {
  readonly labels: { name: string; type: WebhookStep; operation: string; rejected: string };
  /** Observations per bucket (not cumulative); those above every bound are in no bucket. */
  readonly buckets: number[];
  sum: number;
  count: number;
  /** Calls per HTTP code label. */
  readonly codes: Map<string, number>;
}

/** The webhook metrics of one server. */
export class WebhookMetrics {
  /** The call series by their labels, in the order of their first call (prom-client's order). */
  private readonly calls = new Map<string, CallSeries>();
  /** Each series' codes in the order they were first counted (the counter's order). */
  private readonly counted: { series: CallSeries; code: string }[] = [];
  private readonly duration = durationHistogram(this.calls);
  private readonly requests = new Counter({
    name: 'apiserver_admission_webhook_request_total',
    help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
    labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
    registers: [],
    collect: (() => {
      const counted = this.counted;
      return function (this: Counter) {
        this.reset();
        for (const { series, code } of counted) {
          const { name, type, operation, rejected } = series.labels;
          this.inc({ name, type, operation, code, rejected }, series.codes.get(code)!);
        }
      };
    })(),
  });
  private readonly rejections = new Counter({
    name: 'apiserver_admission_webhook_rejection_count',
    help: 'Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
    labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'],
    registers: [],
  });
  private readonly failOpen = new Counter({
    name: 'apiserver_admission_webhook_fail_open_count',
    help: 'Admission webhook fail open count, identified by name and broken out for each admission type (validating or mutating).',
    labelNames: ['name', 'type'],
    registers: [],
  });

  /** Joins the metrics to the server's `/metrics` registry. */
  register(registry: Registry): void {
    registry.registerMetric(this.duration as unknown as Metric);
    for (const m of [this.requests, this.rejections, this.failOpen]) registry.registerMetric(m);
  }

  /** One call of a webhook (`ObserveWebhook`): its latency and its outcome. */
  observe(
    name: string,
    type: WebhookStep,
    operation: string,
    seconds: number,
    rejected: boolean,
    status: number,
  ): void {
    const key = `${name}\u0000${type}\u0000${operation}\u0000${rejected}`;
    let series = this.calls.get(key);
    if (!series) {
      series = {
        labels: { name, type, operation, rejected: String(rejected) },
        buckets: DURATION_BUCKETS.map(() => 0),
        sum: 0,
        count: 0,
        codes: new Map(),
      };
      this.calls.set(key, series);
    }
    // prom-client's bucket: the first bound the value does not exceed.
    for (let i = 0; i < DURATION_BUCKETS.length; i++) {
      if (seconds <= DURATION_BUCKETS[i]!) {
        series.buckets[i]!++;
        break;
      }
    }
    series.sum += seconds;
    series.count++;
    const c = code(status);
    const n = series.codes.get(c);
    if (n === undefined) this.counted.push({ series, code: c });
    series.codes.set(c, (n ?? 0) + 1);
  }

  /** A rejection by a webhook (`ObserveWebhookRejection`). */
  reject(
    name: string,
    type: WebhookStep,
    operation: string,
    errorType: WebhookRejectionType,
    status: number,
  ): void {
    this.rejections.inc({ name, type, operation, error_type: errorType, rejection_code: code(status) });
  }

  /** A call failure ignored by `failurePolicy: Ignore` (`ObserveWebhookFailOpen`). */
  failedOpen(name: string, type: WebhookStep): void {
    this.failOpen.inc({ name, type });
  }
}

/**
 * `apiserver_admission_webhook_admission_duration_seconds` as the registry reads a prom-client
 * histogram: cumulative buckets, `+Inf`, sum and count per series, `le` before the series' labels.
 */
function durationHistogram(calls: ReadonlyMap<string, CallSeries>) {
  const bucket = `${DURATION_NAME}_bucket`;
  const forPromString = () => {
    const values: {
      value: number;
      metricName: string;
      exemplar?: null;
      labels: Record<string, string | number>;
      sharedLabels: Record<string, string>;
    }[] = [];
    for (const s of calls.values()) {
      let acc = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        acc += s.buckets[i]!;
        values.push({
          value: acc,
          metricName: bucket,
          exemplar: null,
          labels: { le },
          sharedLabels: s.labels,
        });
      });
      values.push(
        {
          value: s.count,
          metricName: bucket,
          exemplar: null,
          labels: { le: '+Inf' },
          sharedLabels: s.labels,
        },
        { value: s.sum, metricName: `${DURATION_NAME}_sum`, labels: {}, sharedLabels: s.labels },
        { value: s.count, metricName: `${DURATION_NAME}_count`, labels: {}, sharedLabels: s.labels },
      );
    }
    return values;
  };
  return {
    name: DURATION_NAME,
    help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
    type: 'histogram',
    aggregator: 'sum',
    labelNames: ['name', 'type', 'operation', 'rejected'],
    reset() {
      // The series belong to the request counter too; a registry reset leaves them.
    },
    async getForPromString() {
      return {
        name: this.name,
        help: this.help,
        type: this.type,
        values: forPromString(),
        aggregator: this.aggregator,
      };
    },
    async get() {
      const values = forPromString().map(({ sharedLabels, labels, ...v }) => ({
        ...v,
        labels: { ...labels, ...sharedLabels },
      }));
      return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
    },
  };
}
