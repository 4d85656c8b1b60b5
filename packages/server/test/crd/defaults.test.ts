/**
 * Defaulting (`default`) on create, on update and when reading from storage, and pruning of
 * unknown fields (a Warning under fieldValidation=Warn, a 400 under Strict, silent under Ignore).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import {
  CRDS,
  crPath,
  establish,
  eventually,
  type Http,
  httpClient,
  type Json,
  seedCrd,
  warnings,
} from './support.js';

const G = 'kitchen.example.com';
const SINKS = crPath(G, 'v1', 'sinks');
const sink = (name: string, spec: Json, extra: Json = {}): Json => ({
  apiVersion: `${G}/v1`,
  kind: 'Sink',
  metadata: { name },
  spec,
  ...extra,
});

let env: KubectlEnv;
let http: Http;
beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
  await establish(http, seedCrd('kitchensink'));
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

describe('defaulting', () => {
  test('on create: scalars, list-map items, and nulls of non-nullable fields', async () => {
    const r = await http.post(SINKS, sink('d1', { name: 'abc', ports: [{ name: 'http' }], color: null }));
    expect(r.status, r.text).toBe(201);
    expect(r.json.spec).toEqual({
      name: 'abc',
      color: 'red',
      replicas: 2,
      ports: [{ name: 'http', port: 80 }],
    });
    expect((await http.get(`${SINKS}/d1`)).json.spec).toEqual(r.json.spec);
  });

  test('on update: a removed defaulted field comes back', async () => {
    const current = (await http.get(`${SINKS}/d1`)).json;
    const { replicas: _r, color: _c, ...rest } = current.spec;
    const r = await http.put(`${SINKS}/d1`, { ...current, spec: { ...rest, name: 'abcd' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.spec).toMatchObject({ name: 'abcd', color: 'red', replicas: 2 });
    const p = await http.patch(`${SINKS}/d1`, { spec: { replicas: null } }, 'application/merge-patch+json');
    expect(p.json.spec.replicas).toBe(2);
  });

  test('kubectl shows the defaults', async () => {
    await env.ok(['apply', '-f', '-'], { input: JSON.stringify(sink('d2', { name: 'xyz' })) });
    expect(JSON.parse(await env.ok(['get', 'sink', 'd2', '-o', 'json'])).spec).toEqual({
      name: 'xyz',
      color: 'red',
      replicas: 2,
    });
    expect(await env.ok(['get', 'sk', 'd2', '-o', 'jsonpath={.spec.replicas}'])).toBe('2');
  });

  test('when reading from storage: an object stored before a default was added shows it', async () => {
    const crd = (await http.get(`${CRDS}/sinks.${G}`)).json;
    const before = await http.post(SINKS, sink('old', { name: 'old' }));
    expect(before.json.spec.enabled).toBeUndefined();
    const rv = before.json.metadata.resourceVersion;

    // The CRD gains a default for a field the stored object does not have.
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.enabled.default = true;
    const put = await http.put(`${CRDS}/sinks.${G}`, crd);
    expect(put.status, put.text).toBe(200);

    const read = await eventually(async () => {
      const r = (await http.get(`${SINKS}/old`)).json;
      return r.spec.enabled === true ? r : undefined;
    });
    // Reading did not write: same resourceVersion.
    expect(read.metadata.resourceVersion).toBe(rv);
    const listed = (await http.get(`${SINKS}?fieldSelector=metadata.name%3Dold`)).json.items[0];
    expect(listed.spec.enabled).toBe(true);
    expect(await env.ok(['get', 'sink', 'old', '-o', 'jsonpath={.spec.enabled}'])).toBe('true');
    const w = http.watch(`${SINKS}?watch=true&fieldSelector=metadata.name%3Dold`);
    try {
      await eventually(() => w.events.length >= 1);
      expect(w.events[0]).toMatchObject({ type: 'ADDED', object: { spec: { enabled: true } } });
    } finally {
      w.close();
    }
    // A merge patch applies to what the client sees and persists the default.
    const p = await http.patch(
      `${SINKS}/old`,
      { metadata: { labels: { a: 'b' } } },
      'application/merge-patch+json',
    );
    expect(p.json.spec.enabled).toBe(true);
    expect(p.json.metadata.resourceVersion).not.toBe(rv);
  });

  test('when reading from storage: fields the schema no longer knows are pruned', async () => {
    await http.post(SINKS, sink('gone', { name: 'gone', nickname: 'nick' }));
    const crd = (await http.get(`${CRDS}/sinks.${G}`)).json;
    delete crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.nickname;
    expect((await http.put(`${CRDS}/sinks.${G}`, crd)).status).toBe(200);
    const read = await eventually(async () => {
      const r = (await http.get(`${SINKS}/gone`)).json;
      return r.spec.nickname === undefined ? r : undefined;
    });
    expect(read.spec.name).toBe('gone');
    // A strict patch of such an object does not trip over the field that is gone.
    const p = await http.patch(
      `${SINKS}/gone?fieldValidation=Strict`,
      { spec: { color: 'blue' } },
      'application/merge-patch+json',
    );
    expect(p.status, p.text).toBe(200);
    expect(p.json.spec.nickname).toBeUndefined();
  });
});

describe('pruning unknown fields', () => {
  test('fieldValidation=Warn (the default of a plain request): pruned, with a Warning per field', async () => {
    const r = await http.post(SINKS, {
      ...sink('p1', { name: 'abc', bogus: 1, ports: [{ name: 'x', extra: true }] }),
      topLevel: 'x',
      status: { phase: 'nope' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.spec).toEqual({
      name: 'abc',
      color: 'red',
      replicas: 2,
      enabled: true, // the default an earlier test added to the CRD
      ports: [{ name: 'x', port: 80 }],
    });
    expect(r.json.topLevel).toBeUndefined();
    expect(warnings(r.headers).sort()).toEqual([
      'unknown field "spec.bogus"',
      'unknown field "spec.ports[0].extra"',
      // Decoding prunes before the status subresource's create strategy drops status.
      'unknown field "status.phase"',
      'unknown field "topLevel"',
    ]);
  });

  test('fieldValidation=Strict: 400 with every unknown field', async () => {
    const r = await http.post(
      `${SINKS}?fieldValidation=Strict`,
      sink('p2', { name: 'abc', bogus: 1, more: 2 }),
    );
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      reason: 'BadRequest',
      message:
        'Sink in version "v1" cannot be handled as a Sink: strict decoding error: unknown field "spec.bogus", unknown field "spec.more"',
    });
    expect((await http.get(`${SINKS}/p2`)).status).toBe(404);
  });

  test('fieldValidation=Ignore: pruned silently', async () => {
    const r = await http.post(`${SINKS}?fieldValidation=Ignore`, sink('p3', { name: 'abc', bogus: 1 }));
    expect(r.status).toBe(201);
    expect(r.json.spec.bogus).toBeUndefined();
    expect(r.headers.warning).toBeUndefined();
  });

  test('x-kubernetes-preserve-unknown-fields and embedded resources keep their fields', async () => {
    const r = await http.post(
      `${SINKS}?fieldValidation=Strict`,
      sink('p4', {
        name: 'abc',
        extra: { known: 'k', free: { form: [1] } },
        template: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p', labels: { a: 'b' } },
          spec: { any: 1 },
        },
      }),
    );
    expect(r.status, r.text).toBe(201);
    expect(r.json.spec.extra).toEqual({ known: 'k', free: { form: [1] } });
    expect(r.json.spec.template).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', labels: { a: 'b' } },
      spec: { any: 1 },
    });
  });

  test('kubectl: apply is strict, --validate=false prunes', async () => {
    const strict = await env.run(['apply', '-f', '-'], {
      input: JSON.stringify(sink('k1', { name: 'abc', bogus: 1 })),
    });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toBe(
      'Error from server (BadRequest): error when creating "STDIN": Sink in version "v1" cannot be handled as a Sink: strict decoding error: unknown field "spec.bogus"\n',
    );
    const lax = await env.run(['create', '--validate=false', '-f', '-'], {
      input: JSON.stringify(sink('k1', { name: 'abc', bogus: 1 })),
    });
    expect(lax.code, lax.stderr).toBe(0);
    expect(JSON.parse(await env.ok(['get', 'sink', 'k1', '-o', 'json'])).spec.bogus).toBeUndefined();
    const warn = await env.run(['create', '--validate=warn', '-f', '-'], {
      input: JSON.stringify(sink('k2', { name: 'abc', bogus: 1 })),
    });
    expect(warn.code, warn.stderr).toBe(0);
    expect(warn.stderr).toBe('Warning: unknown field "spec.bogus"\n');
  });
});
