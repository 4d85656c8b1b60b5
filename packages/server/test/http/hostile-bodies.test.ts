/**
 * Hostile request bodies: nesting deep enough to exhaust the stack, in every content type, and
 * YAML aliases (self-reference, "billion laughs"). The server answers a `Status` and keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/http/body.js';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { encodeProtobufObject } from '../../src/protobuf/index.js';
import { ProtoWriter } from '../../src/protobuf/wire.js';
import { establish } from '../../src/testing/index.js';
import { MAX_YAML_DEPTH } from '../../src/util/yaml.js';
import { WIDGET_CRD } from '../fuzz-gen.js';
import { httpClient } from '../http.js';
import { statusProblems } from '../status-check.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
  const r = await http.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' } });
  expect(r.status).toBe(201);
  await establish(http, WIDGET_CRD);
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
      `${n} levels: %s answers a 400/422 Status (DELETE: the handler's plain 500, as kube's)`,
      async (_what, method, path, type, raw) => {
        const r = await http.send(method, path, { raw, headers: { 'Content-Type': type } });
        // The delete handler passes its body's decoding error on as it is: a 500 without a reason.
        expect(method === 'DELETE' ? [500] : [400, 422], r.text.slice(0, 300)).toContain(r.status);
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

describe('nesting up to the JSON limit is stored (spec.extra keeps unknown fields)', () => {
  const W = '/apis/fuzz.example.com/v1/namespaces/default/widgets';
  // spec.extra.d holds n levels: the object nests n + 3 levels.
  const widget = (name: string, deep: string) =>
    `{"apiVersion":"fuzz.example.com/v1","kind":"Widget","metadata":{"name":"${name}"},"spec":{"color":"red","extra":{"d":${deep}}}}`;
  const n = MAX_JSON_DEPTH - 3;
  /** The nesting of spec.extra.d as stored (walked without recursion). */
  const depthOf = (v: unknown): number => {
    let depth = 0;
    while (v !== null && typeof v === 'object') {
      depth++;
      v = Array.isArray(v) ? v[0] : (v as Record<string, unknown>).a;
    }
    return depth;
  };
  const storedDepth = async (name: string) => depthOf((await http.get(`${W}/${name}`)).json.spec.extra.d);

  it('a server-side apply written as JSON (as client-go sends it) is held to the JSON limit, not YAML’s', async () => {
    // The applied object's managedFields describe spec.extra.d's maps 5 levels deeper than they
    // are (metadata.managedFields[0].fieldsV1 → f:spec → f:extra → f:d), and count too.
    const m = n - 5;
    expect(m).toBeGreaterThan(MAX_YAML_DEPTH);
    const r = await http.send('PATCH', `${W}/applied?fieldManager=t`, {
      raw: widget('applied', maps(m)),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(r.status, r.text.slice(0, 300)).toBe(201);
    expect(await storedDepth('applied')).toBe(m);
    // Once more over itself (every SSA walk over the live object too), then one level too deep.
    const again = await http.send('PATCH', `${W}/applied?fieldManager=u&force=true`, {
      raw: widget('applied', seqs(n)),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(again.status, again.text.slice(0, 300)).toBe(200);
    const over = await http.send('PATCH', `${W}/applied?fieldManager=t`, {
      raw: widget('applied', maps(n + 1)),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(over.status).toBe(400);
    expect(over.json.message).toBe(
      `error decoding YAML: error converting YAML to JSON: yaml: exceeded max depth of ${MAX_JSON_DEPTH}`,
    );
  });

  it('a YAML create written as JSON is held to the JSON limit; block YAML to the YAML limit', async () => {
    const r = await http.send('POST', W, {
      raw: widget('yaml-json', seqs(n)),
      headers: { 'Content-Type': 'application/yaml' },
    });
    expect(r.status, r.text.slice(0, 300)).toBe(201);
    expect(await storedDepth('yaml-json')).toBe(n);
    const block = `apiVersion: fuzz.example.com/v1\nkind: Widget\nmetadata:\n  name: yaml-block\nspec:\n  color: red\n  extra:\n    d:\n      ${'- '.repeat(MAX_YAML_DEPTH)}1\n`;
    const refused = await http.send('POST', W, {
      raw: block,
      headers: { 'Content-Type': 'application/yaml' },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.message).toMatch(`exceeded max depth of ${MAX_YAML_DEPTH}`);
  });

  it('merge, strategic-less and JSON patches of arrays nested to the limit are applied', async () => {
    expect((await http.send('POST', W, { raw: widget('patched', '1') })).status).toBe(201);
    const merge = await http.send('PATCH', `${W}/patched`, {
      raw: `{"spec":{"extra":{"d":${seqs(n)}}}}`,
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(merge.status, merge.text.slice(0, 300)).toBe(200);
    expect(await storedDepth('patched')).toBe(n);
    const json = await http.send('PATCH', `${W}/patched`, {
      raw: `[{"op":"replace","path":"/spec/extra/d","value":${maps(n)}}]`,
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    expect(json.status, json.text.slice(0, 300)).toBe(200);
  });

  it('duplicate keys of an apply written as JSON are refused under Strict in go-yaml’s words', async () => {
    const r = await http.send('PATCH', `${W}/dups?fieldManager=t&fieldValidation=Strict`, {
      raw: '{"apiVersion":"fuzz.example.com/v1","kind":"Widget",\n"metadata":{"name":"dups"},\n"spec":{"color":"red","color":"blue"}}',
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(r.status).toBe(400);
    expect(r.json.message).toBe(
      'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 3: key "color" already set in map',
    );
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
