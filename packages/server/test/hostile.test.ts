/**
 * Hostile input: ≥ 10,000 seeded requests built to break the server (nesting thousands deep in
 * every content type, bodies around the 3 MiB limit, bad names, selectors and resourceVersions,
 * non-ASCII field names, unknown fields under each fieldValidation, self-referencing YAML,
 * methods kube-apiserver does not serve, huge timeouts), and rounds of concurrent writes that
 * race on one resourceVersion. Then: the server is alive and logged no error, every failure was
 * a well-formed `Status`, no failed write was stored (each write carries a marker annotation, and
 * a watch sees everything stored), exactly one writer won each race, and the control objects
 * written at the start are byte for byte what they were.
 *
 * Reproduce a failure with `HOSTILE_SEED=<seed> npx vitest run packages/server/test/hostile.test.ts`;
 * `HOSTILE_REQUESTS` changes the number of random requests.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../src/index.js';
import { WIDGET_CRD } from './fuzz-gen.js';
import {
  CONTROL_NS,
  HOSTILE_KINDS,
  HOSTILE_NS,
  type HostileContext,
  type HostileRequest,
  hostileRequest,
  MARKER,
  objectPath,
} from './hostile-gen.js';
import { httpClient } from './http.js';
import { eventually } from './kubectl.js';
import { kubeApiserverOwn5xx, statusProblems } from './status-check.js';

const SEED = Number(process.env.HOSTILE_SEED ?? 20_261_125);
const REQUESTS = Number(process.env.HOSTILE_REQUESTS ?? 9_000);
const CONCURRENCY = 12;
/** Rounds of racing writers, and writers per round. */
const ROUNDS = 40;
const RACERS = 25;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The server ended the response (a watch: before the client closed it). */
  ended: boolean;
}

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;
const serverErrors: string[] = [];
const ctx: HostileContext = { staleRv: {} };
/** The control objects' paths and their JSON as first read. */
const control = new Map<string, string>();

/** Watches of every kind written, from before the first request: what the server stored. */
const stored = new Set<string>();
const watches: MarkerWatch[] = [];

interface MarkerWatch {
  /** Markers of every object the watch delivered (`sentinel` included). */
  markers: Set<string>;
  ended: boolean;
  close(): void;
}

/**
 * A watch that keeps only the markers of what it sees: objects nested thousands deep and 3 MiB
 * large go by, and parsing each would cost more than the requests that made them.
 */
function markerWatch(path: string): MarkerWatch {
  const url = new URL(cp.url);
  const w: MarkerWatch = { markers: new Set(), ended: false, close: () => req.destroy() };
  let tail = '';
  const marker = /"hostile\/i":"([^"]+)"/g;
  const req = httpsRequest(
    {
      host: url.hostname,
      port: url.port,
      path,
      headers: { Accept: 'application/json', Authorization: `Bearer ${cp.clientConfig.token}` },
      agent: new Agent({ ca: cp.clientConfig.caData }),
    },
    (res) => {
      res.on('data', (c: Buffer) => {
        // A marker may straddle two chunks: keep the last line's start for the next one.
        const text = tail + c.toString('utf8');
        const nl = text.lastIndexOf('\n');
        tail = text.slice(nl + 1);
        for (const m of text.slice(0, nl + 1).matchAll(marker)) w.markers.add(m[1]!);
      });
      res.on('end', () => {
        w.ended = true;
      });
      res.on('error', () => {
        w.ended = true;
      });
    },
  );
  req.on('error', () => {
    w.ended = true;
  });
  req.end();
  return w;
}

const kindPath = (k: (typeof HOSTILE_KINDS)[number]) => `${k.prefix}/${k.resource}`;

