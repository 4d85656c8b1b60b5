/**
 * The conversion webhook metrics of kube-apiserver 1.32 (apiextensions-apiserver's
 * `conversion/metrics.go`): requests and their latency by result and failure type, and the
 * duration of each conversion by CRD and versions.
 */
import { Counter, Histogram, type Registry } from '../util/prom-client.js';

/** Why a conversion webhook call failed, as the `failure_type` label says it. */
export type ConversionFailure =
  | 'conversion_webhook_call_failure'
  | 'conversion_webhook_malformed_response_failure'
  | 'conversion_webhook_partial_response_failure'
  | 'conversion_webhook_invalid_converted_object_failure';

/** One conversion through a webhook, as the metrics record it. */
export interface ConversionObservation {
  crdName: string;
  fromVersion: string;
  toVersion: string;
  seconds: number;
  /** Undefined when the conversion succeeded. */
  failure?: ConversionFailure;
}

/** The metrics of one control plane's conversion webhooks. */
export class ConversionMetrics {
  private readonly requests: Counter<'result' | 'failure_type'>;
  private readonly latency: Histogram<'result' | 'failure_type'>;
  private readonly durations: Histogram<'crd_name' | 'from_version' | 'to_version' | 'succeeded'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'apiserver_conversion_webhook_request_total',
      help: 'Counter for conversion webhook requests with success/failure and failure error type',
      labelNames: ['result', 'failure_type'],
      registers,
    });
    this.latency = new Histogram({
      name: 'apiserver_conversion_webhook_duration_seconds',
      help: 'Conversion webhook request latency',
      labelNames: ['result', 'failure_type'],
      buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 45, 60],
      registers,
    });
    this.durations = new Histogram({
      name: 'apiserver_crd_conversion_webhook_duration_seconds',
      help: 'CRD webhook conversion duration in seconds',
      labelNames: ['crd_name', 'from_version', 'to_version', 'succeeded'],
      // ExponentialBuckets(0.001, 2, 15)
      buckets: Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
      registers,
    });
  }

  observe(o: ConversionObservation): void {
    const labels = { result: o.failure ? 'failure' : 'success', failure_type: o.failure ?? '' };
    this.requests.inc(labels);
    this.latency.observe(labels, o.seconds);
    this.durations.observe(
      {
        crd_name: o.crdName,
        from_version: o.fromVersion,
        to_version: o.toVersion,
        succeeded: String(!o.failure),
      },
      o.seconds,
    );
  }
}
