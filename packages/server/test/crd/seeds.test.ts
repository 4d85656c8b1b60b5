/**
 * The seeds' CRDs with the real kubectl, as an operator author meets them: apply the CRD, get
 * with its printer columns, explain, an invalid object rejected with Kubernetes' message,
 * defaults visible, unknown fields pruned (and refused by kubectl's strict validation).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { type Json, seedCrd, seedCrdYaml } from './support.js';

type Seed = 'foobar' | 'foo' | 'genericdaemon' | 'etcdcluster' | 'kitchensink';

interface Case {
  seed: Seed;
  /** A valid object's spec. */
  valid: Json;
  /** What `kubectl get` prints for it (header, then the row without the age). */
  table: RegExp;
  /** The spec as stored, defaults included. */
  stored: Json;
  /** An invalid spec and kubectl's error line. */
  invalid: Json;
  error: string;
  /** A field `kubectl explain <kind>.spec` lists. */
  explains: string;
}

const cases: Case[] = [
  {
    seed: 'foobar',
    valid: { target: 'db' },
    table: /^NAME\s+TARGET\s+AGE\nseed\s+db\s+\d+s\n$/,
    stored: { target: 'db' },
    invalid: { message: 'hi' },
    error: 'The FooBar "bad" is invalid: spec.target: Required value',
    explains: '  target\t<string> -required-',
  },
  {
    seed: 'foo',
    valid: { deploymentName: 'example-foo', replicas: 1 },
    table: /^NAME\s+AGE\nseed\s+\d+s\n$/,
    stored: { deploymentName: 'example-foo', replicas: 1 },
    invalid: { deploymentName: 'example-foo', replicas: 11 },
    error:
      'The Foo "bad" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    explains: '  replicas\t<integer>',
  },
  {
    seed: 'genericdaemon',
    valid: { label: 'web', image: 'nginx' },
    table: /^NAME\s+AGE\nseed\s+\d+s\n$/,
    stored: { label: 'web', image: 'nginx' },
    invalid: { label: 'web' },
    error: 'The GenericDaemon "bad" is invalid: spec.image: Required value',
    explains: '  image\t<string> -required-',
  },
  {
    seed: 'etcdcluster',
    valid: { size: 3 },
    table: /^NAME\s+SIZE\s+VERSION\nseed\s+3\s+3\.5\.0\n$/,
    stored: { size: 3, version: '3.5.0' },
    invalid: { size: 4 },
    error: 'The EtcdCluster "bad" is invalid: spec.size: Invalid value: "integer": size must be odd',
    explains: '  size\t<integer> -required-',
  },
  {
    seed: 'kitchensink',
    valid: { name: 'sink', ratio: 0.5, tags: ['a'], port: 'http' },
    table: /^NAME\s+READY\s+REPLICAS\s+AGE\nseed\s+2\s+\d+s\n$/,
    stored: { name: 'sink', ratio: 0.5, tags: ['a'], port: 'http', color: 'red', replicas: 2 },
    invalid: { name: 'sink', replicas: 4, maxReplicas: 2 },
    error:
      'The Sink "bad" is invalid: spec.replicas: Invalid value: "object": replicas must not exceed maxReplicas',
    explains: '  name\t<string> -required-',
  },
];

let env: KubectlEnv;
beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(async () => {
  await env?.stop();
});

describe.each(cases)('seed CRD $seed through kubectl', (c) => {
  const crd = seedCrd(c.seed);
  const { group, names } = crd.spec;
  const version = crd.spec.versions[0].name;
  const kind: string = names.kind;
  const obj = (name: string, spec: Json) =>
    JSON.stringify({
      apiVersion: `${group}/${version}`,
      kind,
      metadata: { name, namespace: 'default' },
      spec,
    });
  const ref = `${kind.toLowerCase()}.${group}`;

  test('apply and wait for Established', async () => {
    expect(await env.ok(['apply', '-f', '-'], { input: seedCrdYaml(c.seed) })).toBe(
      `customresourcedefinition.apiextensions.k8s.io/${crd.metadata.name} created\n`,
    );
    expect(
      await env.ok(['wait', '--for=condition=Established', `crd/${crd.metadata.name}`, '--timeout=30s']),
    ).toBe(`customresourcedefinition.apiextensions.k8s.io/${crd.metadata.name} condition met\n`);
  });

  test('a valid object: created, defaulted, printed with the printer columns', async () => {
    expect(await env.ok(['apply', '-f', '-'], { input: obj('seed', c.valid) })).toBe(`${ref}/seed created\n`);
    expect(JSON.parse(await env.ok(['get', ref, 'seed', '-o', 'json'])).spec).toEqual(c.stored);
    expect(await env.ok(['get', names.plural])).toMatch(c.table);
    // The short name, where the CRD has one, names the same resource.
    for (const short of names.shortNames ?? [])
      expect(await env.ok(['get', short, '-o', 'name'])).toBe(`${ref}/seed\n`);
  });

  test('an invalid object is rejected with the Kubernetes message', async () => {
    const r = await env.run(['apply', '-f', '-'], { input: obj('bad', c.invalid) });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`${c.error}\n`);
  });

  test('unknown fields: strict kubectl refuses them, --validate=false prunes them', async () => {
    const spec = { ...c.valid, bogusField: 1 };
    const strict = await env.run(['apply', '-f', '-'], { input: obj('unknown', spec) });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toBe(
      `Error from server (BadRequest): error when creating "STDIN": ${kind} in version "${version}" cannot be handled as a ${kind}: strict decoding error: unknown field "spec.bogusField"\n`,
    );
    expect(await env.ok(['create', '--validate=false', '-f', '-'], { input: obj('unknown', spec) })).toBe(
      `${ref}/unknown created\n`,
    );
    expect(JSON.parse(await env.ok(['get', ref, 'unknown', '-o', 'json'])).spec).toEqual(c.stored);
  });

  test('kubectl explain', async () => {
    const out = await env.ok(['explain', `${kind.toLowerCase()}.spec`]);
    expect(out).toMatch(
      new RegExp(`^GROUP:\\s+${group.replaceAll('.', '\\.')}\\nKIND:\\s+${kind}\\nVERSION:\\s+${version}\\n`),
    );
    expect(out).toContain('FIELD: spec <Object>');
    expect(out).toContain(`${c.explains}\n`);
  });
});
