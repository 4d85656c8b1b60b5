/**
 * One table of cases, both sides: every object is validated locally by the SDK
 * (`Kind.parse`, from the `defineResource` declaration) and sent to the local control plane
 * (which serves the CRD that declaration generated). The verdicts, the error messages and
 * causes, the stored objects (defaults, pruning) and the warnings must be the same.
 */

import {
  type ControlPlane,
  CRDS,
  crPath,
  type Http,
  httpClient,
  startTestEnv,
  waitEstablished,
  warnings,
} from '@kubeloop/server/testing';
import type { ResourceDefinition } from 'kubeloop';
import { ApiError } from 'kubeloop';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdCluster, Foo, FooBar, GenericDaemon, KINDS, Sink } from './kinds.js';

type Obj = Record<string, any>;
type Verdict = 'valid' | 'invalid' | 'bad-request';

interface Case {
  name: string;
  def: ResourceDefinition;
  spec?: unknown;
  /** The whole object, when `spec` is not enough. */
  object?: Obj;
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** A valid object created first; the case is then an update of it to `spec`/`object`. */
  before?: unknown;
  verdict: Verdict;
  /** A fragment of the error message that must be there (checks the verdict is the right one). */
  says?: string;
  /** The warnings the server must send. */
  warns?: string[];
}

const SINK_OK = { name: 'sink', weights: [60, 40], ports: [{ name: 'http' }] };