beforeAll(async () => {
  cp = await startTestEnv({
    controllers: false,
    log: (level, msg, fields) => {
      if (level === 'error') serverErrors.push(`${msg} ${JSON.stringify(fields)}`.slice(0, 2000));
    },
  });
  http = httpClient(cp);
  for (const ns of [HOSTILE_NS, CONTROL_NS]) {
    const r = await http.post('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    });
    expect(r.status, r.text).toBe(201);
  }
  const crd = await http.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', WIDGET_CRD);
  expect(crd.status, crd.text).toBe(201);
  await eventually(
    async () => (await http.get('/apis/fuzz.example.com/v1/namespaces/default/widgets')).status === 200,
    10_000,
    'widgets to be served',
  );

  // The pool: objects the requests patch and replace. Each is changed once after its first
  // resourceVersion is noted, so that resourceVersion is stale from the start.
  for (const k of HOSTILE_KINDS) {
    for (const name of [...k.pool, 'lock-0', 'lock-1']) {
      const created = await http.post(objectPath(k, HOSTILE_NS), {
        apiVersion: k.apiVersion,
        kind: k.kind,
        ...k.sample(name),
      });
      expect(created.status, created.text).toBe(201);
      ctx.staleRv[`${k.resource}/${name}`] = created.json.metadata.resourceVersion;
      const changed = await http.patch(
        objectPath(k, HOSTILE_NS, name),
        { metadata: { labels: { changed: 'once' } } },
        'application/merge-patch+json',
      );
      expect(changed.status, changed.text).toBe(200);
    }
  }

  // The control objects, in a namespace no request addresses.
  const controls: [string, unknown][] = [
    [
      '/api/v1/namespaces/control/configmaps',
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ctl', labels: { app: 'h' }, annotations: { note: 'ünïcödé ✓ 𝄞' } },
        data: { 'a.txt': 'line 1\nline 2\n', unicode: '名前 😀' },
        binaryData: { bin: Buffer.from([0, 1, 2, 255]).toString('base64') },
      },
    ],
    [
      '/api/v1/namespaces/control/secrets',
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ctl' }, stringData: { password: 'hunter2' } },
    ],
    [
      '/apis/apps/v1/namespaces/control/deployments',
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'ctl', labels: { app: 'h' } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'h' } },
          template: (HOSTILE_KINDS[2]!.sample('x').spec as any).template,
        },
      },
    ],
    [
      '/apis/fuzz.example.com/v1/namespaces/control/widgets',
      {
        apiVersion: 'fuzz.example.com/v1',
        kind: 'Widget',
        metadata: { name: 'ctl', labels: { app: 'h' } },
        spec: { color: 'blue', replicas: 2, extra: { nested: { list: [1, 'two', { three: 3 }] } } },
      },
    ],
  ];
  for (const [collection, obj] of controls) {
    const r = await http.post(collection, obj);
    expect(r.status, r.text).toBe(201);
    const path = `${collection}/ctl`;
    control.set(path, (await http.get(path)).text);
  }
  const deployment = JSON.parse(control.get('/apis/apps/v1/namespaces/control/deployments/ctl')!);
  expect(deployment.spec.template.spec.containers[0].name).toBe('app');

  const rv = (await http.get('/api/v1/namespaces')).json.metadata.resourceVersion;
  for (const k of HOSTILE_KINDS) {
    watches.push(markerWatch(`${kindPath(k)}?watch=true&resourceVersion=${rv}`));
  }
});

afterAll(async () => {
  for (const w of watches) w.close();
  http?.close();
  await cp?.stop();
});

