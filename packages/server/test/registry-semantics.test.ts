/**
 * Answers of the registry that real clients compare with a kube-apiserver 1.32: the object a
 * write returns, optimistic locking of patches, the order of managed fields and validation
 * causes, namespace lifecycle and the storage size limit.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { Client, ConfigMap } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../src/index.js';
import { establish, simpleCrd } from './crd/support.js';
import { httpClient } from './http.js';
import { eventually, type KubectlEnv, startKubectlEnv } from './kubectl.js';

let env: KubectlEnv;
let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

const CMS = '/api/v1/namespaces/default/configmaps';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const MERGE = 'application/merge-patch+json';

beforeAll(async () => {
  env = await startKubectlEnv();
  cp = env.cp;
  http = httpClient(cp);
  await establish(http, simpleCrd('widgets', 'Widget'));
});
afterAll(async () => {
  await env.stop();
});

describe('removing the last finalizer of a deleting object', () => {
  for (const [label, base, obj] of [
    ['ConfigMap', CMS, { apiVersion: 'v1', kind: 'ConfigMap', data: { a: '1' } }],
    ['custom resource', WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', spec: { a: 1 } }],
  ] as const) {
    it(`answers the object as finally written (${label}), then it is gone`, async () => {
      const name = `fin-${label === 'ConfigMap' ? 'cm' : 'cr'}`;
      const created = await http.post(base, {
        ...obj,
        metadata: { name, finalizers: ['example.com/a', 'example.com/b'] },
      });
      expect(created.status).toBe(201);
      const deleting = await http.delete(`${base}/${name}`);
      expect(deleting.status).toBe(200);
      const deletionTimestamp = deleting.json.metadata.deletionTimestamp;
      expect(deletionTimestamp).toBeTruthy();

      // A PATCH that removes one finalizer, then a PUT that removes the last one.
      const one = await http.patch(
        `${base}/${name}`,
        [{ op: 'remove', path: '/metadata/finalizers/0' }],
        'application/json-patch+json',
      );
      expect(one.status).toBe(200);
      expect(one.json.metadata.finalizers).toEqual(['example.com/b']);
      const last = await http.put(`${base}/${name}`, {
        ...one.json,
        metadata: { ...one.json.metadata, finalizers: undefined },
      });
      expect(last.status).toBe(200);
      expect(last.json.metadata.finalizers).toBeUndefined();
      expect(last.json.metadata.deletionTimestamp).toBe(deletionTimestamp);
      expect(Number(last.json.metadata.resourceVersion)).toBeGreaterThan(
        Number(one.json.metadata.resourceVersion),
      );
      expect((await http.get(`${base}/${name}`)).status).toBe(404);
    });
  }

  it('answers a merge patch that removes the last finalizer with the object without it', async () => {
    const name = 'fin-patch';
    await http.post(CMS, { metadata: { name, finalizers: ['example.com/a'] } });
    await http.delete(`${CMS}/${name}`);
    const res = await http.patch(`${CMS}/${name}`, { metadata: { finalizers: null } }, MERGE);
    expect(res.status).toBe(200);
    expect(res.json.metadata.finalizers).toBeUndefined();
    expect(res.json.metadata.deletionTimestamp).toBeTruthy();
    expect((await http.get(`${CMS}/${name}`)).status).toBe(404);
  });
});

describe('patches with a resourceVersion (optimistic lock)', () => {
  it('lets exactly one of eight concurrent merge patches with the same resourceVersion win', async () => {
    const created = await http.post(CMS, { metadata: { name: 'locked' }, data: { n: '0' } });
    const rv = created.json.metadata.resourceVersion;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        http.patch(`${CMS}/locked`, { metadata: { resourceVersion: rv }, data: { n: String(i + 1) } }, MERGE),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const conflicts = results.filter((r) => r.status === 409);
    expect(ok).toHaveLength(1);
    expect(conflicts).toHaveLength(7);
    for (const c of conflicts) {
      expect(c.json).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'Operation cannot be fulfilled on configmaps "locked": the object has been modified; please apply your changes to the latest version and try again',
        reason: 'Conflict',
        details: { name: 'locked', kind: 'configmaps' },
        code: 409,
      });
    }
    const final = await http.get(`${CMS}/locked`);
    expect(final.json.data.n).toBe(ok[0]!.json.data.n);
    expect(final.json.metadata.resourceVersion).toBe(ok[0]!.json.metadata.resourceVersion);
  });

  it('refuses stale strategic merge and JSON patches of resourceVersion, and of custom resources', async () => {
    const cm = await http.post(CMS, { metadata: { name: 'locked2' }, data: { n: '0' } });
    const stale = cm.json.metadata.resourceVersion;
    expect((await http.patch(`${CMS}/locked2`, { data: { n: '1' } }, MERGE)).status).toBe(200);
    const smp = await http.patch(
      `${CMS}/locked2`,
      { metadata: { resourceVersion: stale }, data: { n: '2' } },
      'application/strategic-merge-patch+json',
    );
    expect(smp.status).toBe(409);
    const jp = await http.patch(
      `${CMS}/locked2`,
      [
        { op: 'replace', path: '/metadata/resourceVersion', value: stale },
        { op: 'replace', path: '/data/n', value: '3' },
      ],
      'application/json-patch+json',
    );
    expect(jp.status).toBe(409);
    expect((await http.get(`${CMS}/locked2`)).json.data.n).toBe('1');

    const cr = await http.post(WIDGETS, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'locked' },
      spec: { n: 0 },
    });
    const crRv = cr.json.metadata.resourceVersion;
    expect(
      (await http.patch(`${WIDGETS}/locked`, { metadata: { resourceVersion: crRv }, spec: { n: 1 } }, MERGE))
        .status,
    ).toBe(200);
    const crStale = await http.patch(
      `${WIDGETS}/locked`,
      { metadata: { resourceVersion: crRv }, spec: { n: 2 } },
      MERGE,
    );
    expect(crStale.status).toBe(409);
    expect(crStale.json.message).toBe(
      'Operation cannot be fulfilled on widgets.example.com "locked": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('keeps the JSON patch test operation as it is: a failed test is a 422, a current one passes', async () => {
    const cm = await http.post(CMS, { metadata: { name: 'tested' }, data: { n: '0' } });
    const rv = cm.json.metadata.resourceVersion;
    const passed = await http.patch(
      `${CMS}/tested`,
      [
        { op: 'test', path: '/metadata/resourceVersion', value: rv },
        { op: 'replace', path: '/data/n', value: '1' },
      ],
      'application/json-patch+json',
    );
    expect(passed.status).toBe(200);
    const failed = await http.patch(
      `${CMS}/tested`,
      [
        { op: 'test', path: '/data/n', value: '0' },
        { op: 'replace', path: '/data/n', value: '2' },
      ],
      'application/json-patch+json',
    );
    expect(failed.status).toBe(422);
  });
});

describe('namespace lifecycle and Status details', () => {
  it('refuses a create in a terminating namespace with the NamespaceTerminating cause', async () => {
    expect((await http.post('/api/v1/namespaces', { metadata: { name: 'leaving' } })).status).toBe(201);
    // A finalizer keeps the namespace's content, and so the namespace, terminating.
    const held = await http.post('/api/v1/namespaces/leaving/configmaps', {
      metadata: { name: 'held', finalizers: ['example.com/hold'] },
    });
    expect(held.status).toBe(201);
    const deleting = await http.delete('/api/v1/namespaces/leaving');
    expect(deleting.json.status.phase).toBe('Terminating');
    const res = await http.post('/api/v1/namespaces/leaving/configmaps', { metadata: { name: 'late' } });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'configmaps "late" is forbidden: unable to create new content in namespace leaving because it is being terminated',
      reason: 'Forbidden',
      details: {
        name: 'late',
        kind: 'configmaps',
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: 'namespace leaving is being terminated',
            field: 'metadata.namespace',
          },
        ],
      },
      code: 403,
    });
    // generateName: admission sees the object before its name is generated.
    const gen = await http.post('/api/v1/namespaces/leaving/configmaps', {
      metadata: { generateName: 'late-' },
    });
    expect(gen.status).toBe(403);
    expect(gen.json.message).toBe(
      'configmaps "late-" is forbidden: unable to create new content in namespace leaving because it is being terminated',
    );
    expect(gen.json.details.name).toBe('late-');
    // Admission answers before validation: an invalid object gets the namespace's answer too.
    const invalid = await http.post('/api/v1/namespaces/leaving/configmaps', {
      metadata: { name: 'Bad_Name' },
    });
    expect(invalid.status).toBe(403);
    const missing = await http.post('/api/v1/namespaces/nowhere/configmaps', {
      metadata: { name: 'Bad_Name' },
    });
    expect(missing.json.message).toBe('namespaces "nowhere" not found');
    await http.patch('/api/v1/namespaces/leaving/configmaps/held', { metadata: { finalizers: null } }, MERGE);
  });

  it('omits details.name of a Status about an object without a name', async () => {
    const res = await http.post(CMS, { metadata: {} });
    expect(res.status).toBe(422);
    expect(res.json.message).toBe(
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    );
    expect(res.json.details).toEqual({
      kind: 'ConfigMap',
      causes: [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: name or generateName is required',
          field: 'metadata.name',
        },
      ],
    });
    expect(Object.hasOwn(res.json.details, 'name')).toBe(false);
  });
});

describe("etcd's request size limit", () => {
  const TOO_LARGE = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'etcdserver: request is too large',
    code: 500,
  };

  it('refuses a custom resource of 1.6 MB on create and update, changing nothing', async () => {
    const big = 'x'.repeat(1_600_000);
    const created = await http.post(WIDGETS, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'huge' },
      spec: { blob: big },
    });
    expect(created.status).toBe(500);
    expect(created.json).toEqual(TOO_LARGE);
    expect((await http.get(`${WIDGETS}/huge`)).status).toBe(404);

    const small = await http.post(WIDGETS, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'grows' },
      spec: { blob: 'x' },
    });
    expect(small.status).toBe(201);
    const put = await http.put(`${WIDGETS}/grows`, { ...small.json, spec: { blob: big } });
    expect(put.json).toEqual(TOO_LARGE);
    const patched = await http.patch(`${WIDGETS}/grows`, { spec: { blob: big } }, MERGE);
    expect(patched.json).toEqual(TOO_LARGE);
    const after = await http.get(`${WIDGETS}/grows`);
    expect(after.json.metadata.resourceVersion).toBe(small.json.metadata.resourceVersion);
    expect(after.json.spec.blob).toBe('x');

    // kubectl shows the server's message as it is.
    const r = await env.run(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'huge', namespace: 'default' },
        spec: { blob: big },
      }),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toBe(
      'Error from server: error when creating "STDIN": etcdserver: request is too large',
    );
  });

  it('refuses a built-in object too large to store (a ControllerRevision of 1.6 MB)', async () => {
    const res = await http.post('/apis/apps/v1/namespaces/default/controllerrevisions', {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'huge' },
      data: { blob: 'x'.repeat(1_600_000) },
      revision: 1,
    });
    expect(res.json).toEqual(TOO_LARGE);
  });

  it('stores an object without its managed fields when only they make it too large', async () => {
    // 40,000 keys of ~26 bytes: ~1.1 MB of object, and as much again in managed fields.
    const spec: Record<string, number> = {};
    for (let i = 0; i < 40_000; i++) spec[`key-${String(i).padStart(16, '0')}`] = 1;
    const res = await http.post(`${WIDGETS}?fieldManager=writer`, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'many-fields' },
      spec,
    });
    expect(res.status).toBe(201);
    expect(res.json.metadata.managedFields).toBeUndefined();
    expect(Object.keys(res.json.spec)).toHaveLength(40_000);
  });
});

/** Runs a Python script with the official client, configured from the test env's kubeconfig. */
async function python(script: string): Promise<string> {
  const prelude = 'import json, kubernetes\nkubernetes.config.load_kube_config()\n';
  const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', prelude + script], {
    env: { ...process.env, KUBECONFIG: env.kubeconfigPath },
  });
  return stdout;
}