const CASES: Case[] = [
  // Foo (seed 003)
  { name: 'foo valid', def: Foo, spec: { deploymentName: 'web', replicas: 3 }, verdict: 'valid' },
  {
    name: 'foo replicas above maximum',
    def: Foo,
    spec: { deploymentName: 'web', replicas: 11 },
    verdict: 'invalid',
    says: 'spec.replicas in body should be less than or equal to 10',
  },
  {
    name: 'foo wrong type and missing field',
    def: Foo,
    spec: { replicas: 'three' },
    verdict: 'invalid',
    says: 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
  },
  {
    name: 'foo without spec',
    def: Foo,
    object: {},
    verdict: 'invalid',
    says: 'spec: Required value',
  },
  {
    name: 'foo bad name',
    def: Foo,
    object: { metadata: { name: 'Bad_Name' }, spec: { deploymentName: 'web', replicas: 1 } },
    verdict: 'invalid',
    says: 'metadata.name: Invalid value: "Bad_Name"',
  },
  {
    name: 'foo unknown field, strict',
    def: Foo,
    spec: { deploymentName: 'web', replicas: 1, typo: true },
    fieldValidation: 'Strict',
    verdict: 'bad-request',
    says: 'strict decoding error: unknown field "spec.typo"',
  },
  {
    name: 'foo unknown field, warned and pruned',
    def: Foo,
    spec: { deploymentName: 'web', replicas: 1, typo: true },
    fieldValidation: 'Warn',
    verdict: 'valid',
    warns: ['unknown field "spec.typo"'],
  },
  {
    name: 'foo status is not written on create',
    def: Foo,
    object: { spec: { deploymentName: 'web', replicas: 1 }, status: { availableReplicas: 5 } },
    verdict: 'valid',
  },
  // FooBar
  { name: 'foobar valid', def: FooBar, spec: { target: 'x', message: 'hi' }, verdict: 'valid' },
  {
    name: 'foobar missing target',
    def: FooBar,
    spec: {},
    verdict: 'invalid',
    says: 'spec.target: Required value',
  },
  {
    name: 'foobar empty target',
    def: FooBar,
    spec: { target: '' },
    verdict: 'invalid',
    says: 'spec.target in body should be at least 1 chars long',
  },
  // GenericDaemon
  {
    name: 'genericdaemon valid',
    def: GenericDaemon,
    spec: { image: 'nginx', label: 'web' },
    verdict: 'valid',
  },
  {
    name: 'genericdaemon missing image',
    def: GenericDaemon,
    spec: { label: 'web' },
    verdict: 'invalid',
    says: 'spec.image: Required value',
  },
  // EtcdCluster
  { name: 'etcd valid, version defaulted', def: EtcdCluster, spec: { size: 3 }, verdict: 'valid' },
  {
    name: 'etcd even size',
    def: EtcdCluster,
    spec: { size: 4 },
    verdict: 'invalid',
    says: 'size must be odd',
  },
  {
    name: 'etcd size above maximum skips CEL',
    def: EtcdCluster,
    spec: { size: 9 },
    verdict: 'invalid',
    says: 'spec.size in body should be less than or equal to 7',
  },
  {
    name: 'etcd bad version pattern',
    def: EtcdCluster,
    spec: { size: 1, version: 'latest' },
    verdict: 'invalid',
    says: 'spec.version in body should match',
  },
  {
    name: 'etcd version downgrade (transition rule)',
    def: EtcdCluster,
    before: { size: 3, version: '3.5.0' },
    spec: { size: 3, version: '3.4.0' },
    verdict: 'invalid',
    says: 'version may not be downgraded',
  },
  {
    name: 'etcd version upgrade',
    def: EtcdCluster,
    before: { size: 3, version: '3.5.0' },
    spec: { size: 5, version: '3.6.0' },
    verdict: 'valid',
  },
  // Sink (every feature)
  {
    name: 'sink valid with defaults',
    def: Sink,
    spec: {
      ...SINK_OK,
      ratio: 0.5,
      level: 2,
      data: 'aGVsbG8=',
      args: ['a'],
      endpoint: 'https://example.com',
      memory: '1Gi',
      slug: 'a-b',
      created: '2024-01-02T03:04:05Z',
      id: '8c1f4b9a-5a1e-4a8e-9a39-0c4f7bd5b7d3',
      port: 'http',
      nickname: null,
      tags: ['a', 'b'],
      labels: { a: 'b' },
      selector: { app: 'web' },
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { anything: 1 } },
      extra: { known: 'k', unknown: { deep: true } },
      raw: [1, 'two', { three: 3 }],
      storage: { kind: 'disk', size: 10 },
      limits: { cpu: '500m', pods: 3 },
    },
    verdict: 'valid',
  },
  { name: 'sink int port', def: Sink, spec: { ...SINK_OK, port: 8080 }, verdict: 'valid' },
  {
    name: 'sink port neither int nor string',
    def: Sink,
    spec: { ...SINK_OK, port: 1.5 },
    verdict: 'invalid',
    says: 'spec.port',
  },
  {
    name: 'sink color not in enum',
    def: Sink,
    spec: { ...SINK_OK, color: 'purple' },
    verdict: 'invalid',
    says: 'spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"',
  },
  {
    name: 'sink level not in enum',
    def: Sink,
    spec: { ...SINK_OK, level: 4 },
    verdict: 'invalid',
    says: 'spec.level',
  },
  {
    name: 'sink name pattern and length',
    def: Sink,
    spec: { ...SINK_OK, name: 'TooLongName1' },
    verdict: 'invalid',
    says: 'spec.name',
  },
  {
    name: 'sink replicas odd',
    def: Sink,
    spec: { ...SINK_OK, replicas: 3 },
    verdict: 'invalid',
    says: 'spec.replicas in body should be a multiple of 2',
  },
  {
    name: 'sink ratio at the exclusive bound',
    def: Sink,
    spec: { ...SINK_OK, ratio: 1 },
    verdict: 'invalid',
    says: 'spec.ratio in body should be less than 1',
  },
  {
    name: 'sink data not base64',
    def: Sink,
    spec: { ...SINK_OK, data: 'not base64!' },
    verdict: 'invalid',
    says: 'spec.data',
  },
  {
    name: 'sink weights CEL',
    def: Sink,
    spec: { ...SINK_OK, weights: [10, 20] },
    verdict: 'invalid',
    says: 'weights must add up to 100',
  },
  {
    name: 'sink endpoint CEL',
    def: Sink,
    spec: { ...SINK_OK, endpoint: 'http://example.com' },
    verdict: 'invalid',
    says: 'endpoint must be an https URL',
  },
  {
    name: 'sink memory messageExpression',
    def: Sink,
    spec: { ...SINK_OK, memory: '128Gi' },
    verdict: 'invalid',
    says: 'memory 128Gi is more than 64Gi',
  },
  {
    name: 'sink slug reason Forbidden',
    def: Sink,
    spec: { ...SINK_OK, slug: 'Nope' },
    verdict: 'invalid',
    says: 'spec.slug: Forbidden: slug must be lowercase letters, digits and dashes',
  },
  {
    name: 'sink duplicate set items',
    def: Sink,
    spec: { ...SINK_OK, tags: ['a', 'a'] },
    verdict: 'invalid',
    says: 'spec.tags[1]: Duplicate value: "a"',
  },
  {
    name: 'sink duplicate map keys',
    def: Sink,
    spec: { ...SINK_OK, ports: [{ name: 'http' }, { name: 'http', port: 81 }] },
    verdict: 'invalid',
    says: 'spec.ports[1]: Duplicate value',
  },
  {
    name: 'sink too many labels',
    def: Sink,
    spec: { ...SINK_OK, labels: { a: '1', b: '2', c: '3' } },
    verdict: 'invalid',
    says: 'spec.labels',
  },
  {
    name: 'sink embedded resource metadata',
    def: Sink,
    spec: {
      ...SINK_OK,
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a/b', labels: { 'bad key': 'x' } } },
    },
    verdict: 'invalid',
    says: 'spec.template.metadata.name',
  },
  {
    name: 'sink root rule with fieldPath',
    def: Sink,
    spec: { ...SINK_OK, replicas: 4, maxReplicas: 2 },
    verdict: 'invalid',
    says: 'spec.replicas: Invalid value: "object": replicas must not exceed maxReplicas',
  },
  {
    name: 'sink union alternative without its required field',
    def: Sink,
    spec: { ...SINK_OK, storage: { kind: 'disk' } },
    verdict: 'invalid',
    says: 'spec.storage',
  },
  {
    name: 'sink union with an unknown discriminator',
    def: Sink,
    spec: { ...SINK_OK, storage: { kind: 'tape' } },
    verdict: 'invalid',
    says: 'spec.storage',
  },
  {
    name: 'sink union memory',
    def: Sink,
    spec: { ...SINK_OK, storage: { kind: 'memory' } },
    verdict: 'valid',
  },
  {
    name: 'sink intersection member constraint',
    def: Sink,
    spec: { ...SINK_OK, limits: { pods: -1 } },
    verdict: 'invalid',
    says: 'spec.limits.pods in body should be greater than or equal to 0',
  },
  {
    name: 'sink metadata name restricted by the schema',
    def: Sink,
    object: { metadata: { name: 'a-name-longer-than-twenty' }, spec: SINK_OK },
    verdict: 'invalid',
    says: 'metadata.name',
  },
  {
    name: 'sink immutable field changed',
    def: Sink,
    before: { ...SINK_OK, immutable: 'a' },
    spec: { ...SINK_OK, immutable: 'b' },
    verdict: 'invalid',
    says: 'spec.immutable: Forbidden: immutable is immutable',
  },
  {
    name: 'sink deprecated version warns',
    def: Sink.at('v1beta1'),
    spec: { name: 'old', color: 'any', typo: 1 },
    verdict: 'valid',
    warns: [
      'kitchen.example.com/v1beta1 Sink is deprecated; use kitchen.example.com/v1',
      'unknown field "spec.typo"',
    ],
  },
  {
    name: 'sink deprecated version invalid',
    def: Sink.at('v1beta1'),
    spec: { name: 'x' },
    verdict: 'invalid',
    says: 'spec.name in body should be at least 3 chars long',
    warns: ['kitchen.example.com/v1beta1 Sink is deprecated; use kitchen.example.com/v1'],
  },
  {
    name: 'sink unknown fields ignored',
    def: Sink,
    spec: { ...SINK_OK, nope: 1 },
    fieldValidation: 'Ignore',
    verdict: 'valid',
  },
];