/** Sends one raw request; a watch is read until its first bytes (or its end), then closed. */
function send(
  agent: Agent,
  req: { method: string; path: string; headers: Record<string, string>; body?: Buffer; watch?: boolean },
): Promise<Answer> {
  const url = new URL(cp.url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${cp.clientConfig.token}`,
      ...req.headers,
    };
    if (req.body) headers['Content-Length'] = String(req.body.length);
    const r = httpsRequest(
      { host: url.hostname, port: url.port, path: req.path, method: req.method, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        let settled = false;
        let ended = false;
        const done = () => {
          if (settled) return;
          settled = true;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            ended,
          });
        };
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (req.watch && res.statusCode === 200) {
            done();
            r.destroy();
          }
        });
        res.on('end', () => {
          ended = true;
          done();
        });
        res.on('error', done);
        res.on('close', done);
        if (req.watch && res.statusCode === 200) {
          // A quiet watch sends nothing: what matters is that it was accepted.
          setTimeout(() => {
            done();
            r.destroy();
          }, 150).unref();
        }
      },
    );
    r.setTimeout(20_000, () => r.destroy(new Error('no answer within 20 s')));
    r.on('error', reject);
    r.end(req.body);
  });
}

const ALLOWED = new Set([200, 201, 202, 400, 401, 403, 404, 405, 406, 409, 410, 413, 415, 422]);

/** What is wrong with an answer, beyond the request's own expectation; empty when nothing. */
function problemsOf(req: HostileRequest, a: Answer): string[] {
  const problems: string[] = [];
  const isJson = String(a.headers['content-type'] ?? '').startsWith('application/json');
  let json: any;
  if (a.status >= 400) {
    // Outside the API (/healthz, /openapi/v2…) kube-apiserver's handlers and Go's mux answer in
    // plain text; only the API's own failures are Status objects.
    if (req.method === 'HEAD' || !/^\/apis?(\/|$|\?)/.test(req.path)) {
      if (a.status >= 500) problems.push(`HTTP ${a.status}: ${a.text.slice(0, 400)}`);
      return problems;
    }
    if (!isJson)
      return [
        `failure ${a.status} is not JSON (${String(a.headers['content-type'])}): ${a.text.slice(0, 200)}`,
      ];
    try {
      json = JSON.parse(a.text);
    } catch {
      return [`a failure does not parse: ${a.text.slice(0, 200)}`];
    }
    problems.push(...statusProblems(a.status, json));
    const upstream500 = kubeApiserverOwn5xx(req, a.status, json);
    if (!upstream500 && (typeof json?.reason !== 'string' || json.reason === ''))
      problems.push('a failure without a reason');
    if (a.status >= 500 && !upstream500) problems.push(`HTTP ${a.status}: ${a.text.slice(0, 400)}`);
    else if (a.status < 500 && !ALLOWED.has(a.status)) problems.push(`unexpected HTTP ${a.status}`);
  } else if (!ALLOWED.has(a.status)) problems.push(`unexpected HTTP ${a.status}`);
  else if (req.watch && a.status === 200) {
    for (const line of a.text.split('\n').slice(0, -1)) {
      if (!line.trim()) continue;
      try {
        const ev = JSON.parse(line);
        if (!['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'].includes(ev.type))
          problems.push(`watch event ${ev.type}`);
      } catch {
        problems.push(`a watch line is not JSON: ${line.slice(0, 200)}`);
      }
    }
  } else if (isJson && req.method !== 'HEAD' && !req.watch) {
    try {
      json = JSON.parse(a.text);
    } catch {
      problems.push(`a JSON answer does not parse: ${a.text.slice(0, 200)}`);
    }
  }
  const own = req.expect?.(a.status, json, a.headers as Record<string, unknown>, a.ended);
  if (own) problems.push(own);
  return problems;
}

/** Markers of writes that failed: none of them may be stored. */
const failedWrites = new Map<string, string>();
const failures: string[] = [];
const counts = new Map<string, number>();
let sent = 0;

async function randomPhase(agent: Agent): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= REQUESTS) return;
      const req = hostileRequest(SEED, i, ctx);
      let problems: string[];
      try {
        const t0 = Date.now();
        const a = await send(agent, req);
        const dt = Date.now() - t0;
        if (dt > 1000 && process.env.HOSTILE_DEBUG)
          console.log(`SLOW ${dt}ms #${i} ${a.status} ${req.describe.slice(0, 200)}`);
        sent++;
        counts.set(`${req.category} ${a.status}`, (counts.get(`${req.category} ${a.status}`) ?? 0) + 1);
        problems = problemsOf(req, a);
        if (req.write && a.status >= 400)
          failedWrites.set(String(i), `${a.status} ${req.describe.slice(0, 300)}`);
      } catch (err) {
        problems = [`the request failed: ${String(err)}`];
      }
      if (problems.length > 0)
        failures.push(
          `#${i} (HOSTILE_SEED=${SEED}) ${req.describe.slice(0, 500)}\n    → ${problems.join('\n    → ')}`,
        );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/** Rounds of writers that all carry one resourceVersion: exactly one of each round may win. */
async function racePhase(agent: Agent): Promise<void> {
  const url = (k: (typeof HOSTILE_KINDS)[number], name: string, q = '') =>
    `${objectPath(k, HOSTILE_NS, name)}${q}`;
  for (let round = 0; round < ROUNDS; round++) {
    const k = HOSTILE_KINDS[round % HOSTILE_KINDS.length]!;
    const name = `lock-${round % 2}`;
    const current = await send(agent, {
      method: 'GET',
      path: url(k, name),
      headers: { Accept: 'application/json' },
    });
    sent++;
    const obj = JSON.parse(current.text);
    const rv = obj.metadata.resourceVersion as string;
    const racers = Array.from({ length: RACERS }, (_, n) => {
      const winner = `r${round}-${n}`;
      const meta = { resourceVersion: rv, annotations: { winner } };
      switch (n % 4) {
        case 0: {
          const body = structuredClone(obj);
          body.metadata.annotations = { ...body.metadata.annotations, winner };
          return { winner, method: 'PUT', path: url(k, name), type: 'application/json', body };
        }
        case 1:
          return {
            winner,
            method: 'PATCH',
            path: url(k, name),
            type: 'application/merge-patch+json',
            body: { metadata: meta },
          };
        case 2:
          return k.resource === 'widgets'
            ? {
                winner,
                method: 'PATCH',
                path: url(k, name),
                type: 'application/merge-patch+json',
                body: { metadata: meta },
              }
            : {
                winner,
                method: 'PATCH',
                path: url(k, name),
                type: 'application/strategic-merge-patch+json',
                body: { metadata: meta },
              };
        default:
          return {
            winner,
            method: 'PATCH',
            path: url(k, name, `?fieldManager=racer-${n}&force=true`),
            type: 'application/apply-patch+yaml',
            body: { apiVersion: k.apiVersion, kind: k.kind, metadata: { name, ...meta } },
          };
      }
    });
    const answers = await Promise.all(
      racers.map((w) =>
        send(agent, {
          method: w.method,
          path: w.path,
          headers: { Accept: 'application/json', 'Content-Type': w.type },
          body: Buffer.from(JSON.stringify(w.body)),
        }),
      ),
    );
    sent += answers.length;
    const won = answers.flatMap((a, n) => (a.status === 200 ? [n] : []));
    const lost = answers.filter((a) => a.status !== 200);
    const where = `race ${round} on ${k.resource}/${name} (HOSTILE_SEED=${SEED})`;
    if (won.length !== 1)
      failures.push(
        `${where}: ${won.length} writers won: ${answers.map((a) => a.status).join(' ')} ${answers.find((a) => a.status !== 409 && a.status !== 200)?.text.slice(0, 300) ?? ''}`,
      );
    for (const a of lost) {
      const body = JSON.parse(a.text);
      if (a.status !== 409 || body.reason !== 'Conflict')
        failures.push(`${where}: a loser answered ${a.status} ${a.text.slice(0, 300)}`);
    }
    if (won.length === 1) {
      const winner = JSON.parse(answers[won[0]!]!.text);
      const after = await send(agent, {
        method: 'GET',
        path: url(k, name),
        headers: { Accept: 'application/json' },
      });
      sent++;
      const now = JSON.parse(after.text);
      if (
        now.metadata.annotations?.winner !== racers[won[0]!]!.winner ||
        now.metadata.resourceVersion !== winner.metadata.resourceVersion
      )
        failures.push(`${where}: the stored object is not the winner's: ${after.text.slice(0, 300)}`);
    }
  }
}

describe('long request lines', () => {
  it('serves a list whose selector runs past 16 KiB, as kube-apiserver reads up to 1 MiB of header', async () => {
    const values = Array.from({ length: 6000 }, (_, i) => `v${i}`).join(',');
    const r = await http.get(
      `/api/v1/namespaces/${CONTROL_NS}/configmaps?labelSelector=${encodeURIComponent(`app in (h,${values})`)}`,
    );
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(r.json.items.map((i: any) => i.metadata.name)).toEqual(['ctl']);
  });
});

describe(`hostile input with seed ${SEED}`, () => {
  it(`survives ${REQUESTS} hostile requests and ${ROUNDS} rounds of ${RACERS} racing writers`, async () => {
    const agent = new Agent({
      ca: cp.clientConfig.caData,
      keepAlive: true,
      maxSockets: CONCURRENCY + RACERS,
    });
    const t0 = Date.now();
    const timed = async (what: string, p: Promise<void>) => {
      await p;
      if (process.env.HOSTILE_DEBUG) console.log(`${what} done after ${Date.now() - t0} ms (${sent} sent)`);
    };
    await Promise.all([timed('random', randomPhase(agent)), timed('race', racePhase(agent))]);
    agent.destroy();
    const summary = [...counts]
      .sort()
      .map(([k, n]) => `${k}:${n}`)
      .join(' ');
    // Failures by kind (category and problem, numbers left out), then the first few in full.
    const kinds = new Map<string, number>();
    for (const f of failures) {
      const kind = `${f.match(/\[[a-z-]+\]/)?.[0] ?? f.split(':')[0]} ${f.split('→ ')[1] ?? ''}`
        .replace(/\d+/g, 'N')
        .slice(0, 160);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    const byKind = [...kinds].map(([k, n]) => `  ${n}× ${k}`).join('\n');
    expect(
      failures,
      `seed ${SEED}; answers ${summary}\n${failures.length} failures:\n${byKind}\n${failures.slice(0, 30).join('\n')}`,
    ).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(10_000);
    // About 20 s of CPU on two idle cores; a machine shared with other test runs needs longer.
  }, 240_000);

  it('is alive, logged no error, and stored no write that failed', async () => {
    for (const path of ['/livez', '/readyz']) {
      const r = await http.get(path);
      expect(r.status, path).toBe(200);
      expect(r.text).toBe('ok');
    }
    expect.soft(serverErrors, `seed ${SEED}: the server logged errors`).toEqual([]);

    // A last write of each kind: once each watch has seen it, it has seen everything before.
    for (const k of HOSTILE_KINDS) {
      const r = await http.post(objectPath(k, HOSTILE_NS), {
        apiVersion: k.apiVersion,
        kind: k.kind,
        ...k.sample('sentinel'),
        metadata: { ...(k.sample('sentinel').metadata as object), annotations: { [MARKER]: 'sentinel' } },
      });
      expect(r.status, r.text).toBe(201);
    }
    for (const [n, w] of watches.entries()) {
      expect(w.ended, `the watch of ${HOSTILE_KINDS[n]!.resource} ended early`).toBe(false);
      await eventually(
        () => w.markers.has('sentinel'),
        20_000,
        `the watch of ${HOSTILE_KINDS[n]!.resource} to see the sentinel`,
      );
      for (const m of w.markers) stored.add(m);
    }
    const storedFailures = [...failedWrites].filter(([i]) => stored.has(i)).map(([i, d]) => `#${i} ${d}`);
    expect(storedFailures, `seed ${SEED}: writes that failed but were stored`).toEqual([]);
    // The markers did reach the watch: successful writes are there.
    expect(stored.size).toBeGreaterThan(100);
  });

  it('left the control objects byte for byte as they were', async () => {
    for (const [path, before] of control) {
      const now = await http.get(path);
      expect(now.status, path).toBe(200);
      expect(now.text, path).toBe(before);
    }
    const list = await http.get('/api/v1/namespaces/control/configmaps');
    expect(list.json.items.map((i: any) => i.metadata.name).sort()).toEqual(['ctl', 'kube-root-ca.crt']);
  });
});
