/**
 * Hostile request bodies: nesting deep enough to exhaust the stack, in every content type, and
 * YAML aliases (self-reference, "billion laughs"). The server answers a `Status` and keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { encodeProtobufObject } from '../../src/protobuf/index.js';
import { ProtoWriter } from '../../src/protobuf/wire.js';
import { httpClient } from '../http.js';
import { statusProblems } from '../status-check.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
  const r = await http.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' } });
  expect(r.status).toBe(201);
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

const CM = '/api/v1/namespaces/default/configmaps';
const seqs = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const maps = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const dashes = (n: number, indent: string) =>
  Array.from({ length: Math.min(n, 1) }, () => `${indent}${'- '.repeat(n)}1`).join('');
const cm = (name: string, deep: string) =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"x":${deep}}`;

/** The requests to try, for a nesting of n levels. */
const cases = (n: number): [string, string, string, string][] => [
  ['POST', CM, 'application/json', cm(`deep-json-${n}`, seqs(n))],
  ['POST', CM, 'application/json', cm(`deep-json-map-${n}`, maps(n))],
  ['POST', CM, 'application/yaml', cm(`deep-yaml-${n}`, seqs(n))],
  [
    'POST',
    CM,
    'application/yaml',
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep-block-${n}\nx:\n${dashes(n, '  ')}\n`,
  ],
  ['PUT', `${CM}/target`, 'application/json', cm('target', maps(n))],
  ['PATCH', `${CM}/target`, 'application/merge-patch+json', `{"x":${maps(n)}}`],
  ['PATCH', `${CM}/target`, 'application/strategic-merge-patch+json', `{"x":${seqs(n)}}`],
  ['PATCH', `${CM}/target`, 'application/json-patch+json', `[{"op":"add","path":"/x","value":${maps(n)}}]`],
  ['PATCH', `${CM}/target?fieldManager=t`, 'application/apply-patch+yaml', cm('target', maps(n))],
  [
    'PATCH',
    `${CM}/target?fieldManager=t`,
    'application/apply-patch+yaml',
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: target\nx:\n${dashes(n, '  ')}\n`,
  ],
  ['DELETE', `${CM}/absent`, 'application/json', `{"kind":"DeleteOptions","x":${seqs(n)}}`],
];

async function alive(): Promise<void> {
  expect((await http.get('/api/v1/namespaces/default/configmaps/target')).status).toBe(200);
}

describe('deep nesting', () => {
  for (const n of [1_000, 10_000, 100_000]) {
    it.each(cases(n).map((c) => [`${c[0]} ${c[2]}`, ...c] as const))(
      `${n} levels: %s answers a 400/422 Status`,
      async (_what, method, path, type, raw) => {
        const r = await http.send(method, path, { raw, headers: { 'Content-Type': type } });
        expect([400, 422], r.text.slice(0, 300)).toContain(r.status);
        expect(statusProblems(r.status, r.json), r.text.slice(0, 300)).toEqual([]);
        expect(r.json.message).toMatch(/exceeded max depth|nested deeper/);
        await alive();
      },
    );
  }

  it.each(cases(400).map((c) => [`${c[0]} ${c[2]}`, ...c] as const))(
    '400 levels (under every limit): %s is answered',
    async (_what, method, path, type, raw) => {
      const r = await http.send(method, path, { raw, headers: { 'Content-Type': type } });
      // Stored with a warning, or refused by the schema (apply of an undeclared field is a 500
      // in Kubernetes too: "failed to create typed patch object"); never a dropped connection.
      expect(r.json, r.text.slice(0, 300)).toBeDefined();
      if (r.status >= 400) expect(statusProblems(r.status, r.json), r.text.slice(0, 300)).toEqual([]);
      await alive();
    },
  );

  it.each([1_000, 10_000, 100_000])('protobuf nested %s levels answers a 400 Status', async (n) => {
    // A CustomResourceDefinition whose schema nests `not` (JSONSchemaProps field 28) n times.
    const schema = nestedNot(n);
    const crd = encodeProtobufObject({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'deeps.example.com' },
    });
    // Append spec (2) → versions (7) → { name (1), schema (4) → openAPIV3Schema (1) } to the envelope's raw.
    const str = (no: number, s: string) => new ProtoWriter().bytes(no, Buffer.from(s)).finish();
    const msg = (no: number, ...parts: Buffer[]) =>
      new ProtoWriter().bytes(no, Buffer.concat(parts)).finish();
    const spec = msg(2, msg(7, str(1, 'v1'), msg(4, msg(1, schema))));
    const body = reEnvelope(crd, spec);
    const r = await http.send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      raw: body,
      headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
    });
    expect(r.status, r.text.slice(0, 300)).toBe(400);
    expect(statusProblems(400, r.json)).toEqual([]);
    expect(r.json.message).toMatch(/nested deeper/);
    await alive();
  });
});