/** An object as a test can compare it: without the fields only the server sets. */
function comparable(obj: Obj): Obj {
  const { uid, resourceVersion, creationTimestamp, generation, managedFields, ...metadata } =
    obj.metadata ?? {};
  return { ...obj, metadata };
}

interface Outcome {
  verdict: Verdict;
  status?: Obj;
  object?: Obj;
  warnings: string[];
}

function verdictOf(code: number): Verdict {
  return code < 300 ? 'valid' : code === 400 ? 'bad-request' : 'invalid';
}

let cp: ControlPlane;
let http: Http;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
  for (const def of Object.values(KINDS)) {
    const crd = def.crd();
    const res = await http.post(CRDS, crd);
    expect(res.status, `${crd.metadata?.name}: ${res.text}`).toBe(201);
  }
  for (const def of Object.values(KINDS)) await waitEstablished(http, def.crd());
});

afterAll(async () => {
  http?.close();
  await cp?.stop();
});

describe('generated CRDs on the local control plane', () => {
  it('are accepted, established and served with their names', async () => {
    for (const def of Object.values(KINDS)) {
      const res = await http.get(`${CRDS}/${def.plural}.${def.group}`);
      expect(res.status).toBe(200);
      const conditions = Object.fromEntries(res.json.status.conditions.map((c: Obj) => [c.type, c.status]));
      expect(conditions).toMatchObject({ NamesAccepted: 'True', Established: 'True' });
      expect(res.json.status.acceptedNames).toMatchObject({ kind: def.kind, plural: def.plural });
    }
    const discovery = await http.get('/apis/kitchen.example.com/v1');
    const sinks = discovery.json.resources.find((r: Obj) => r.name === 'sinks');
    expect(sinks).toMatchObject({
      kind: 'Sink',
      namespaced: true,
      shortNames: ['sk'],
      categories: ['kitchen'],
    });
    expect(discovery.json.resources.map((r: Obj) => r.name).sort()).toEqual([
      'sinks',
      'sinks/scale',
      'sinks/status',
    ]);
    const groups = await http.get('/apis/kitchen.example.com');
    expect(groups.json.versions.map((v: Obj) => v.version)).toEqual(['v1', 'v1beta1']);
  });
});