describe('items of lists', () => {
  it('carry no apiVersion/kind in a built-in list, and keep them in a custom resource list', async () => {
    await http.post(CMS, { metadata: { name: 'listed' }, data: { a: '1' } });
    await http.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'listed' } });
    const cms = await http.get(CMS);
    expect(cms.json.kind).toBe('ConfigMapList');
    expect(cms.json.items.length).toBeGreaterThan(0);
    for (const item of cms.json.items) {
      expect(Object.hasOwn(item, 'apiVersion')).toBe(false);
      expect(Object.hasOwn(item, 'kind')).toBe(false);
    }
    const listed = cms.json.items.find((i: any) => i.metadata.name === 'listed');
    expect(listed.data).toEqual({ a: '1' });
    const yaml = await http.get(CMS, { headers: { Accept: 'application/yaml' } });
    expect(yaml.text).not.toMatch(/^ {2}kind: ConfigMap$/m);

    const widgets = await http.get(WIDGETS);
    for (const item of widgets.json.items) {
      expect(item.apiVersion).toBe('example.com/v1');
      expect(item.kind).toBe('Widget');
    }
  });

  it('keeps apiVersion/kind in watch events and Table rows', async () => {
    const list = await http.get(CMS);
    const w = http.watch(`${CMS}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`);
    try {
      await http.post(CMS, { metadata: { name: 'watched' } });
      await eventually(() => w.events.length > 0);
      expect(w.events[0].object.kind).toBe('ConfigMap');
      expect(w.events[0].object.apiVersion).toBe('v1');
    } finally {
      w.close();
    }
    const table = await http.get(`${CMS}?includeObject=Object`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    expect(table.json.rows[0].object.kind).toBe('ConfigMap');
    expect(table.json.rows[0].object.apiVersion).toBe('v1');
  });

  it('are read by kubectl, client-node and the Python client as from a real cluster', async () => {
    await http.post(CMS, { metadata: { name: 'for-clients' }, data: { k: 'v' } });
    const out = JSON.parse(await env.ok(['get', 'configmaps', '-n', 'default', '-o', 'json']));
    // kubectl fills in the type of a typed list's items.
    const item = out.items.find((i: any) => i.metadata.name === 'for-clients');
    expect(item).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } });
    expect(await env.ok(['get', 'configmaps', 'for-clients', '-o', 'name'])).toBe('configmap/for-clients\n');

    const kc = new k8s.KubeConfig();
    kc.loadFromString(cp.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const cmList = await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(cmList.items.find((i) => i.metadata?.name === 'for-clients')?.data).toEqual({ k: 'v' });

    // kubeloop's own client types the items again, as kubectl does.
    const client = new Client(cp.clientConfig);
    try {
      const sdkList = await client.api(ConfigMap, 'default').list();
      expect(sdkList.items.find((i) => i.metadata?.name === 'for-clients')).toMatchObject({
        apiVersion: 'v1',
        kind: 'ConfigMap',
      });
    } finally {
      await client.close();
    }

    const py = JSON.parse(
      await python(
        "l = kubernetes.client.CoreV1Api().list_namespaced_config_map('default')\n" +
          "print(json.dumps([[i.metadata.name, i.kind, i.data] for i in l.items if i.metadata.name == 'for-clients']))",
      ),
    );
    expect(py).toEqual([['for-clients', null, { k: 'v' }]]);
  });
});

