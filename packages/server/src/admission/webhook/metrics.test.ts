import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from '../../util/prom-client.js';
import { WebhookMetrics } from './metrics.js';

describe('webhook call metrics', () => {
  it('render as prom-client renders the same observations (text and JSON)', async () => {
    const calls: [string, 'admit' | 'validating', string, number, boolean, number][] = [
      ['a.example.com', 'admit', 'CREATE', 0.001, false, 200],
      ['b.example.com', 'validating', 'CREATE', 0.03, true, 403],
      ['a.example.com', 'admit', 'CREATE', 0.2, false, 200],
      ['a.example.com', 'admit', 'UPDATE', 40, true, 0],
      ['b.example.com', 'validating', 'CREATE', 0.005, true, 700],
      ['a.example.com', 'admit', 'CREATE', 1, false, 200],
    ];
    const ours = new Registry();
    const metrics = new WebhookMetrics();
    metrics.register(ours);
    for (const c of calls) metrics.observe(...c);

    // The same calls through prom-client's own metrics, as the metrics were recorded before.
    const theirs = new Registry();
    const duration = new Histogram({
      name: 'apiserver_admission_webhook_admission_duration_seconds',
      help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      labelNames: ['name', 'type', 'operation', 'rejected'],
      buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25],
      registers: [theirs],
    });
    const requests = new Counter({
      name: 'apiserver_admission_webhook_request_total',
      help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
      registers: [theirs],
    });
    for (const [name, type, operation, seconds, rejected, status] of calls) {
      duration.observe({ name, type, operation, rejected: String(rejected) }, seconds);
      requests.inc({
        name,
        type,
        operation,
        code: String(Math.min(status, 600)),
        rejected: String(rejected),
      });
    }
    const text = await ours.metrics();
    const expected = await theirs.metrics();
    expect(text).toContain(expected);
    expect(text).toContain(
      'apiserver_admission_webhook_admission_duration_seconds_bucket{le="0.005",name="a.example.com",type="admit",operation="CREATE",rejected="false"} 1',
    );
    const json = await ours.getMetricsAsJSON();
    const theirJson = await theirs.getMetricsAsJSON();
    for (const m of theirJson) expect(json.find((x) => x.name === m.name)).toEqual(m);
  });
});