describe('the same verdicts and messages locally and on the server', () => {
  it.each(CASES.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    const def = c.def;
    const name = `case-${i}`;
    const build = (spec: unknown, object?: Obj): Obj => {
      const o: Obj = { apiVersion: def.apiVersion, kind: def.kind, ...(object ?? {}) };
      o.metadata = { name, ...(object?.metadata ?? {}) };
      if (spec !== undefined) o.spec = spec;
      return o;
    };
    const input = build(c.spec, c.object);
    const path = crPath(def.group, def.version, def.plural);
    const query = c.fieldValidation ? `?fieldValidation=${c.fieldValidation}` : '';

    let old: Obj | undefined;
    if (c.before !== undefined) {
      const created = await http.post(path, build(c.before));
      expect(created.status, created.text).toBe(201);
      old = created.json;
      input.metadata.resourceVersion = old?.metadata.resourceVersion;
    }

    // The server.
    const res = old
      ? await http.put(`${path}/${name}${query}`, input)
      : await http.post(`${path}${query}`, input);
    const server: Outcome = {
      verdict: verdictOf(res.status),
      warnings: warnings(res.headers),
      ...(res.status < 300 ? { object: comparable(res.json) } : { status: res.json }),
    };

    // The SDK, from the declaration alone.
    const sdkWarnings: string[] = [];
    let local: Outcome;
    try {
      const out = def.parse(input, {
        ...(old && { old }),
        ...(c.fieldValidation && { fieldValidation: c.fieldValidation }),
        namespace: 'default',
        warnings: sdkWarnings,
      });
      local = { verdict: 'valid', object: comparable(out as Obj), warnings: sdkWarnings };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      local = {
        verdict: verdictOf(e.code),
        status: e.status as unknown as Obj,
        warnings: sdkWarnings,
      };
    }

    expect(server.verdict, res.text).toBe(c.verdict);
    expect(local).toEqual(server);
    if (c.says) expect(server.status?.message).toContain(c.says);
    expect(server.warnings).toEqual(c.warns ?? []);
  });

  it('covers every kind, valid and invalid', () => {
    for (const def of Object.values(KINDS)) {
      const cases = CASES.filter((c) => c.def.kind === def.kind);
      expect(cases.some((c) => c.verdict === 'valid')).toBe(true);
      expect(cases.some((c) => c.verdict !== 'valid')).toBe(true);
    }
  });
});