describe('validation causes of a custom resource', () => {
  const GADGETS = '/apis/example.com/v1/namespaces/default/gadgets';
  beforeAll(async () => {
    await establish(http, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', kind: 'Gadget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    required: ['zz', 'aa'],
                    'x-kubernetes-validations': [
                      { rule: 'self.b < 0', message: 'b must be negative' },
                      { rule: 'size(self.a) > 10' },
                    ],
                    properties: {
                      y: {
                        type: 'object',
                        properties: { v: { type: 'integer' } },
                        'x-kubernetes-validations': [{ rule: 'self.v > 1', message: 'y too small' }],
                      },
                      c: { type: 'string', pattern: '^x$' },
                      b: { type: 'integer', maximum: 3 },
                      a: { type: 'string', minLength: 5 },
                      x: {
                        type: 'object',
                        properties: { v: { type: 'integer' } },
                        'x-kubernetes-validations': [{ rule: 'self.v > 1', message: 'x too small' }],
                      },
                      zz: { type: 'string' },
                      aa: { type: 'string' },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    });
  });

  it('come as kube-openapi and the CEL validator emit them: properties sorted, required, then rules', async () => {
    const res = await http.post(GADGETS, {
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g' },
      spec: { y: { v: 0 }, c: 'y', x: { v: 0 }, b: 5, a: 'abc', zz: 'z', aa: 'a' },
    });
    expect(res.status).toBe(422);
    expect(res.json.details.causes.map((c: any) => c.field)).toEqual([
      'spec.a',
      'spec.b',
      'spec.c',
      'spec',
      'spec',
      'spec.x',
      'spec.y',
    ]);
    expect(res.json.message).toBe(
      'Gadget.example.com "g" is invalid: [' +
        'spec.a: Invalid value: "abc": spec.a in body should be at least 5 chars long, ' +
        'spec.b: Invalid value: 5: spec.b in body should be less than or equal to 3, ' +
        'spec.c: Invalid value: "y": spec.c in body should match \'^x$\', ' +
        'spec: Invalid value: "object": b must be negative, ' +
        'spec: Invalid value: "object": failed rule: size(self.a) > 10, ' +
        'spec.x: Invalid value: "object": x too small, ' +
        'spec.y: Invalid value: "object": y too small]',
    );
    // kubectl lists the causes, in the server's order.
    const r = await env.run(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'example.com/v1',
        kind: 'Gadget',
        metadata: { name: 'g', namespace: 'default' },
        spec: { y: { v: 0 }, c: 'y', x: { v: 0 }, b: 5, a: 'abc', zz: 'z', aa: 'a' },
      }),
    });
    expect(r.stderr.trim()).toBe(
      [
        'The Gadget "g" is invalid: ',
        ...res.json.details.causes.map((c: any) => `* ${c.field}: ${c.message}`),
      ].join('\n'),
    );
  });

  it('put required fields after the properties, and skip the rules then', async () => {
    const res = await http.post(GADGETS, {
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g2' },
      spec: { c: 'y', b: 5, a: 'abc' },
    });
    expect(res.json.details.causes.map((c: any) => `${c.field}: ${c.message}`)).toEqual([
      'spec.a: Invalid value: "abc": spec.a in body should be at least 5 chars long',
      'spec.b: Invalid value: 5: spec.b in body should be less than or equal to 3',
      'spec.c: Invalid value: "y": spec.c in body should match \'^x$\'',
      'spec.zz: Required value',
      'spec.aa: Required value',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });
});

