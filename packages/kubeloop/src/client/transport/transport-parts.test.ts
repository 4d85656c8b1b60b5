import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/status.js';
import { apiErrorFromResponse, NetworkError, parseRetryAfter, toNetworkError } from './errors.js';
import { ClientMetrics } from './metrics.js';
import { TokenBucket } from './rate-limit.js';
import { isRetryable, retryDelayMs } from './retry.js';
import { parseWarningHeaders } from './warnings.js';

const where = { method: 'GET', url: 'https://x/api' };

describe('Warning headers', () => {
  it('extracts 299 texts, unescapes quotes, skips dates and other codes', () => {
    expect(parseWarningHeaders('299 - "unknown field \\"spec.x\\""')).toEqual(['unknown field "spec.x"']);
    expect(
      parseWarningHeaders([
        '299 - "a, with comma", 299 kube-apiserver "b" "Mon, 01 Jan 2024 00:00:00 GMT"',
        '199 - "misc"',
        '299 - "c"',
      ]),
    ).toEqual(['a, with comma', 'b', 'c']);
    expect(parseWarningHeaders(undefined)).toEqual([]);
    expect(parseWarningHeaders('garbage')).toEqual([]);
  });
});

describe('error answers', () => {
  it('uses the Status body, and copies Retry-After into details', () => {
    const body = JSON.stringify(ApiError.tooManyRequests('slow down', 3).status);
    const err = apiErrorFromResponse(429, body, undefined);
    expect(err).toBeInstanceOf(ApiError);
    expect([err.code, err.reason, err.message, err.retryAfter]).toEqual([
      429,
      'TooManyRequests',
      'slow down',
      3,
    ]);
    const noDetails = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      code: 503,
      reason: 'ServiceUnavailable',
    });
    expect(apiErrorFromResponse(503, noDetails, '7').retryAfter).toBe(7);
  });

  it('makes up a Status for answers that are not one, like client-go', () => {
    const html = apiErrorFromResponse(502, '<html>bad gateway</html>', undefined);
    expect(html.code).toBe(502);
    expect(html.reason).toBe('InternalError');
    expect(html.message).toBe(
      'an error on the server ("<html>bad gateway</html>") has prevented the request from succeeding',
    );
    const notFound = apiErrorFromResponse(404, '404 page not found', undefined);
    expect([notFound.reason, notFound.message]).toEqual([
      'NotFound',
      'the server could not find the requested resource',
    ]);
    expect(apiErrorFromResponse(429, '', '2').retryAfter).toBe(2);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('5')).toBe(5);
    expect(parseRetryAfter(new Date(10_000 + 3_000).toUTCString(), 10_000)).toBe(3);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });

  it('sorts network failures by whether the request left', () => {
    const e = (code: string) => Object.assign(new Error(code), { code });
    expect(toNetworkError(e('ECONNREFUSED'), where).kind).toBe('connect');
    expect(toNetworkError(e('UND_ERR_CONNECT_TIMEOUT'), where).kind).toBe('connect');
    expect(toNetworkError(e('UND_ERR_SOCKET'), where).kind).toBe('reset');
    expect(toNetworkError(e('ECONNRESET'), where).kind).toBe('reset');
    expect(toNetworkError(e('UND_ERR_HEADERS_TIMEOUT'), where).kind).toBe('timeout');
    expect(toNetworkError(e('ERR_TLS_CERT_ALTNAME_INVALID'), where).kind).toBe('tls');
    expect(toNetworkError(e('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), where).kind).toBe('tls');
    const wrapped = toNetworkError(
      Object.assign(new Error('fetch failed'), { cause: e('ECONNREFUSED') }),
      where,
    );
    expect(wrapped.kind).toBe('connect');
    expect(wrapped.message).toContain('GET https://x/api');
  });
});

describe('retry policy', () => {
  const api = (code: number) => new ApiError({ code });
  it('retries 429 always, 5xx and resets only for reads, refused connections always', () => {
    expect(isRetryable('POST', api(429))).toBe(true);
    expect(isRetryable('GET', api(500))).toBe(true);
    expect(isRetryable('GET', api(503))).toBe(true);
    expect(isRetryable('POST', api(500))).toBe(false);
    expect(isRetryable('PUT', api(503))).toBe(false);
    expect(isRetryable('GET', api(404))).toBe(false);
    expect(isRetryable('GET', api(409))).toBe(false);
    expect(isRetryable('GET', new NetworkError('reset', 'x', where))).toBe(true);
    expect(isRetryable('POST', new NetworkError('reset', 'x', where))).toBe(false);
    expect(isRetryable('POST', new NetworkError('connect', 'x', where))).toBe(true);
    expect(isRetryable('GET', new NetworkError('timeout', 'x', where))).toBe(false);
    expect(isRetryable('GET', new NetworkError('tls', 'x', where))).toBe(false);
    expect(isRetryable('GET', new Error('other'))).toBe(false);
  });

  it('waits Retry-After when given, else a jittered exponential step under the cap', () => {
    const opts = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect(retryDelayMs(1, ApiError.tooManyRequests('x', 2), { ...opts, maxDelayMs: 30_000 })).toBe(2000);
    expect(retryDelayMs(1, ApiError.tooManyRequests('x', 60), opts)).toBe(1000);
    const top = () => 0.999999;
    expect(retryDelayMs(1, api(500), opts, top)).toBe(99);
    expect(retryDelayMs(3, api(500), opts, top)).toBe(399);
    expect(retryDelayMs(10, api(500), opts, top)).toBe(999);
    expect(retryDelayMs(10, api(500), opts, () => 0)).toBe(0);
  });
});

describe('token bucket', () => {
  it('allows a burst, then spaces requests by 1/qps', async () => {
    let now = 0;
    const bucket = new TokenBucket({ qps: 10, burst: 2 }, () => now);
    await bucket.acquire();
    await bucket.acquire();
    expect(bucket.waitMs).toBeCloseTo(100);
    now = 50;
    expect(bucket.waitMs).toBeCloseTo(50);
    now = 1000;
    expect(bucket.waitMs).toBe(0);
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow(RangeError);
  });

  it('gives the token back when a waiting caller gives up', async () => {
    let now = 0;
    const bucket = new TokenBucket({ qps: 1, burst: 1 }, () => now);
    await bucket.acquire();
    const ac = new AbortController();
    const waiting = bucket.acquire(ac.signal);
    ac.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    now = 1000;
    expect(bucket.waitMs).toBe(0);
  });
});

describe('client metrics', () => {
  it('counts requests by code, method and host, and observes durations', () => {
    const m = new ClientMetrics();
    m.observe({ method: 'GET', host: 'h:1', path: '/a', code: '200', durationSeconds: 0.01, attempt: 0 });
    m.observe({ method: 'GET', host: 'h:1', path: '/a', code: '200', durationSeconds: 0.2, attempt: 0 });
    m.observe({ method: 'POST', host: 'h:1', path: '/a', code: '<error>', durationSeconds: 3, attempt: 1 });
    expect(m.requestsTotal({ code: '200', method: 'GET', host: 'h:1' })).toBe(2);
    expect(m.requestsTotal({ code: '<error>', method: 'POST', host: 'h:1' })).toBe(1);
    expect(m.durationCount({ verb: 'GET', host: 'h:1' })).toBe(2);
    const text = m.render();
    expect(text).toContain('rest_client_requests_total{code="200",host="h:1",method="GET"} 2');
    expect(text).toContain('rest_client_request_duration_seconds_bucket{host="h:1",verb="GET",le="0.025"} 1');
    expect(text).toContain('rest_client_request_duration_seconds_bucket{host="h:1",verb="GET",le="0.25"} 2');
    expect(text).toContain('rest_client_request_duration_seconds_count{host="h:1",verb="POST"} 1');
  });
});