/** JSONSchemaProps.not (field 28) nested n times, written in one pass (nesting by copying is quadratic). */
function nestedNot(n: number): Buffer {
  const varintLength = (v: number) =>
    v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
  // lengths[i]: the size of the message nested i levels deep (lengths[0]: the innermost, empty).
  const lengths = [0];
  for (let i = 1; i < n; i++) lengths.push(2 + varintLength(lengths[i - 1]!) + lengths[i - 1]!);
  const out = Buffer.alloc(2 + varintLength(lengths[n - 1]!) + lengths[n - 1]!);
  let at = 0;
  for (let i = n - 1; i >= 0; i--) {
    out[at++] = 0xe2; // field 28, wire type 2
    out[at++] = 0x01;
    let v = lengths[i]!;
    while (v >= 0x80) {
      out[at++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    out[at++] = v;
  }
  return out;
}

/** The envelope of `encoded` with `extra` appended to the object's bytes (its `raw`, field 2). */
function reEnvelope(encoded: Buffer, extra: Buffer): Buffer {
  // k8s\0, then runtime.Unknown { typeMeta (1), raw (2), contentEncoding (3), contentType (4) }.
  let at = 4;
  const fields: [number, Buffer][] = [];
  while (at < encoded.length) {
    const key = encoded[at++]!;
    let len = 0;
    let shift = 0;
    for (;;) {
      const b = encoded[at++]!;
      len += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) break;
    }
    fields.push([key >> 3, encoded.subarray(at, at + len)]);
    at += len;
  }
  const w = new ProtoWriter();
  for (const [no, bytes] of fields) w.bytes(no, no === 2 ? Buffer.concat([bytes, extra]) : bytes);
  return Buffer.concat([encoded.subarray(0, 4), w.finish()]);
}

describe('YAML aliases', () => {
  it.each([
    [
      'an anchor holding itself (flow)',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: self\nx: &a [*a]\n',
      "anchor 'a' value contains itself",
    ],
    [
      'an anchor holding itself (block)',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: self\n  x: *m\n',
      "anchor 'm' value contains itself",
    ],
  ])('%s: 400', async (_what, yaml, message) => {
    for (const [method, path, type] of [
      ['POST', CM, 'application/yaml'],
      ['PATCH', `${CM}/self?fieldManager=t`, 'application/apply-patch+yaml'],
    ] as const) {
      const r = await http.send(method, path, { raw: yaml, headers: { 'Content-Type': type } });
      expect(r.status, r.text).toBe(400);
      expect(statusProblems(400, r.json)).toEqual([]);
      expect(r.json.message).toContain(message);
    }
    await alive();
  });

  it('a billion laughs: 400', async () => {
    let yaml =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\nl0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    for (let i = 1; i < 10; i++)
      yaml += `l${i}: &l${i} [${Array(10)
        .fill(`*l${i - 1}`)
        .join(',')}]\n`;
    for (const [method, path, type] of [
      ['POST', CM, 'application/yaml'],
      ['PATCH', `${CM}/lol?fieldManager=t`, 'application/apply-patch+yaml'],
    ] as const) {
      const r = await http.send(method, path, { raw: yaml, headers: { 'Content-Type': type } });
      expect(r.status, r.text).toBe(400);
      expect(r.json.message).toContain('excessive aliasing');
    }
    await alive();
  });
});