describe('field paths of a CRD schema error', () => {
  const crdYaml = (key: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bads.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: bads, kind: Bad}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ${key}:
                type: foo
`;
  const unsupported =
    'Unsupported value: "foo": supported values: "array", "boolean", "integer", "number", "object", "string"';

  it('name the property as apiextensions-apiserver does', async () => {
    const r = await env.run(['apply', '-f', '-'], { input: crdYaml('"n"') });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `The CustomResourceDefinition "bads.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].properties[n].type: ${unsupported}`,
    );
  });

  it('show properties[false] for a bare YAML key n, which kubectl itself turns into "false" (YAML 1.1)', async () => {
    // kubectl reads manifests with sigs.k8s.io/yaml (go-yaml v2): `n`, `no`, `off` are false and
    // `y`, `yes`, `on` true, also as keys, so the server (this one or a real one) gets "false".
    const sent = JSON.parse(
      await env.ok(['create', '-f', '-', '--dry-run=client', '-o', 'json'], { input: crdYaml('n') }),
    );
    expect(Object.keys(sent.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties)).toEqual([
      'false',
    ]);
    const r = await env.run(['apply', '-f', '-'], { input: crdYaml('n') });
    expect(r.stderr.trim()).toBe(
      `The CustomResourceDefinition "bads.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].properties[false].type: ${unsupported}`,
    );
  });
});

