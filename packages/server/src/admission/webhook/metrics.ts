/**
 * The admission webhook metrics of k8s.io/apiserver's `admission/metrics`, with kube's names,
 * labels and buckets. They are made before the server's metrics registry exists and joined to
 * it with {@link WebhookMetrics.register}.
 */
import { Counter, Histogram, type Registry } from '../../util/prom-client.js';

/** `admit` for mutating webhooks, `validating` for validating ones (kube's step types). */
export type WebhookStep = 'admit' | 'validating';

/** Why a webhook rejected a request (kube's `WebhookRejectionErrorType`). */
export type WebhookRejectionType = 'calling_webhook_error' | 'apiserver_internal_error' | 'no_error';

/** Codes above 600 count as 600, as kube keeps the label's cardinality bounded. */
const code = (c: number): string => String(Math.min(c, 600));

/** The webhook metrics of one server. */
export class WebhookMetrics {
  private readonly duration = new Histogram({
    name: 'apiserver_admission_webhook_admission_duration_seconds',
    help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
    labelNames: ['name', 'type', 'operation', 'rejected'],
    buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25],
    registers: [],
  });
  private readonly requests = new Counter({
    name: 'apiserver_admission_webhook_request_total',
    help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
    labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
    registers: [],
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
    for (const m of [this.duration, this.requests, this.rejections, this.failOpen])
      registry.registerMetric(m);
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
    const r = String(rejected);
    this.duration.observe({ name, type, operation, rejected: r }, seconds);
    this.requests.inc({ name, type, operation, code: code(status), rejected: r });
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
