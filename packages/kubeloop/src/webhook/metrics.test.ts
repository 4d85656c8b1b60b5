import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { WebhookMetrics } from './metrics.js';

describe('webhook server metrics', () => {
  it('show answers and requests in flight when read, summed over the servers sharing a registry', async () => {
    const registry = new Registry();
    const a = new WebhookMetrics(registry).forPath('/mutate');
    const b = new WebhookMetrics(registry).forPath('/mutate');
    const value = async (name: string, labels: Record<string, string>) => {
      const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
      const sample = (metric?.values ?? []).find((v) =>
        Object.entries(labels).every(([k, x]) => v.labels[k] === x),
      );
      return sample?.value;
    };
    const inFlight = () => value('controller_runtime_webhook_requests_in_flight', { webhook: '/mutate' });
    const ok = () => value('controller_runtime_webhook_requests_total', { webhook: '/mutate', code: '200' });
    a.inFlight.inc();
    a.inFlight.inc();
    b.inFlight.inc();
    expect(await inFlight()).toBe(3);
    a.inFlight.dec();
    a.count(200);
    expect(await inFlight()).toBe(2);
    expect(await ok()).toBe(1);
    // Read again with nothing new: the same values, not counted twice.
    expect(await ok()).toBe(1);
    a.inFlight.dec();
    b.inFlight.dec();
    a.count(200);
    b.count(200);
    b.count(500);
    expect(await inFlight()).toBe(0);
    expect(await ok()).toBe(3);
    expect(
      await value('controller_runtime_webhook_requests_total', { webhook: '/mutate', code: '500' }),
    ).toBe(1);
    expect(await registry.metrics()).toContain(
      'controller_runtime_webhook_requests_total{webhook="/mutate",code="200"} 3',
    );
  });
});
