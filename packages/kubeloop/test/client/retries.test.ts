import { createServer } from 'node:net';
import {
  type ApiError,
  Client,
  ClientMetrics,
  ConfigMap,
  isNetworkError,
  isNotFound,
  isTooManyRequests,
  type NetworkError,
  type RetryInfo,
} from 'kubeloop/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ClientEnv, rejection, startClientEnv } from './helpers.js';

let t: ClientEnv;
beforeAll(async () => {
  t = await startClientEnv();
});
afterEach(() => t.env.faults.clear());
afterAll(() => t.stop());

/** A client that records its retries and metrics. */
function observed(options: { maxRetries?: number } = {}) {
  const retries: RetryInfo[] = [];
  const metrics = new ClientMetrics();
  const client = t.newClient({
    retry: { baseDelayMs: 1, maxDelayMs: 5_000, onRetry: (r) => retries.push(r), ...options },
    onRequest: metrics.observe,
  });
  return { client, retries, metrics, host: new URL(t.env.url).host };
}

describe('retries', () => {
  it('retries a 429 after its Retry-After, for writes too', async () => {
    const { client, retries, metrics, host } = observed();
    t.env.faults.inject({
      match: { verb: 'create', resource: 'configmaps' },
      action: { status: 429, retryAfterSeconds: 1 },
      times: 1,
    });
    const cm = await client.api(ConfigMap, 'default').create({ metadata: { name: 'after-429' } });
    expect(cm.metadata?.uid).toBeTruthy();
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ method: 'POST', attempt: 1, delayMs: 1000 });
    expect(isTooManyRequests(retries[0]!.error)).toBe(true);
    expect(metrics.requestsTotal({ code: '429', method: 'POST', host })).toBe(1);
    expect(metrics.requestsTotal({ code: '201', method: 'POST', host })).toBe(1);
    expect(metrics.durationCount({ verb: 'POST', host })).toBe(2);
  });

  it('retries 5xx answers of reads with backoff, and gives up after maxRetries', async () => {
    const { client, retries, metrics, host } = observed({ maxRetries: 3 });
    const cms = client.api(ConfigMap, 'default');
    t.env.faults.inject({
      match: { verb: 'list', resource: 'configmaps' },
      action: { status: 503 },
      times: 2,
    });
    expect((await cms.list()).kind).toBe('ConfigMapList');
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
    expect(retries.every((r) => r.delayMs >= 0 && r.delayMs <= 2)).toBe(true);
    expect(metrics.requestsTotal({ code: '503', method: 'GET', host })).toBe(2);

    retries.length = 0;
    t.env.faults.inject({
      match: { verb: 'get', resource: 'configmaps' },
      action: { status: 500, message: 'boom' },
    });
    const err = await rejection<ApiError>(cms.get('anything'));
    expect([err.code, err.reason, err.message]).toEqual([500, 'InternalError', 'boom']);
    expect(retries).toHaveLength(3);
  });

  it('does not retry 5xx answers of writes, nor 4xx answers', async () => {
    const { client, retries } = observed();
    const cms = client.api(ConfigMap, 'default');
    t.env.faults.inject({
      match: { verb: 'create', resource: 'configmaps' },
      action: { status: 500 },
      times: 1,
    });
    const err = await rejection<ApiError>(cms.create({ metadata: { name: 'once' } }));
    expect(err.code).toBe(500);
    expect(retries).toEqual([]);
    expect(isNotFound(await rejection(cms.get('once')))).toBe(true);
    expect(retries).toEqual([]);
  });

  it('retries reads on a dropped connection; a dropped write is a NetworkError', async () => {
    const { client, retries } = observed();
    const cms = client.api(ConfigMap, 'default');
    await cms.create({ metadata: { name: 'dropped' } });
    t.env.faults.inject({ match: { verb: 'get', name: 'dropped' }, action: { drop: true }, times: 1 });
    expect((await cms.get('dropped')).metadata?.name).toBe('dropped');
    expect(retries).toHaveLength(1);
    expect(isNetworkError(retries[0]!.error)).toBe(true);

    retries.length = 0;
    t.env.faults.inject({ match: { verb: 'update', name: 'dropped' }, action: { drop: true }, times: 1 });
    const err = await rejection<NetworkError>(
      cms.update({ metadata: { name: 'dropped' }, data: { a: '1' } }),
    );
    expect(isNetworkError(err)).toBe(true);
    expect(err.kind).toBe('reset');
    expect(err.method).toBe('PUT');
    expect(retries).toEqual([]);
  });

  it('retries refused connections for any method, then reports them', async () => {
    // A port nothing listens on.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((r) => probe.close(() => r()));
    const retries: RetryInfo[] = [];
    const metrics = new ClientMetrics();
    const client = new Client(
      { server: `https://127.0.0.1:${port}`, token: 'x' },
      {
        retry: { maxRetries: 2, baseDelayMs: 1, onRetry: (r) => retries.push(r) },
        onRequest: metrics.observe,
      },
    );
    try {
      const err = await rejection<NetworkError>(
        client.api(ConfigMap, 'default').create({ metadata: { name: 'x' } }),
      );
      expect(isNetworkError(err)).toBe(true);
      expect(err.kind).toBe('connect');
      expect(err.code).toBe('ECONNREFUSED');
      expect(retries).toHaveLength(2);
      expect(metrics.requestsTotal({ code: '<error>', method: 'POST', host: `127.0.0.1:${port}` })).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('can be turned off', async () => {
    const client = t.newClient({ retry: false });
    t.env.faults.inject({
      match: { verb: 'list', resource: 'configmaps' },
      action: { status: 429 },
      times: 1,
    });
    expect(isTooManyRequests(await rejection(client.api(ConfigMap, 'default').list()))).toBe(true);
  });
});

describe('timeouts, cancellation, rate limits', () => {
  it('times out a slow answer with a NetworkError of kind timeout', async () => {
    const client = t.newClient({ timeoutMs: 50 });
    t.env.faults.inject({
      match: { verb: 'list', resource: 'configmaps' },
      action: { delayMs: 1000 },
      times: 1,
    });
    const err = await rejection<NetworkError>(client.api(ConfigMap, 'default').list());
    expect(isNetworkError(err)).toBe(true);
    expect(err.kind).toBe('timeout');
    // Per request, the default can be lifted.
    t.env.faults.inject({
      match: { verb: 'list', resource: 'configmaps' },
      action: { delayMs: 100 },
      times: 1,
    });
    expect((await client.api(ConfigMap, 'default').list({ timeoutMs: 0 })).kind).toBe('ConfigMapList');
  });

  it('cancels with an AbortSignal, with the signal reason', async () => {
    t.env.faults.inject({
      match: { verb: 'list', resource: 'configmaps' },
      action: { delayMs: 1000 },
      times: 1,
    });
    const ac = new AbortController();
    const pending = t.client.api(ConfigMap, 'default').list({ signal: ac.signal });
    ac.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
    await expect(
      t.client.api(ConfigMap, 'default').list({ signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('rate-limits client-side when asked to', async () => {
    const metrics = new ClientMetrics();
    const client = t.newClient({ rateLimit: { qps: 50, burst: 2 }, onRequest: metrics.observe });
    const cms = client.api(ConfigMap, 'default');
    await Promise.all(Array.from({ length: 5 }, () => cms.list({ limit: 1 })));
    expect(metrics.requestsTotal({ code: '200', method: 'GET', host: new URL(t.env.url).host })).toBe(5);
  });
});
