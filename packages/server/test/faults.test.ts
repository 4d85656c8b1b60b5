/**
 * The fault-injection hook (`cp.faults`) that reliability tests of clients rely on: injected
 * errors are proper `Status` answers, delays hold requests, drops cut connections, watch streams
 * can be ended on demand, and rules expire after `times`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../src/index.js';
import { httpClient } from './http.js';
import { eventually } from './kubectl.js';
import { statusProblems } from './status-check.js';

const CM = '/api/v1/namespaces/default/configmaps';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
  const r = await http.post(CM, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'target' },
    data: { a: '1' },
  });
  expect(r.status).toBe(201);
});

afterEach(() => cp.faults.clear());

afterAll(async () => {
  http?.close();
  await cp?.stop();
});

describe('injected answers', () => {
  it('answers 429 with a Status, details.retryAfterSeconds and a Retry-After header', async () => {
    cp.faults.inject({
      match: { verb: 'get', resource: 'configmaps' },
      action: { status: 429, retryAfterSeconds: 3 },
      times: 1,
    });
    const r = await http.get(`${CM}/target`);
    expect(r.status).toBe(429);
    expect(statusProblems(429, r.json)).toEqual([]);
    expect(r.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'injected fault: HTTP 429',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 3 },
      code: 429,
    });
    expect(r.headers['retry-after']).toBe('3');
    // The rule is used up: the next request is served.
    const next = await http.get(`${CM}/target`);
    expect(next.status).toBe(200);
    expect(next.json.data).toEqual({ a: '1' });
  });

  it('answers 410 and 500 with their reasons, or the reason and message given', async () => {
    cp.faults.inject({ match: { verb: 'list' }, action: { status: 410 }, times: 1 });
    const gone = await http.get(CM);
    expect(gone.status).toBe(410);
    expect(statusProblems(410, gone.json)).toEqual([]);
    expect(gone.json.reason).toBe('Expired');
    expect(gone.headers['retry-after']).toBeUndefined();

    cp.faults.inject({ match: { verb: 'list' }, action: { status: 500 }, times: 1 });
    const internal = await http.get(CM);
    expect(internal.status).toBe(500);
    expect(statusProblems(500, internal.json)).toEqual([]);
    expect(internal.json.reason).toBe('InternalError');

    cp.faults.inject({
      match: { verb: 'create' },
      action: {
        status: 503,
        reason: 'ServiceUnavailable',
        message: 'etcd is on a break',
        retryAfterSeconds: 1,
      },
      times: 1,
    });
    const busy = await http.post(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'not-created' },
    });
    expect(busy.status).toBe(503);
    expect(busy.json.message).toBe('etcd is on a break');
    expect(busy.json.reason).toBe('ServiceUnavailable');
    expect(busy.headers['retry-after']).toBe('1');
    // The refused create did not happen.
    expect((await http.get(`${CM}/not-created`)).status).toBe(404);
  });

  it('applies a rule only to the requests it matches', async () => {
    cp.faults.inject({
      match: { verb: 'get', resource: 'configmaps', namespace: 'default', name: 'target' },
      action: { status: 500 },
    });
    cp.faults.inject({ match: { path: /\/api\/v1\/namespaces\/kube-system\// }, action: { status: 429 } });
    cp.faults.inject({ match: { group: 'apps' }, action: { status: 503 } });
    cp.faults.inject({ match: { subresource: 'status' }, action: { status: 409 } });

    expect((await http.get(`${CM}/target`)).status).toBe(500);
    expect((await http.get(`${CM}/target`)).status).toBe(500); // no `times`: the rule stays
    expect((await http.get(`${CM}/other`)).status).toBe(404);
    expect((await http.get(CM)).status).toBe(200);
    expect((await http.get('/api/v1/namespaces/kube-system/configmaps')).status).toBe(429);
    expect((await http.get('/apis/apps/v1/deployments')).status).toBe(503);
    expect((await http.get('/apis/batch/v1/jobs')).status).toBe(200);
    expect((await http.get('/api/v1/namespaces/default/status')).status).toBe(409);
    expect((await http.get('/api/v1/namespaces/default')).status).toBe(200);
  });

  it('expires a rule after `times` requests, and removes it on demand', async () => {
    cp.faults.inject({ match: { verb: 'get', name: 'target' }, action: { status: 500 }, times: 2 });
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await http.get(`${CM}/target`)).status);
    expect(codes).toEqual([500, 500, 200, 200]);

    const remove = cp.faults.inject({ match: { verb: 'get', name: 'target' }, action: { status: 429 } });
    expect((await http.get(`${CM}/target`)).status).toBe(429);
    remove();
    expect((await http.get(`${CM}/target`)).status).toBe(200);

    // The first matching rule wins, and each rule counts its own uses.
    cp.faults.inject({ match: { name: 'target' }, action: { status: 503 }, times: 1 });
    cp.faults.inject({ match: { name: 'target' }, action: { status: 429 }, times: 1 });
    const order: number[] = [];
    for (let i = 0; i < 3; i++) order.push((await http.get(`${CM}/target`)).status);
    expect(order).toEqual([503, 429, 200]);

    cp.faults.inject({ action: { status: 500 } });
    expect((await http.get('/api/v1/namespaces')).status).toBe(500);
    cp.faults.clear();
    expect((await http.get('/api/v1/namespaces')).status).toBe(200);
  });

  it('answers a watch request with the injected Status instead of a stream', async () => {
    cp.faults.inject({ match: { verb: 'watch' }, action: { status: 410 }, times: 1 });
    const r = await http.get(`${CM}?watch=true`);
    expect(r.status).toBe(410);
    expect(statusProblems(410, r.json)).toEqual([]);
    expect(r.json.reason).toBe('Expired');
    expect(cp.faults.openWatches).toBe(0);
  });
});

describe('delays and drops', () => {
  it('holds a delayed request, then serves it normally', async () => {
    cp.faults.inject({ match: { verb: 'get', name: 'target' }, action: { delayMs: 1000 }, times: 1 });
    let delayedDone = false;
    const delayed = http.get(`${CM}/target`).then((r) => {
      delayedDone = true;
      return r;
    });
    // Requests that the rule does not hold are answered while the delayed one waits.
    const other = await http.get(CM);
    expect(other.status).toBe(200);
    expect(delayedDone).toBe(false);
    const r = await delayed;
    expect(r.status).toBe(200);
    expect(r.json.metadata.name).toBe('target');
  });

  it('drops the connection without an answer, until the rule expires', async () => {
    cp.faults.inject({ match: { verb: 'get', name: 'target' }, action: { drop: true }, times: 2 });
    for (let i = 0; i < 2; i++) {
      const err = await http.get(`${CM}/target`).then(
        () => undefined,
        (e: NodeJS.ErrnoException) => e,
      );
      expect(err?.code).toMatch(/^(ECONNRESET|EPIPE)$/);
    }
    const r = await http.get(`${CM}/target`);
    expect(r.status).toBe(200);
  });

  it('drops a write before it happens', async () => {
    cp.faults.inject({ match: { verb: 'create' }, action: { drop: true }, times: 1 });
    const err = await http
      .post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dropped' } })
      .then(
        () => undefined,
        (e: NodeJS.ErrnoException) => e,
      );
    expect(err).toBeDefined();
    expect((await http.get(`${CM}/dropped`)).status).toBe(404);
  });
});

describe('watch streams', () => {
  it('counts open watches and ends them on demand, selectively or all at once', async () => {
    expect(cp.faults.openWatches).toBe(0);
    const cms = http.watch(`${CM}?watch=true`);
    const pods = http.watch('/api/v1/pods?watch=true');
    const nss = http.watch('/api/v1/watch/namespaces');
    await eventually(() => cp.faults.openWatches === 3, 5000, 'three open watches');
    expect(cms.status).toBe(200);

    expect(cp.faults.dropWatches({ resource: 'configmaps' })).toBe(1);
    await eventually(() => cms.ended, 5000, 'the configmaps watch to end');
    expect(cp.faults.openWatches).toBe(2);
    expect(pods.ended).toBe(false);

    // The stream ends cleanly: everything it sent before is complete JSON lines.
    expect(cms.events.every((e) => e.type === 'ADDED')).toBe(true);

    expect(cp.faults.dropWatches()).toBe(2);
    await eventually(() => pods.ended && nss.ended, 5000, 'every watch to end');
    expect(cp.faults.openWatches).toBe(0);
    expect(cp.faults.dropWatches()).toBe(0);

    // A client that resumes from the last resourceVersion it saw misses nothing.
    const last = cms.events.at(-1)?.object.metadata.resourceVersion ?? String(cp.store.revision);
    const resumed = http.watch(`${CM}?watch=true&resourceVersion=${last}`);
    try {
      const r = await http.post(CM, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'after-drop' },
      });
      expect(r.status).toBe(201);
      await eventually(
        () => resumed.events.some((e) => e.object.metadata.name === 'after-drop'),
        5000,
        'the new event',
      );
    } finally {
      resumed.close();
    }
    await eventually(() => cp.faults.openWatches === 0, 5000, 'the resumed watch to close');
  });
});