describe('managedFields', () => {
  /** Go's `sortEncodedManagedFields`: operation, then time (seconds), manager, apiVersion, subresource. */
  const goSorted = (entries: any[]) =>
    [...entries].sort((p, q) => {
      const c = (a = '', b = '') => (a < b ? -1 : a > b ? 1 : 0);
      const secs = (t?: string) => (t ? Math.floor(Date.parse(t) / 1000) : 0);
      return (
        c(p.operation, q.operation) ||
        secs(p.time) - secs(q.time) ||
        c(p.manager, q.manager) ||
        c(p.apiVersion, q.apiVersion) ||
        c(p.subresource, q.subresource)
      );
    });

  it('come sorted as kube-apiserver sorts them, with times written back in UTC seconds', async () => {
    const created = await http.post(`${CMS}?fieldManager=creator`, {
      metadata: { name: 'managed' },
      data: { a: '1', b: '2', c: '3', d: '4', e: '5' },
    });
    const entry = (manager: string, operation: string, time: string, key: string, apiVersion = 'v1') => ({
      manager,
      operation,
      apiVersion,
      time,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { [`f:${key}`]: {} } },
    });
    const res = await http.put(`${CMS}/managed?fieldManager=writer`, {
      ...created.json,
      metadata: {
        ...created.json.metadata,
        managedFields: [
          entry('late', 'Update', '2031-01-01T00:00:00Z', 'a'),
          entry('zeta', 'Apply', '2020-01-01T00:00:00Z', 'b'),
          entry('early', 'Update', '2020-01-01T02:00:00.7+02:00', 'c'),
          entry('alpha', 'Apply', '2020-01-01T00:00:00Z', 'd'),
          entry('early', 'Update', '2020-01-01T00:00:00Z', 'e', 'v0'),
        ],
      },
      data: { ...created.json.data, f: '6' },
    });
    expect(res.status).toBe(200);
    const got = res.json.metadata.managedFields.map((e: any) => [
      e.manager,
      e.operation,
      e.apiVersion,
      e.time,
    ]);
    const now = res.json.metadata.managedFields.find((e: any) => e.manager === 'writer').time;
    expect(got).toEqual([
      ['alpha', 'Apply', 'v1', '2020-01-01T00:00:00Z'],
      ['zeta', 'Apply', 'v1', '2020-01-01T00:00:00Z'],
      ['early', 'Update', 'v0', '2020-01-01T00:00:00Z'],
      ['early', 'Update', 'v1', '2020-01-01T00:00:00Z'],
      ['writer', 'Update', 'v1', now],
      ['late', 'Update', 'v1', '2031-01-01T00:00:00Z'],
    ]);
  });

  it('of several managers (apply, update, status) read back by kubectl in that order', async () => {
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'managed', namespace: 'default', labels: { a: '1' } },
      spec: {
        selector: { matchLabels: { app: 'm' } },
        template: {
          metadata: { labels: { app: 'm' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    };
    await env.ok(['apply', '--server-side', '--field-manager=zz-applier', '-f', '-'], {
      input: JSON.stringify(dep),
    });
    await env.ok(['label', 'deployment', 'managed', 'b=2', '--field-manager=mid-labeler']);
    await env.ok(['annotate', 'deployment', 'managed', 'c=3', '--field-manager=aa-annotator']);
    const base = '/apis/apps/v1/namespaces/default/deployments/managed';
    await http.patch(`${base}/status?fieldManager=st-writer`, { status: { observedGeneration: 7 } }, MERGE);
    await http.patch(
      `${base}/status?fieldManager=ab-status-applier&force=true`,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'managed' },
        status: { collisionCount: 1 },
      },
      'application/apply-patch+yaml',
    );
    const out = JSON.parse(
      await env.ok(['get', 'deployment', 'managed', '-o', 'json', '--show-managed-fields']),
    );
    const entries = out.metadata.managedFields;
    expect(entries.map((e: any) => e.manager).sort()).toEqual(
      ['aa-annotator', 'ab-status-applier', 'mid-labeler', 'st-writer', 'zz-applier'].sort(),
    );
    expect(entries).toEqual(goSorted(entries));
    expect(
      entries
        .filter((e: any) => e.subresource === 'status')
        .map((e: any) => e.manager)
        .sort(),
    ).toEqual(['ab-status-applier', 'st-writer']);
  });
});
