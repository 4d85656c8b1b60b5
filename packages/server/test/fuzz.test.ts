/**
 * Bad input never crashes the server or corrupts the store: a table of the named error cases,
 * then ≥ 10,000 random and mutated requests (seeded, reproducible), then a check that the server
 * still answers and that everything it stored is consistent.
 *
 * Reproduce a failure with `FUZZ_SEED=<seed> npx vitest run packages/server/test/fuzz.test.ts`;
 * `FUZZ_REQUESTS` changes the number of requests.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { decodeTypeError } from '../src/openapi/type-check.js';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from '../src/protobuf/index.js';
import { apiVersionOf, storageOf } from '../src/registry/types.js';
import { FUZZ_NAMESPACES, type FuzzRequest, generateRequest, KINDS, WIDGET_CRD } from './fuzz-gen.js';
import { httpClient } from './http.js';
import { eventually, type KubectlEnv, startKubectlEnv } from './kubectl.js';
import { kubeApiserverOwn5xx, statusProblems, storedObjectProblems } from './status-check.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_101);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const CONCURRENCY = 16;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  bytes: Buffer;
}

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;
const serverErrors: string[] = [];

beforeAll(async () => {
  env = await startKubectlEnv({
    log: (level, msg, fields) => {
      // A built-in component refused by RBAC once the fuzzing deleted its bootstrap roles (as a
      // cluster admin can) reports the refusal, as kube's would: that is the server working.
      const text = `${msg} ${JSON.stringify(fields)}`;
      if (
        level === 'error' &&
        !/forbidden: User \\?"system:(serviceaccount:kube-system:|kube-|node:)/.test(text)
      )
        serverErrors.push(text);
    },
  });
  http = httpClient(env.cp);
  for (const ns of FUZZ_NAMESPACES.slice(1)) {
    const r = await http.post('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    });
    expect(r.status).toBe(201);
  }
  const crd = await http.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', WIDGET_CRD);
  expect(crd.status, crd.text).toBe(201);
  await eventually(
    async () => (await http.get('/apis/fuzz.example.com/v1/namespaces/default/widgets')).status === 200,
    10_000,
    'widgets to be served',
  );
});

afterAll(async () => {
  http?.close();
  await env?.stop();
});

/** Sends one raw request; a watch is read until its first bytes (or its end), then closed. */
function send(agent: Agent, req: FuzzRequest): Promise<Answer> {
  const url = new URL(env.cp.url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${env.cp.clientConfig.token}`,
      ...req.headers,
    };
    if (headers.Authorization === '') delete headers.Authorization;
    // Without a length, node sends a DELETE's or OPTIONS' body unframed.
    if (req.body) headers['Content-Length'] = String(req.body.length);
    const r = httpsRequest(
      { host: url.hostname, port: url.port, path: req.path, method: req.method, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        const done = () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            bytes: Buffer.concat(chunks),
          });
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (req.watch && res.statusCode === 200) {
            // A watch may run for minutes: what it sent first is enough to check.
            done();
            r.destroy();
          }
        });
        res.on('end', done);
        res.on('error', () => done());
        res.on('close', done);
        if (req.watch && res.statusCode === 200) {
          // An empty watch sends nothing until something changes: stop waiting after a moment.
          setTimeout(() => {
            done();
            r.destroy();
          }, 150).unref();
        }
      },
    );
    r.setTimeout(15_000, () => r.destroy(new Error('no answer within 15 s')));
    r.on('error', reject);
    r.end(req.body);
  });
}

/** What is wrong with an answer; empty when it is acceptable. */
function problemsOf(req: FuzzRequest, a: Answer): string[] {
  const problems: string[] = [];
  const allowed = [200, 201, 202, 400, 401, 403, 404, 405, 406, 409, 410, 413, 415, 422];
  let json: unknown;
  const type = String(a.headers['content-type'] ?? '');
  // Failures are negotiated like answers: YAML or protobuf when the client asked so.
  const isJson =
    type.startsWith('application/json') ||
    (a.status >= 400 && [' application/yaml', PROTOBUF_CONTENT_TYPE].some((t) => type.startsWith(t.trim())));
  if (isJson && !(req.watch && a.status === 200) && req.method !== 'HEAD') {
    try {
      json = type.startsWith('application/yaml')
        ? parseYaml(a.text)
        : type.startsWith(PROTOBUF_CONTENT_TYPE)
          ? decodeProtobufObject(a.bytes)
          : JSON.parse(a.text);
    } catch {
      problems.push(`a ${type} answer does not parse: ${a.text.slice(0, 200)}`);
    }
  }
  // Paths outside every API reach Go's http.NotFound, as in kube-apiserver.
  const pageNotFound =
    a.status === 404 && type === 'text/plain; charset=utf-8' && a.text === '404 page not found\n';
  const status = json as Record<string, unknown> | undefined;
  if (a.status >= 500) {
    // kube-apiserver's own 500s (plain Go errors, without a reason) and 504s. A crash of the
    // local server would carry the reason InternalError and be logged.
    if (!kubeApiserverOwn5xx(req, a.status, status))
      problems.push(`HTTP ${a.status}: ${a.text.slice(0, 500)}`);
  } else if (!allowed.includes(a.status))
    problems.push(`unexpected HTTP ${a.status}: ${a.text.slice(0, 300)}`);
  // The OpenAPI handlers are kube-openapi's, which answer failures in plain text.
  if (a.status >= 400 && req.method !== 'HEAD' && !req.path.startsWith('/openapi/')) {
    if (!isJson && !pageNotFound)
      problems.push(
        `failure ${a.status} is not JSON (${String(a.headers['content-type'])}): ${a.text.slice(0, 200)}`,
      );
    else if (json !== undefined && a.status !== 500) {
      const p = statusProblems(a.status, json);
      if (p.length > 0) problems.push(`malformed Status (${p.join('; ')}): ${a.text.slice(0, 300)}`);
    }
  }
  if (req.watch && a.status === 200) {
    // Complete lines of a watch stream are events.
    const lines = a.text.split('\n');
    for (const line of lines.slice(0, -1)) {
      if (!line.trim()) continue;
      try {
        const ev = JSON.parse(line) as { type?: unknown };
        if (!['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'].includes(String(ev.type)))
          problems.push(`watch event of type ${String(ev.type)}`);
      } catch {
        problems.push(`watch line is not JSON: ${line.slice(0, 200)}`);
      }
    }
  }
  return problems;
}

describe('bad input is answered with the right Status', () => {
  it('answers every named error case exactly', async () => {
    const cmPath = '/api/v1/namespaces/default/configmaps';
    const cases: {
      what: string;
      method: string;
      path: string;
      raw?: string | Buffer;
      headers?: Record<string, string>;
      token?: string | null;
      code: number;
      reason: string;
      message: string | RegExp;
      causes?: { reason: string; field: string }[];
    }[] = [
      {
        what: 'a body over 3 MiB',
        method: 'POST',
        path: cmPath,
        raw: Buffer.alloc(3 * 1024 * 1024 + 1, 0x20),
        code: 413,
        reason: 'RequestEntityTooLarge',
        message: 'Request entity too large: limit is 3145728',
      },
      {
        what: 'a body that is not JSON',
        method: 'POST',
        path: cmPath,
        raw: '{"apiVersion": "v1", kind',
        code: 400,
        reason: 'BadRequest',
        message:
          'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: invalid character \'k\' looking for beginning of object key string ({"apiVersion": "v1", kind)',
      },
      {
        what: 'a kind that does not match the URL',
        method: 'POST',
        path: cmPath,
        raw: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a' } }),
        code: 400,
        reason: 'BadRequest',
        message:
          'Secret in version "v1" cannot be handled as a ConfigMap: the kind in the body does not match the resource of the URL (configmaps)',
      },
      {
        what: 'an apiVersion that does not match the URL',
        method: 'POST',
        path: cmPath,
        raw: JSON.stringify({ apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'a' } }),
        code: 400,
        reason: 'BadRequest',
        message: 'the API version in the data (apps/v1) does not match the expected API version (v1)',
      },
      {
        what: 'an invalid name',
        method: 'POST',
        path: cmPath,
        raw: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } }),
        code: 422,
        reason: 'Invalid',
        message:
          "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name' }],
      },
      {
        what: 'an invalid label and annotation',
        method: 'POST',
        path: cmPath,
        raw: JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'ok', labels: { 'a b': 'x' }, annotations: { '-bad': 'y' } },
        }),
        code: 422,
        reason: 'Invalid',
        message:
          /^ConfigMap "ok" is invalid: \[metadata\.labels: Invalid value: "a b": name part must consist of .*, metadata\.annotations: Invalid value: "-bad": name part must consist of .*\]$/,
        causes: [
          { reason: 'FieldValueInvalid', field: 'metadata.labels' },
          { reason: 'FieldValueInvalid', field: 'metadata.annotations' },
        ],
      },
      {
        // An unknown group answers Go's plain-text `404 page not found` (see test/http/errors.test.ts).
        what: 'an unknown resource of a built-in group',
        method: 'GET',
        path: '/apis/apps/v1/foos',
        code: 404,
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
      },
      {
        what: 'an unknown resource of a known group',
        method: 'GET',
        path: '/api/v1/namespaces/default/foos',
        code: 404,
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
      },
      {
        what: 'an unknown subresource',
        method: 'GET',
        path: '/api/v1/namespaces/default/configmaps/a/status',
        code: 404,
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
      },
      {
        what: 'a PUT to a collection',
        method: 'PUT',
        path: cmPath,
        raw: '{}',
        code: 405,
        reason: 'MethodNotAllowed',
        message: 'the server does not allow this method on the requested resource',
      },
      {
        what: 'a POST to a named object',
        method: 'POST',
        path: `${cmPath}/a`,
        raw: '{}',
        code: 405,
        reason: 'MethodNotAllowed',
        message: 'the server does not allow this method on the requested resource',
      },
      {
        what: 'a deletecollection of namespaces',
        method: 'DELETE',
        path: '/api/v1/namespaces',
        code: 405,
        reason: 'MethodNotAllowed',
        message: 'the server does not allow this method on the requested resource',
      },
      {
        what: 'an unsupported media type',
        method: 'POST',
        path: cmPath,
        raw: 'name=a',
        headers: { 'Content-Type': 'text/plain' },
        code: 415,
        reason: 'UnsupportedMediaType',
        message:
          'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      },
      {
        what: 'an unsupported patch type',
        method: 'PATCH',
        path: `${cmPath}/a`,
        raw: '{}',
        headers: { 'Content-Type': 'application/xml' },
        code: 415,
        reason: 'UnsupportedMediaType',
        // go-restful's answer: the route consumes the patch types only.
        message: '415: Unsupported Media Type',
      },
      {
        what: 'a wrong token',
        method: 'GET',
        path: cmPath,
        token: 'wrong',
        code: 401,
        reason: 'Unauthorized',
        message: 'Unauthorized',
      },
      {
        what: 'a field of the wrong type',
        method: 'POST',
        path: cmPath,
        raw: JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'typed' },
          data: ['x'],
        }),
        code: 400,
        reason: 'BadRequest',
        message:
          'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string',
      },
      {
        what: 'a number where a string belongs',
        method: 'POST',
        path: '/apis/apps/v1/namespaces/default/deployments',
        raw: JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'typed' },
          spec: { replicas: 'three' },
        }),
        code: 400,
        reason: 'BadRequest',
        message:
          'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
      },
      {
        what: 'nesting deeper than the decoder allows',
        method: 'POST',
        path: cmPath,
        raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
        code: 400,
        reason: 'BadRequest',
        message: /exceeded max depth/,
      },
      {
        what: 'a namespace that differs from the URL',
        method: 'POST',
        path: cmPath,
        raw: JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'ns', namespace: 'fuzz-a' },
        }),
        code: 400,
        reason: 'BadRequest',
        message: 'the namespace of the provided object does not match the namespace sent on the request',
      },
    ];
    for (const c of cases) {
      const r = await http.send(c.method, c.path, {
        ...(c.raw !== undefined && { raw: c.raw }),
        ...(c.headers && { headers: c.headers }),
        ...(c.token !== undefined && { token: c.token }),
      });
      const where = `${c.what}: ${r.status} ${r.text.slice(0, 400)}`;
      expect(r.status, where).toBe(c.code);
      expect(statusProblems(c.code, r.json), where).toEqual([]);
      expect(r.json.reason, where).toBe(c.reason);
      if (typeof c.message === 'string') expect(r.json.message, where).toBe(c.message);
      else expect(r.json.message, where).toMatch(c.message);
      if (c.causes) {
        expect(
          r.json.details.causes.map((x: { reason: string; field: string }) => ({
            reason: x.reason,
            field: x.field,
          })),
          where,
        ).toEqual(c.causes);
      }
    }
    // None of them stored anything.
    const list = await http.get(`${cmPath}?labelSelector=`);
    expect(list.json.items.map((i: any) => i.metadata.name)).toEqual(['kube-root-ca.crt']);
  });

  it('answers a create carrying a resourceVersion as kube-apiserver does', async () => {
    const r = await http.post('/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'with-rv', resourceVersion: '5' },
    });
    expect(r.status).toBe(500);
    expect(r.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'resourceVersion should not be set on objects to be created',
      code: 500,
    });
    // A resourceVersion that is not a number is ignored, as kube-apiserver's versioner does.
    const ok = await http.post('/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'with-rv', resourceVersion: '-1' },
    });
    expect(ok.status).toBe(201);
    await http.delete('/api/v1/namespaces/default/configmaps/with-rv');
  });
});

describe(`fuzzing with seed ${SEED}`, () => {
  it(`survives ${REQUESTS} random and mutated requests`, async () => {
    const agent = new Agent({ ca: env.cp.clientConfig.caData, keepAlive: true, maxSockets: CONCURRENCY });
    const failures: string[] = [];
    const counts = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= REQUESTS || failures.length >= 20) return;
        let req: FuzzRequest;
        try {
          req = generateRequest(SEED, i);
        } catch (err) {
          failures.push(`#${i} (FUZZ_SEED=${SEED}): the generator failed: ${String(err)}`);
          continue;
        }
        let problems: string[];
        try {
          const a = await send(agent, req);
          counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
          problems = problemsOf(req, a);
        } catch (err) {
          problems = [`request failed: ${String(err)}`];
        }
        if (problems.length > 0)
          failures.push(
            `#${i} (FUZZ_SEED=${SEED}) ${req.describe.slice(0, 600)}\n    → ${problems.join('\n    → ')}`,
          );
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    agent.destroy();
    const summary = [...counts].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}:${n}`);
    expect(failures, `seed ${SEED}; answers ${summary.join(' ')}\n${failures.join('\n')}`).toEqual([]);
    expect(serverErrors, `seed ${SEED}: the server logged errors`).toEqual([]);
    // The run exercised the server rather than bouncing off one error.
    expect(counts.get(200) ?? 0).toBeGreaterThan(REQUESTS / 20);
    expect(counts.get(201) ?? 0).toBeGreaterThan(REQUESTS / 200);
  });

  it('still answers, and everything it stored is consistent', async () => {
    const ready = await http.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.text).toBe('ok');

    const revision = env.cp.store.revision;
    const seen = new Map<string, string>();
    const problems: string[] = [];
    for (const t of env.cp.registry.all()) {
      // Kinds without storage (reviews, bindings, component statuses) keep nothing to check.
      if (t.virtual) continue;
      const prefix = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
      const list = await http.get(`${prefix}/${t.resource}`);
      expect(list.status, `${t.resource}: ${list.text.slice(0, 300)}`).toBe(200);
      expect(Number(list.json.metadata.resourceVersion)).toBeLessThanOrEqual(env.cp.store.revision);
      for (const listed of list.json.items as any[]) {
        const where = `${t.resource} ${listed?.metadata?.namespace ?? ''}/${listed?.metadata?.name}`.slice(
          0,
          200,
        );
        // Items of a built-in list carry no type meta (a typed Go list); clients restore it.
        if (!t.custom && (Object.hasOwn(listed, 'apiVersion') || Object.hasOwn(listed, 'kind')))
          problems.push(`${where}: a built-in list item carries apiVersion/kind`);
        const item = t.custom ? listed : { apiVersion: apiVersionOf(t), kind: t.kind, ...listed };
        for (const p of storedObjectProblems(item)) problems.push(`${where}: ${p}`);
        const rv = item.metadata.resourceVersion as string;
        // One stored object may be served by two APIs (core and events.k8s.io Events).
        const storage = storageOf(t);
        const stored = `${storage.group}/${storage.resource} ${item?.metadata?.namespace ?? ''}/${item?.metadata?.name}`;
        if (seen.has(rv) && seen.get(rv) !== stored)
          problems.push(`${where}: resourceVersion ${rv} also used by ${seen.get(rv)}`);
        seen.set(rv, stored);
        if (Number(rv) > revision)
          problems.push(`${where}: resourceVersion ${rv} > store revision ${revision}`);
        if (item.kind !== t.kind) problems.push(`${where}: kind ${item.kind}`);
        // Typed clients (client-go, kubectl) can decode it: no field of the wrong type got in.
        const typeError = t.definition ? decodeTypeError(item, t.definition) : undefined;
        if (typeError) problems.push(`${where}: ${typeError}`);
        // Each object reads back alone, as JSON and as kubectl's Table (unless its name is too
        // long for a URL: names of RBAC kinds have no length limit).
        if (String(item.metadata.name).length > 2000) continue;
        const path = `${prefix}/${t.namespaced ? `namespaces/${item.metadata.namespace}/` : ''}${t.resource}/${encodeURIComponent(item.metadata.name)}`;
        const one = await http.get(path);
        if (one.status !== 200 || one.json?.metadata?.resourceVersion !== rv)
          problems.push(`${where}: GET answered ${one.status} ${one.text.slice(0, 200)}`);
        const tbl = await http.get(path, {
          headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
        });
        if (tbl.status !== 200 || tbl.json?.kind !== 'Table' || tbl.json.rows?.length !== 1)
          problems.push(`${where}: Table GET answered ${tbl.status} ${tbl.text.slice(0, 200)}`);
      }
      // The HTTP list and the store agree.
      const { group, resource } = storageOf(t);
      const stored = env.cp.store.list(group ? `/${group}/${resource}/` : `/core/${resource}/`);
      expect(list.json.items.length, t.resource).toBe(stored.items.length);
    }
    expect(problems).toEqual([]);
    expect(seen.size).toBeGreaterThan(20);

    // kubectl itself still lists every kind the fuzzer wrote (custom resources only while the
    // fuzzer left their CRD alone).
    const kinds: string[] = [];
    for (const k of KINDS) {
      if ((await http.get(`${k.prefix}/${k.resource}`)).status !== 200) continue;
      kinds.push(k.prefix === '/api/v1' ? k.resource : `${k.resource}.${k.prefix.split('/')[2]}`);
    }
    expect(kinds.length).toBeGreaterThanOrEqual(KINDS.length - 1);
    const out = await env.ok(['get', kinds.join(','), '-A', '-o', 'name']);
    expect(out.split('\n').filter(Boolean).length).toBeGreaterThan(10);
    await env.ok(['get', 'configmaps,pods,deployments,services,namespaces', '-A']);
    await env.ok(['get', '--raw', '/api/v1/namespaces/default']);
  });

  it('delivers a change made after the fuzzing to a watch from the list resourceVersion', async () => {
    const list = await http.get('/api/v1/namespaces/default/configmaps');
    expect(list.status).toBe(200);
    const w = http.watch(
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`,
    );
    try {
      const created = await http.post('/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'after-fuzz' },
        data: { ok: 'yes' },
      });
      expect(created.status).toBe(201);
      const ev = await eventually(
        () => w.events.find((e) => e.object?.metadata?.name === 'after-fuzz'),
        10_000,
        'the ADDED event',
      );
      expect(ev.type).toBe('ADDED');
      expect(ev.object.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
      expect(w.events.filter((e) => e.type === 'ERROR')).toEqual([]);
    } finally {
      w.close();
    }
  });
});
