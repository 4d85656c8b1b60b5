/**
 * Server-side apply and managed fields over HTTP: the apply patch type (YAML bodies, creation,
 * dry run, subresources, option checks, errors) and the Update entries every other write records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../src/index.js';
import { httpClient } from './http.js';

const CM = '/api/v1/namespaces/default/configmaps';
const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';
const APPLY = 'application/apply-patch+yaml';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;
beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
});
afterAll(async () => {
  http.close();
  await cp.stop();
});

const applyYaml = (
  path: string,
  yaml: string,
  query = 'fieldManager=ci',
  headers: Record<string, string> = {},
) => http.send('PATCH', `${path}?${query}`, { raw: yaml, headers: { 'Content-Type': APPLY, ...headers } });
const managers = (obj: any) =>
  (obj.metadata.managedFields ?? []).map((e: any) => `${e.manager}/${e.operation}`);

const deployment = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'web', image: 'nginx:1' }] },
    },
  },
});

describe('the apply patch type', () => {
  it('creates from a YAML body with 201, then answers 200', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\ndata:\n  enabled: "yes"\n';
    const created = await applyYaml(`${CM}/y1`, yaml);
    expect(created.status).toBe(201);
    expect(created.json.data).toEqual({ enabled: 'yes' });
    expect(managers(created.json)).toEqual(['ci/Apply']);
    const again = await applyYaml(`${CM}/y1`, yaml);
    expect(again.status).toBe(200);
    expect(again.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
  });

  it('persists nothing with dryRun=All', async () => {
    const r = await applyYaml(
      `${CM}/dry`,
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' } }),
      'fieldManager=ci&dryRun=All',
    );
    expect(r.status).toBe(201);
    expect((await http.get(`${CM}/dry`)).status).toBe(404);
  });

  it.each<[string, string, string, number, string]>([
    [
      'no fieldManager',
      '',
      '{}',
      422,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    ],
    [
      'a fieldManager over 128 bytes',
      `fieldManager=${'m'.repeat(129)}`,
      '{}',
      422,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
    ],
    ['a body that is not YAML', 'fieldManager=ci', 'a: [', 400, 'error decoding YAML: '],
    [
      'another kind',
      'fieldManager=ci',
      '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"bad"}}',
      400,
      'invalid object type: /v1, Kind=Secret',
    ],
    [
      'an unknown field',
      'fieldManager=ci',
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad"},"spec":{}}',
      500,
      'failed to create typed patch object (/bad; /v1, Kind=ConfigMap): .spec: field not declared in schema',
    ],
    [
      'a name other than the URL',
      'fieldManager=ci',
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}',
      400,
      'the name of the object (other) does not match the name on the URL (bad)',
    ],
  ])('refuses %s', async (_name, query, body, code, message) => {
    const r = await applyYaml(`${CM}/bad`, body, query);
    expect(r.status).toBe(code);
    expect(r.json.message).toContain(message);
  });

  it('refuses force on other patch types', async () => {
    await http.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'forced' } });
    const r = await http.patch(
      `${CM}/forced?force=true`,
      { data: { a: 'b' } },
      'application/merge-patch+json',
    );
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    );
  });

  it('applies to /status of an existing object only', async () => {
    const missing = await applyYaml(
      `${DEPLOY}/nope/status`,
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'nope' },
        status: { replicas: 1 },
      }),
    );
    expect(missing.status).toBe(404);
    expect((await applyYaml(`${DEPLOY}/st`, JSON.stringify(deployment('st', 1)))).status).toBe(201);
    const r = await applyYaml(
      `${DEPLOY}/st/status`,
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'st' },
        spec: { replicas: 9 },
        status: { replicas: 1 },
      }),
      'fieldManager=controller',
    );
    expect(r.status).toBe(200);
    expect(r.json.status.replicas).toBe(1);
    expect(r.json.spec.replicas).toBe(1);
    const entry = r.json.metadata.managedFields.find((e: any) => e.manager === 'controller');
    expect(entry).toMatchObject({
      operation: 'Apply',
      subresource: 'status',
      fieldsV1: { 'f:status': { 'f:replicas': {} } },
    });
  });

  it('applies to /scale, moving the replicas to the Scale applier', async () => {
    expect((await applyYaml(`${DEPLOY}/sc`, JSON.stringify(deployment('sc', 1)))).status).toBe(201);
    const scale = {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'sc' },
      spec: { replicas: 4 },
    };
    const conflict = await applyYaml(`${DEPLOY}/sc/scale`, JSON.stringify(scale), 'fieldManager=hpa');
    expect(conflict.status).toBe(409);
    expect(conflict.json.message).toBe('Apply failed with 1 conflict: conflict with "ci": .spec.replicas');
    const r = await applyYaml(`${DEPLOY}/sc/scale`, JSON.stringify(scale), 'fieldManager=hpa&force=true');
    expect(r.status).toBe(200);
    expect(r.json.spec.replicas).toBe(4);
    const d = (await http.get(`${DEPLOY}/sc`)).json;
    expect(d.spec.replicas).toBe(4);
    const hpa = d.metadata.managedFields.find((e: any) => e.manager === 'hpa');
    expect(hpa).toMatchObject({
      operation: 'Apply',
      apiVersion: 'apps/v1',
      subresource: 'scale',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
    });
    const ci = d.metadata.managedFields.find((e: any) => e.manager === 'ci');
    expect(ci.fieldsV1['f:spec']['f:replicas']).toBeUndefined();
  });
});

describe('managed fields of other writes', () => {
  it('names the writer from fieldManager, else from the User-Agent', async () => {
    const created = await http.post(`${CM}?fieldManager=creator`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'w1' },
      data: { a: '1' },
    });
    expect(created.json.metadata.managedFields).toEqual([
      {
        manager: 'creator',
        operation: 'Update',
        apiVersion: 'v1',
        time: expect.any(String),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } },
      },
    ]);
    const patched = await http.patch(`${CM}/w1`, { data: { b: '2' } }, 'application/merge-patch+json', {
      headers: { 'User-Agent': 'my-controller/v0.3 (linux/amd64)' },
    });
    expect(managers(patched.json)).toEqual(['creator/Update', 'my-controller/Update']);
  });

  it('clears them all when a write sends managedFields: []', async () => {
    const current = (await http.get(`${CM}/w1`)).json;
    current.metadata.managedFields = [];
    current.data.c = '3';
    const r = await http.put(`${CM}/w1`, current);
    expect(r.status).toBe(200);
    expect(r.json.metadata.managedFields).toBeUndefined();
  });

  it('refuses an invalid fieldManager on create and update', async () => {
    const r = await http.post(`${CM}?fieldManager=${encodeURIComponent('bad\u0001')}`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'w2' },
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "bad\\x01": invalid character U+0001 (at position 3)',
    );
  });
});
