/** `/metrics`: the apiserver's Prometheus metrics, read with kubectl as an operator would. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from '../http.js';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  env = await startKubectlEnv({ controllers: false });
  http = httpClient(env.cp);
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

/** The value of the sample `name{labels}` whose labels include all of `labels` (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const body = line.slice(name.length).match(/^(?:\{(.*)\})?\s+(\S+)$/);
    if (!body) continue;
    const have = new Map([...(body[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) total += Number(body[2]);
  }
  return total;
}

describe('/metrics', () => {
  it('request counts grow with requests, labelled as the apiserver labels them', async () => {
    const list = {
      verb: 'LIST',
      group: '',
      version: 'v1',
      resource: 'configmaps',
      scope: 'namespace',
      code: '200',
      component: 'apiserver',
    };
    const before = await env.ok(['get', '--raw', '/metrics']);
    for (let i = 0; i < 3; i++) await env.ok(['get', 'configmaps', '-n', 'default']);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'counted' } };
    expect((await http.post('/api/v1/namespaces/default/configmaps', cm)).status).toBe(201);
    expect((await http.get('/api/v1/namespaces/default/configmaps/counted')).status).toBe(200);
    expect((await http.get('/api/v1/namespaces/default/configmaps/missing')).status).toBe(404);
    // Paths of no resource reach Go's NotFound handler, which is not instrumented.
    expect((await http.get('/apis/nope.example.com/v1/things')).status).toBe(404);
    const after = await env.ok(['get', '--raw', '/metrics']);

    expect(
      sample(after, 'apiserver_request_total', list) - sample(before, 'apiserver_request_total', list),
    ).toBe(3);
    const post = { verb: 'POST', resource: 'configmaps', scope: 'namespace', code: '201' };
    expect(
      sample(after, 'apiserver_request_total', post) - sample(before, 'apiserver_request_total', post),
    ).toBe(1);
    const get = { verb: 'GET', resource: 'configmaps', scope: 'resource', code: '200' };
    expect(sample(after, 'apiserver_request_total', get)).toBe(1);
    const missing = { verb: 'GET', resource: 'configmaps', scope: 'resource', code: '404' };
    expect(sample(after, 'apiserver_request_total', missing)).toBe(1);
    expect(sample(after, 'apiserver_request_total', { group: 'nope.example.com' })).toBe(0);
    const count = (t: string) =>
      sample(t, 'apiserver_request_duration_seconds_count', { verb: 'LIST', resource: 'configmaps' });
    expect(count(after) - count(before)).toBe(3);
    expect(after).toMatch(/^# TYPE apiserver_request_duration_seconds histogram$/m);
    expect(after).toMatch(/^apiserver_request_duration_seconds_bucket\{.*le="0\.005".*\} \d+$/m);
    expect(after).toMatch(/^apiserver_current_inflight_requests\{request_kind="mutating"\} 0$/m);
    expect(after).toMatch(/^apiserver_current_inflight_requests\{request_kind="readOnly"\} \d+$/m);
    expect(sample(after, 'apiserver_storage_objects', { resource: 'configmaps' })).toBe(
      sample(before, 'apiserver_storage_objects', { resource: 'configmaps' }) + 1,
    );
    expect(sample(after, 'apiserver_storage_objects', { resource: 'namespaces' })).toBeGreaterThanOrEqual(4);
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'process_open_fds',
    ])
      expect(sample(after, name, {}), name).toBeGreaterThan(0);
  });

  it('watches and applies are counted under their own verbs', async () => {
    const w = http.watch('/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1');
    const r = await http.patch(
      '/api/v1/namespaces/default/configmaps/applied?fieldManager=t',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' } },
      'application/apply-patch+yaml',
    );
    expect(r.status).toBe(201);
    const deadline = Date.now() + 10_000;
    while (!w.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const text = await env.ok(['get', '--raw', '/metrics']);
    expect(
      sample(text, 'apiserver_request_total', { verb: 'WATCH', resource: 'configmaps', code: '200' }),
    ).toBe(1);
    expect(
      sample(text, 'apiserver_request_total', { verb: 'APPLY', resource: 'configmaps', code: '201' }),
    ).toBe(1);
    // Long-running requests are not timed.
    expect(sample(text, 'apiserver_request_duration_seconds_count', { verb: 'WATCH' })).toBe(0);
  });

  it('is not for anonymous requests', async () => {
    const r = await http.get('/metrics', { token: null });
    expect(r.status).toBe(403);
    expect(r.json.message).toBe('forbidden: User "system:anonymous" cannot get path "/metrics"');
    expect((await http.get('/metrics', { token: 'wrong' })).status).toBe(401);
  });

  it('each control plane counts its own requests', async () => {
    const { startTestEnv } = await import('../../src/index.js');
    const other = await startTestEnv({ controllers: false });
    const otherHttp = httpClient(other);
    try {
      const text = (await otherHttp.get('/metrics', { headers: { Accept: 'text/plain' } })).text;
      expect(sample(text, 'apiserver_request_total', { verb: 'POST', resource: 'configmaps' })).toBe(0);
    } finally {
      otherHttp.close();
      await other.stop();
    }
  });
});
