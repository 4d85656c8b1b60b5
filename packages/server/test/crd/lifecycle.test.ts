/**
 * The life of a CRD after creation: updates (new versions and schemas; scope, group and plural
 * immutable), deletion (every custom resource goes first, resources with finalizers make it
 * wait, no creates meanwhile), and `kubectl explain` of the published schema.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import {
  CRDS,
  condition,
  crPath,
  establish,
  eventually,
  type Http,
  httpClient,
  type Json,
  seedCrd,
  seedCrdYaml,
  simpleCrd,
} from './support.js';

let env: KubectlEnv;
let http: Http;
beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

const G = 'life.example.com';

describe('updating a CRD', () => {
  test('scope, group and plural cannot change; kind neither once established', async () => {
    const crd = await establish(http, simpleCrd('boxes', 'Box', G));
    const change = async (f: (c: Json) => void) => {
      const c = structuredClone(crd);
      f(c);
      const r = await http.put(`${CRDS}/boxes.${G}`, c);
      expect(r.status, r.text).toBe(422);
      return r.json.details.causes.map((x: Json) => `${x.field}: ${x.message}`);
    };
    expect(await change((c) => (c.spec.scope = 'Cluster'))).toEqual([
      'spec.scope: Invalid value: "Cluster": field is immutable',
    ]);
    expect(await change((c) => (c.spec.names.kind = 'Crate'))).toEqual([
      'spec.names.kind: Invalid value: "Crate": field is immutable',
    ]);
    // An update checks ObjectMeta as an update (the name is immutable), not against plural.group.
    expect(await change((c) => (c.spec.group = 'other.example.com'))).toEqual([
      'spec.group: Invalid value: "other.example.com": field is immutable',
    ]);
    expect(await change((c) => (c.spec.names.plural = 'crates'))).toEqual([
      'spec.names.plural: Invalid value: "crates": field is immutable',
    ]);
  });

  test('a new schema applies to new writes; existing objects stay readable', async () => {
    const path = crPath(G, 'v1', 'boxes');
    expect(
      (
        await http.post(path, {
          apiVersion: `${G}/v1`,
          kind: 'Box',
          metadata: { name: 'big' },
          spec: { size: 50 },
        })
      ).status,
    ).toBe(201);
    const crd = (await http.get(`${CRDS}/boxes.${G}`)).json;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = {
      type: 'object',
      properties: { size: { type: 'integer', maximum: 10 } },
    };
    crd.spec.versions[0].additionalPrinterColumns = [
      { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
    ];
    const put = await http.put(`${CRDS}/boxes.${G}`, crd);
    expect(put.status, put.text).toBe(200);
    expect(put.json.metadata.generation).toBe(2);
    const rejected = await eventually(async () => {
      const r = await http.post(path, {
        apiVersion: `${G}/v1`,
        kind: 'Box',
        metadata: { name: 'huge' },
        spec: { size: 50 },
      });
      return r.status === 422 ? r : undefined;
    });
    expect(rejected.json.message).toBe(
      `Box.${G} "huge" is invalid: spec.size: Invalid value: 50: spec.size in body should be less than or equal to 10`,
    );
    expect((await http.get(`${path}/big`)).json.spec.size).toBe(50);
    // Ratcheting: the unchanged invalid value does not block an unrelated change.
    const relabel = await http.patch(
      `${path}/big`,
      { metadata: { labels: { a: 'b' } } },
      'application/merge-patch+json',
    );
    expect(relabel.status, relabel.text).toBe(200);
    // The new printer columns are used.
    expect(await env.ok(['get', `boxes.${G}`, 'big'])).toMatch(/^NAME\s+SIZE\nbig\s+50\n$/);
  });

  test('a new served version appears in discovery and is served', async () => {
    const crd = (await http.get(`${CRDS}/boxes.${G}`)).json;
    crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v2', storage: false });
    const put = await http.put(`${CRDS}/boxes.${G}`, crd);
    expect(put.status, put.text).toBe(200);
    await eventually(
      async () => (await http.get(crPath(G, 'v2', 'boxes'))).status === 200,
      10_000,
      'v2 served',
    );
    expect((await http.get(`/apis/${G}`)).json.versions.map((v: Json) => v.version)).toEqual(['v2', 'v1']);
    expect((await http.get(crPath(G, 'v2', 'boxes', 'big'))).json.apiVersion).toBe(`${G}/v2`);
    // Unserving it again.
    const again = (await http.get(`${CRDS}/boxes.${G}`)).json;
    again.spec.versions[1].served = false;
    expect((await http.put(`${CRDS}/boxes.${G}`, again)).status).toBe(200);
    await eventually(
      async () => (await http.get(crPath(G, 'v2', 'boxes'))).status === 404,
      10_000,
      'v2 unserved',
    );
  });
});

describe('deleting a CRD', () => {
  test('deletes every custom resource first, waiting for their finalizers; no creates meanwhile', async () => {
    await establish(http, simpleCrd('crates', 'Crate', G));
    const path = (ns: string) => crPath(G, 'v1', 'crates', undefined, ns);
    await http.post('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'other' },
    });
    for (const [ns, name, finalizers] of [
      ['default', 'c1', undefined],
      ['default', 'c2', ['example.com/hold']],
      ['other', 'c3', undefined],
    ] as const) {
      const r = await http.post(path(ns), {
        apiVersion: `${G}/v1`,
        kind: 'Crate',
        metadata: { name, ...(finalizers && { finalizers }) },
        spec: {},
      });
      expect(r.status, r.text).toBe(201);
    }
    const rv = (await http.get(`/apis/${G}/v1/crates`)).json.metadata.resourceVersion;
    const w = http.watch(`/apis/${G}/v1/crates?watch=true&resourceVersion=${rv}`);
    try {
      const del = await http.delete(`${CRDS}/crates.${G}`);
      expect(del.status).toBe(200);
      expect(del.json.metadata.deletionTimestamp).toBeTruthy();
      expect(del.json.metadata.finalizers).toEqual(['customresourcecleanup.apiextensions.k8s.io']);

      // Resources without finalizers go; the one with a finalizer waits with a deletionTimestamp.
      await eventually(
        async () => (await http.get(`/apis/${G}/v1/crates`)).json.items.length === 1,
        10_000,
        'two crates deleted',
      );
      const held = (await http.get(`${path('default')}/c2`)).json;
      expect(held.metadata.deletionTimestamp).toBeTruthy();
      const crd = (await http.get(`${CRDS}/crates.${G}`)).json;
      expect(condition(crd, 'Terminating')).toMatchObject({
        status: 'True',
        reason: 'InstanceDeletionInProgress',
        message: 'CustomResource deletion is in progress',
      });
      const refused = await http.post(path('default'), {
        apiVersion: `${G}/v1`,
        kind: 'Crate',
        metadata: { name: 'late' },
        spec: {},
      });
      expect(refused.status).toBe(405);
      expect(refused.json).toMatchObject({
        reason: 'MethodNotAllowed',
        message: 'create not allowed while custom resource definition is terminating',
      });

      // Releasing the finalizer lets the resource, then the CRD, go.
      const released = await http.patch(
        `${path('default')}/c2`,
        { metadata: { finalizers: null } },
        'application/merge-patch+json',
      );
      expect(released.status, released.text).toBe(200);
      await eventually(
        async () => (await http.get(`${CRDS}/crates.${G}`)).status === 404,
        10_000,
        'the CRD to go',
      );
      expect((await http.get(`/apis/${G}/v1/crates`)).status).toBe(404);
      const resources = (await http.get(`/apis/${G}/v1`)).json.resources.map((r: Json) => r.name);
      expect(resources).toEqual(['boxes']);
      await eventually(
        () => w.events.filter((e) => e.type === 'DELETED').length >= 3,
        10_000,
        'three DELETED events',
      );
      expect(
        w.events
          .filter((e) => e.type === 'DELETED')
          .map((e) => e.object.metadata.name)
          .sort(),
      ).toEqual(['c1', 'c2', 'c3']);
    } finally {
      w.close();
    }
  });

  test('kubectl delete crd waits for its resources and the CRD to be gone', async () => {
    await env.ok(['apply', '-f', '-'], { input: seedCrdYaml('genericdaemon') });
    await env.ok(['wait', '--for=condition=Established', 'crd/genericdaemons.mydomain.com', '--timeout=30s']);
    await env.ok(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'mydomain.com/v1beta1',
        kind: 'GenericDaemon',
        metadata: { name: 'gd1', namespace: 'default' },
        spec: { image: 'nginx' },
      }),
    });
    expect(await env.ok(['delete', 'crd', 'genericdaemons.mydomain.com'])).toBe(
      'customresourcedefinition.apiextensions.k8s.io "genericdaemons.mydomain.com" deleted\n',
    );
    expect((await http.get(`${CRDS}/genericdaemons.mydomain.com`)).status).toBe(404);
    const r = await env.run(['get', 'gd']);
    expect(r.code).toBe(1);
  });

  test('a CRD recreated after deletion starts empty', async () => {
    await establish(http, seedCrd('genericdaemon'));
    expect((await http.get(crPath('mydomain.com', 'v1beta1', 'genericdaemons'))).json.items).toEqual([]);
  });
});

describe('kubectl explain', () => {
  test('a seed CRD field, with the schema’s types and required fields', async () => {
    await env.ok(['apply', '-f', '-'], { input: seedCrdYaml('foo') });
    await env.ok([
      'wait',
      '--for=condition=Established',
      'crd/foos.samplecontroller.k8s.io',
      '--timeout=30s',
    ]);
    const spec = await env.ok(['explain', 'foo.spec']);
    expect(spec).toBe(
      [
        'GROUP:      samplecontroller.k8s.io',
        'KIND:       Foo',
        'VERSION:    v1alpha1',
        '',
        'FIELD: spec <Object>',
        '',
        '',
        'DESCRIPTION:',
        '    <empty>',
        'FIELDS:',
        '  deploymentName\t<string>',
        '    <no description>',
        '',
        '  replicas\t<integer>',
        '    <no description>',
        '',
        '',
        '',
      ].join('\n'),
    );
    const kitchen = seedCrd('kitchensink');
    kitchen.spec.versions[0].schema.openAPIV3Schema.properties.spec.description = 'What the sink should be.';
    kitchen.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.name.description =
      'The sink’s name.';
    await establish(http, kitchen);
    const sink = await env.ok(['explain', 'sink.spec']);
    expect(sink).toContain('FIELD: spec <Object>\n\n\nDESCRIPTION:\n    What the sink should be.\n');
    expect(sink).toContain('  name\t<string> -required-\n    The sink’s name.\n');
    expect(sink).toContain('  ports\t<[]Object>\n');
    expect(sink).toContain('  labels\t<map[string]string>\n');
    expect(sink).toContain('  color\t<string>\n  enum: red, green, blue\n');
    expect(await env.ok(['explain', 'sink.spec.ports.port'])).toContain('FIELD: port <integer>\n');
  });
});
