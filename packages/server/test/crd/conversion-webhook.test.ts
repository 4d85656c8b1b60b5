/**
 * CRD conversion through a real HTTPS conversion webhook (`spec.conversion.strategy: Webhook`),
 * driven with kubectl 1.32: objects stored at `v1` read, listed, watched, patched and applied
 * through `v2` (a restructured spec) and back, `storedVersions` after the storage version moves,
 * a webhook that is down, and answers kube refuses — each worded as kube words it, with nothing
 * stored changed.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { objectKey } from '../../src/storage/store.js';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { type ConversionWebhookServer, startConversionWebhook } from './conversion-webhook-server.js';
import { crPath, establish, eventually, type Http, httpClient, type Json } from './support.js';

const G = 'conv.example.com';
const R = `foos.${G}`;
const P = (version: string, name?: string) => crPath(G, version, 'foos', name);

const fooCrd = (hook: ConversionWebhookServer, storage = 'v1'): Json => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: R },
  spec: {
    group: G,
    scope: 'Namespaced',
    names: { plural: 'foos', kind: 'Foo' },
    conversion: {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1', 'v1beta1'],
        clientConfig: { url: hook.url, caBundle: hook.caBundle },
      },
    },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: storage === 'v1',
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: { hostPort: { type: 'string' }, replicas: { type: 'integer' } },
              },
              status: { type: 'object', properties: { ready: { type: 'boolean' } } },
            },
          },
        },
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
        },
      },
      {
        name: 'v2',
        served: true,
        storage: storage === 'v2',
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  host: { type: 'string' },
                  port: { type: 'integer' },
                  size: { type: 'integer' },
                },
              },
              status: { type: 'object', properties: { ready: { type: 'boolean' } } },
            },
          },
        },
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas' },
        },
        selectableFields: [{ jsonPath: '.spec.host' }],
      },
    ],
  },
});

const foo = (version: string, name: string, spec: Json): Json => ({
  apiVersion: `${G}/${version}`,
  kind: 'Foo',
  metadata: { name, namespace: 'default' },
  spec,
});

let env: KubectlEnv;
let http: Http;
let hook: ConversionWebhookServer;
const stored = (name: string) => env.cp.store.get(objectKey(G, 'foos', 'default', name))?.object as Json;
const kubectlJson = async (...args: string[]) => JSON.parse(await env.ok([...args, '-o', 'json']));

beforeAll(async () => {
  hook = await startConversionWebhook();
  // Without the built-in controllers, whose watches of foos (at the preferred version, v2) would
  // convert every object as it is written: the reviews a test sees are its own.
  env = await startKubectlEnv({ controllers: false });
  http = httpClient(env.cp);
  await establish(http, fooCrd(hook));
});
afterAll(async () => {
  http?.close();
  await env?.stop();
  await hook?.close();
});

describe('reads through the webhook', () => {
  test('an object created in v1 reads as v2 (kubectl get foos.v2.<group>) and back', async () => {
    await env.ok(['create', '-f', '-'], { input: JSON.stringify(foo('v1', 'a', { hostPort: 'db:5432' })) });
    // The write converts it to v2 at once (the next test shows it); the reviews counted below are the reads'.
    await eventually(() =>
      hook.reviews.some((r) => r.request.objects.some((o: Json) => o.metadata.name === 'a')),
    );
    const before = hook.reviews.length;
    const v2 = await kubectlJson('get', `foos.v2.${G}`, 'a');
    expect(v2.apiVersion).toBe(`${G}/v2`);
    expect(v2.spec).toEqual({ host: 'db', port: 5432 });
    const review = hook.reviews[before];
    expect(review).toMatchObject({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { desiredAPIVersion: `${G}/v2` },
    });
    expect(review.request.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(review.request.objects.map((o: Json) => [o.apiVersion, o.spec])).toEqual([
      [`${G}/v1`, { hostPort: 'db:5432' }],
    ]);
    // The storage version is read without a call.
    const calls = hook.reviews.length;
    const v1 = await kubectlJson('get', `foos.v1.${G}`, 'a');
    expect(v1.spec).toEqual({ hostPort: 'db:5432' });
    expect(hook.reviews.length).toBe(calls);
  });

  test('objects are converted to v2 as they are written (kube: one watch cache per version); a list then calls nothing', async () => {
    const before = hook.reviews.length;
    const convertedSince = (n: number) =>
      hook.reviews.slice(n).flatMap((r) => {
        expect(r.request.desiredAPIVersion).toBe(`${G}/v2`);
        return r.request.objects.map((o: Json) => o.metadata.name);
      });
    for (const n of ['l1', 'l2', 'l3']) await http.post(P('v1'), foo('v1', n, { hostPort: `${n}:1` }));
    // No read yet: the writes alone call the webhook, for v2, the one version besides storage's.
    await eventually(() => expect(convertedSince(before).sort()).toEqual(['l1', 'l2', 'l3']) ?? true);
    const after = hook.reviews.length;
    const list = await kubectlJson('get', `foos.v2.${G}`);
    expect(list.items.map((i: Json) => [i.apiVersion, i.metadata.name, i.spec.host])).toEqual(
      expect.arrayContaining([
        [`${G}/v2`, 'l1', 'l1'],
        [`${G}/v2`, 'l2', 'l2'],
        [`${G}/v2`, 'l3', 'l3'],
      ]),
    );
    expect(hook.reviews.length).toBe(after);
    // A changed object is converted again, alone, when it is written; the list after it reads it.
    await http.patch(P('v1', 'l2'), { spec: { hostPort: 'l2:2' } }, 'application/merge-patch+json');
    await eventually(() => expect(convertedSince(after)).toEqual(['l2']) ?? true);
    const again = await kubectlJson('get', `foos.v2.${G}`);
    expect(again.items.find((i: Json) => i.metadata.name === 'l2').spec).toEqual({ host: 'l2', port: 2 });
    expect(convertedSince(after)).toEqual(['l2']);
    // A Table (kubectl's default output) is built from the converted objects too.
    const table = await env.ok(['get', `foos.v2.${G}`, 'l1']);
    expect(table).toMatch(/^NAME\s+AGE\nl1\s+/);
  });

  test('a list page of objects not converted yet (the CRD changed since) converts in one ConversionReview', async () => {
    const crdUrl = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${R}`;
    const withColumn = async (columns: Json[] | undefined) => {
      const crd = (await http.get(crdUrl)).json;
      crd.spec.versions[0].additionalPrinterColumns = columns;
      const put = await http.put(crdUrl, crd);
      expect(put.status, put.text).toBe(200);
    };
    // Any change of the CRD makes new served types, as kube makes new storage (and watch caches).
    await withColumn([{ name: 'HostPort', type: 'string', jsonPath: '.spec.hostPort' }]);
    await eventually(async () => (await env.ok(['get', `foos.v1.${G}`, 'l1'])).includes('HOSTPORT'));
    try {
      const before = hook.reviews.length;
      const list = await kubectlJson('get', `foos.v2.${G}`);
      const names = list.items.map((i: Json) => i.metadata.name);
      expect(names).toEqual(expect.arrayContaining(['a', 'l1', 'l2', 'l3']));
      expect(
        hook.reviews.slice(before).map((r) => r.request.objects.map((o: Json) => o.metadata.name)),
      ).toEqual([names]);
    } finally {
      await withColumn(undefined);
    }
  });

  test('a watch in v2 sees objects written in v1, converted, in order', async () => {
    const w = http.watch(`${P('v2')}?watch=1&fieldSelector=metadata.name%3Dw`);
    await eventually(() => expect(w.status).toBe(200));
    await http.post(P('v1'), foo('v1', 'w', { hostPort: 'x:1' }));
    for (let i = 2; i <= 5; i++)
      await http.patch(P('v1', 'w'), { spec: { hostPort: `x:${i}` } }, 'application/merge-patch+json');
    await http.delete(P('v1', 'w'));
    await eventually(() => expect(w.events.length).toBe(6));
    expect(w.events.map((e: Json) => [e.type, e.object.apiVersion, e.object.spec.port])).toEqual([
      ['ADDED', `${G}/v2`, 1],
      ['MODIFIED', `${G}/v2`, 2],
      ['MODIFIED', `${G}/v2`, 3],
      ['MODIFIED', `${G}/v2`, 4],
      ['MODIFIED', `${G}/v2`, 5],
      ['DELETED', `${G}/v2`, 5],
    ]);
    w.close();
  });

  test("a field selector on v2's selectable field selects on the converted objects", async () => {
    await http.post(P('v1'), foo('v1', 'sel', { hostPort: 'selected:9' }));
    const out = await env.ok(['get', `foos.v2.${G}`, '--field-selector', 'spec.host=selected', '-o', 'name']);
    expect(out.trim()).toBe(`foo.${G}/sel`);
  });

  test('the Python client watches v2 while objects change through v1', async () => {
    await http.post(P('v1'), foo('v1', 'py', { hostPort: 'py:1' }));
    // The script changes the object through v1 once it saw it, then waits for the change in v2.
    const script = `
import json, sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
api = client.CustomObjectsApi()
seen = []
w = watch.Watch()
for ev in w.stream(api.list_namespaced_custom_object, '${G}', 'v2', 'default', 'foos',
                   field_selector='metadata.name=py', timeout_seconds=20):
    o = ev['object']
    seen.append([ev['type'], o['apiVersion'], o['spec']])
    if len(seen) == 1:
        api.patch_namespaced_custom_object('${G}', 'v1', 'default', 'foos', 'py',
            {'spec': {'hostPort': 'py:2'}})
    if len(seen) == 2:
        w.stop()
print(json.dumps(seen))
`;
    const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', script, env.kubeconfigPath], {
      timeout: 30_000,
    });
    expect(JSON.parse(stdout)).toEqual([
      ['ADDED', `${G}/v2`, { host: 'py', port: 1 }],
      ['MODIFIED', `${G}/v2`, { host: 'py', port: 2 }],
    ]);
  });

  test('kubectl get -w in v2 prints the initial objects converted', async () => {
    await http.post(P('v1'), foo('v1', 'kw', { hostPort: 'kw:7' }));
    const watch = env.spawn([
      'get',
      `foos.v2.${G}`,
      'kw',
      '-w',
      '-o',
      'jsonpath={.spec.host}:{.spec.port}{"\\n"}',
    ]);
    await eventually(() => expect(watch.output()).toContain('kw:7'));
    await watch.stop();
  });
});

describe('writes through the webhook', () => {
  test('created in v2, stored in v1; patched in v2 with every patch type', async () => {
    await env.ok(['create', '-f', '-'], { input: JSON.stringify(foo('v2', 'b', { host: 'web', port: 80 })) });
    expect(stored('b').apiVersion).toBe(`${G}/v1`);
    expect(stored('b').spec).toEqual({ hostPort: 'web:80' });

    await env.ok(['patch', `foos.v2.${G}`, 'b', '--type=merge', '-p', '{"spec":{"port":8080}}']);
    expect(stored('b').spec).toEqual({ hostPort: 'web:8080' });
    await env.ok([
      'patch',
      `foos.v2.${G}`,
      'b',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/host","value":"api"}]',
    ]);
    expect(stored('b').spec).toEqual({ hostPort: 'api:8080' });
    const v2 = await kubectlJson('get', `foos.v2.${G}`, 'b');
    expect(v2.spec).toEqual({ host: 'api', port: 8080 });
  });

  test('a dry-run create converts both ways and stores nothing', async () => {
    const before = hook.reviews.length;
    const r = await http.post(`${P('v2')}?dryRun=All`, foo('v2', 'dry', { host: 'd', port: 1 }));
    expect(r.status, r.text).toBe(201);
    expect(r.json.spec).toEqual({ host: 'd', port: 1 });
    expect(hook.reviews.slice(before).map((x) => x.request.desiredAPIVersion)).toEqual([
      `${G}/v1`,
      `${G}/v2`,
    ]);
    expect(stored('dry')).toBeUndefined();
  });

  test('server-side apply in v2 and in v1; client-side apply in v2', async () => {
    const applyV2 = foo('v2', 'c', { host: 'cache', port: 6379 });
    await env.ok(['apply', '--server-side', '--field-manager=mgr2', '-f', '-'], {
      input: JSON.stringify(applyV2),
    });
    expect(stored('c').spec).toEqual({ hostPort: 'cache:6379' });
    const got = await kubectlJson('get', `foos.v2.${G}`, 'c', '--show-managed-fields');
    expect(got.spec).toEqual({ host: 'cache', port: 6379 });
    expect(got.metadata.managedFields).toEqual([
      expect.objectContaining({ manager: 'mgr2', operation: 'Apply', apiVersion: `${G}/v2` }),
    ]);

    await env.ok(['apply', '--server-side', '--field-manager=mgr1', '-f', '-'], {
      input: JSON.stringify(foo('v1', 'c1', { hostPort: 'one:1' })),
    });
    expect((await kubectlJson('get', `foos.v2.${G}`, 'c1')).spec).toEqual({ host: 'one', port: 1 });

    const csa = foo('v2', 'd', { host: 'h', port: 1 });
    await env.ok(['apply', '-f', '-'], { input: JSON.stringify(csa) });
    await env.ok(['apply', '-f', '-'], { input: JSON.stringify({ ...csa, spec: { host: 'h', port: 2 } }) });
    expect(stored('d').spec).toEqual({ hostPort: 'h:2' });
    const d = await kubectlJson('get', `foos.v2.${G}`, 'd');
    expect(
      JSON.parse(d.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).spec,
    ).toEqual({ host: 'h', port: 2 });
  });

  test('status and scale subresources in v2', async () => {
    await http.post(P('v1'), foo('v1', 's', { hostPort: 's:1', replicas: 2 }));
    const scale = JSON.parse(await env.ok(['get', '--raw', `${P('v2', 's')}/scale`]));
    expect(scale.spec.replicas).toBe(2);
    await env.ok(['scale', `foos.v2.${G}`, 's', '--replicas=5']);
    expect(stored('s').spec).toEqual({ hostPort: 's:1', replicas: 5 });
    const st = await http.patch(
      `${P('v2', 's')}/status`,
      { status: { ready: true } },
      'application/merge-patch+json',
    );
    expect(st.status, st.text).toBe(200);
    expect(st.json).toMatchObject({
      apiVersion: `${G}/v2`,
      spec: { host: 's', port: 1, size: 5 },
      status: { ready: true },
    });
    expect(stored('s').status).toEqual({ ready: true });
  });

  test('a delete through v2 that leaves the object answers it in v2', async () => {
    const created = await http.post(P('v1'), {
      ...foo('v1', 'fin', { hostPort: 'f:1' }),
      metadata: { name: 'fin', finalizers: ['example.com/keep'] },
    });
    expect(created.status).toBe(201);
    const del = await http.delete(P('v2', 'fin'));
    expect(del.status).toBe(200);
    expect(del.json).toMatchObject({ apiVersion: `${G}/v2`, spec: { host: 'f', port: 1 } });
    expect(del.json.metadata.deletionTimestamp).toBeTruthy();
    await http.patch(P('v1', 'fin'), { metadata: { finalizers: null } }, 'application/merge-patch+json');
  });

  test('a delete of a collection through v2 answers the deleted objects in v2', async () => {
    for (const n of ['dc1', 'dc2'])
      await http.post(P('v1'), {
        ...foo('v1', n, { hostPort: `${n}:1` }),
        metadata: { name: n, labels: { dc: 'yes' } },
      });
    const del = await http.delete(`${P('v2')}?labelSelector=dc%3Dyes`);
    expect(del.status, del.text).toBe(200);
    expect(del.json.items.map((i: Json) => [i.apiVersion, i.metadata.name, i.spec])).toEqual([
      [`${G}/v2`, 'dc1', { host: 'dc1', port: 1 }],
      [`${G}/v2`, 'dc2', { host: 'dc2', port: 1 }],
    ]);
  });

  test('labels the webhook sets are kept; other metadata it changes is not', async () => {
    await http.post(P('v1'), foo('v1', 'lab', { hostPort: 'l:1' }));
    hook.mode = 'labels';
    try {
      const got = await http.get(P('v2', 'lab'));
      expect(got.status, got.text).toBe(200);
      expect(got.json.metadata.labels).toEqual({ 'converted-to': 'v2' });
      expect(got.json.metadata.generation).toBe(1);
    } finally {
      hook.mode = 'ok';
    }
  });
});

describe('managed fields across versions', () => {
  const applyAt = (version: string, manager: string, spec: Json, force = false) =>
    http.patch(
      `${P(version, 'mf')}?fieldManager=${manager}${force ? '&force=true' : ''}`,
      { apiVersion: `${G}/${version}`, kind: 'Foo', metadata: { name: 'mf' }, spec },
      'application/apply-patch+yaml',
    );
  const managers = (obj: Json) =>
    obj.metadata.managedFields.map((e: Json) => [e.manager, e.operation, e.apiVersion, e.fieldsV1]);

  test("a manager's fields are compared in the version it wrote: conflicts and ownership move", async () => {
    expect((await applyAt('v1', 'mgr-a', { hostPort: 'x:1' })).status).toBe(201);
    // In v2 only spec.port changes; in v1, mgr-a's version, that is spec.hostPort.
    const conflict = await applyAt('v2', 'mgr-b', { port: 2 });
    expect(conflict.status, conflict.text).toBe(409);
    expect(conflict.json.message).toBe('Apply failed with 1 conflict: conflict with "mgr-a": .spec.hostPort');
    const k = await env.run(['apply', '--server-side', '--field-manager=mgr-b', '-f', '-'], {
      input: JSON.stringify(foo('v2', 'mf', { port: 2 })),
    });
    expect(k.code).toBe(1);
    expect(k.stderr).toContain('conflict with "mgr-a": .spec.hostPort');
    expect(stored('mf').spec).toEqual({ hostPort: 'x:1' });

    const forced = await applyAt('v2', 'mgr-b', { port: 2 }, true);
    expect(forced.status, forced.text).toBe(200);
    expect(stored('mf').spec).toEqual({ hostPort: 'x:2' });
    expect(managers(forced.json)).toEqual([['mgr-b', 'Apply', `${G}/v2`, { 'f:spec': { 'f:port': {} } }]]);

    // An update through v1 changing spec.hostPort takes spec.port from mgr-b (compared in v2).
    const upd = await http.patch(
      `${P('v1', 'mf')}?fieldManager=editor`,
      { spec: { hostPort: 'x:3' } },
      'application/merge-patch+json',
    );
    expect(upd.status, upd.text).toBe(200);
    expect(managers(upd.json)).toEqual([['editor', 'Update', `${G}/v1`, { 'f:spec': { 'f:hostPort': {} } }]]);
  });
});

describe('failures, worded as kube words them', () => {
  const snapshot = () => env.cp.store.list(`/registry/${G}/foos/`).items.map((i) => i.json);

  test.each([
    [
      'wrong-uid',
      /^conversion webhook for conv\.example\.com\/v1, Kind=Foo failed: expected response\.uid="[0-9a-f-]{36}", got "not-the-uid"$/,
    ],
    [
      'missing-object',
      /^conversion webhook for conv\.example\.com\/v1, Kind=Foo returned 0 objects, expected 1$/,
    ],
    [
      'renamed',
      /^conversion webhook for conv\.example\.com\/v1, Kind=Foo returned invalid object: must have the same name: h != other$/,
    ],
    ['failure', /^conversion webhook for conv\.example\.com\/v1, Kind=Foo failed: cannot convert this one$/],
    [
      'wrong-version',
      /^conversion webhook for conv\.example\.com\/v1, Kind=Foo returned invalid object at index 0: invalid groupVersion \(expected conv\.example\.com\/v2, received conv\.example\.com\/v1\)$/,
    ],
    [
      'v1beta1-answer',
      /^conversion webhook for conv\.example\.com\/v1, Kind=Foo failed: expected webhook response of apiextensions\.k8s\.io\/v1, Kind=ConversionReview, got apiextensions\.k8s\.io\/v1beta1, Kind=ConversionReview$/,
    ],
    ['garbage', /^conversion webhook for conv\.example\.com\/v1, Kind=Foo failed: /],
  ] as const)('an answer with %s is refused (500), nothing stored changes', async (mode, message) => {
    if (!stored('h')) await http.post(P('v1'), foo('v1', 'h', { hostPort: 'h:1' }));
    hook.mode = mode;
    let before: string[] = [];
    try {
      // Written at the storage version: no conversion, so nothing has converted it yet.
      await http.post(P('v1'), foo('v1', `fresh-${mode}`, { hostPort: 'f:1' }));
      before = snapshot();
      const r = await http.get(P('v2', 'h'));
      expect(r.status).toBe(500);
      expect(r.json.reason).toBeUndefined();
      expect(r.json.message).toMatch(message);
      const k = await env.run(['get', `foos.v2.${G}`, 'h']);
      expect(k.stderr.trim()).toMatch(new RegExp(`^Error from server: ${message.source.slice(1)}`));
      const write = await http.patch(P('v2', 'h'), { spec: { port: 2 } }, 'application/merge-patch+json');
      expect(write.status).toBe(500);
      const list = await http.get(P('v2'));
      expect(list.status).toBe(500);
      // kube 1.32 converts a list's objects one by one: its refusal names the first that fails.
      const forList =
        mode === 'renamed'
          ? /returned invalid object: must have the same name: \S+ != other$/
          : mode === 'missing-object'
            ? /^conversion webhook for conv\.example\.com\/v1, Kind=Foo returned \d+ objects, expected \d+$/
            : message;
      expect(list.json.message).toMatch(forList);
    } finally {
      hook.mode = 'ok';
    }
    expect(snapshot()).toEqual(before);
  });

  test('the conversion webhook metrics count successes and failures by type', async () => {
    const metrics = (await http.get('/metrics')).text;
    const value = (line: string) =>
      Number(
        metrics
          .split('\n')
          .find((l) => l.startsWith(line))
          ?.split(' ')
          .pop(),
      );
    expect(
      value('apiserver_conversion_webhook_request_total{result="success",failure_type=""}'),
    ).toBeGreaterThan(0);
    expect(
      value(
        'apiserver_conversion_webhook_request_total{result="failure",failure_type="conversion_webhook_malformed_response_failure"}',
      ),
    ).toBeGreaterThan(0);
    expect(
      value(
        'apiserver_conversion_webhook_request_total{result="failure",failure_type="conversion_webhook_partial_response_failure"}',
      ),
    ).toBeGreaterThan(0);
    expect(
      value(
        'apiserver_conversion_webhook_request_total{result="failure",failure_type="conversion_webhook_invalid_converted_object_failure"}',
      ),
    ).toBeGreaterThan(0);
    expect(
      value(
        `apiserver_crd_conversion_webhook_duration_seconds_count{crd_name="${R}",from_version="v1",to_version="v2",succeeded="true"}`,
      ),
    ).toBeGreaterThan(0);
  });

  test('a watch whose conversion fails ends with an ERROR event', async () => {
    await http.post(P('v1'), foo('v1', 'we', { hostPort: 'we:1' }));
    const w = http.watch(
      `${P('v2')}?watch=1&fieldSelector=metadata.name%3Dwe&resourceVersion=${stored('we').metadata.resourceVersion}`,
    );
    await eventually(() => expect(w.status).toBe(200));
    hook.mode = 'failure';
    try {
      await http.patch(P('v1', 'we'), { spec: { hostPort: 'we:2' } }, 'application/merge-patch+json');
      await eventually(() => expect(w.events.length).toBe(1));
      expect(w.events[0]).toEqual({
        type: 'ERROR',
        object: expect.objectContaining({
          kind: 'Status',
          code: 500,
          reason: 'InternalError',
          message: `Internal error occurred: conversion webhook for ${G}/v1, Kind=Foo failed: cannot convert this one`,
        }),
      });
    } finally {
      hook.mode = 'ok';
      w.close();
    }
  });
});

describe('clientConfig.service and review versions', () => {
  const barsCrd = (clientConfig: Json, conversionReviewVersions: string[]): Json => {
    const crd = fooCrd(hook);
    crd.metadata.name = `bars.${G}`;
    crd.spec.names = { plural: 'bars', kind: 'Bar' };
    crd.spec.conversion.webhook = { clientConfig, conversionReviewVersions };
    return crd;
  };
  const B = (version: string, name?: string) => crPath(G, version, 'bars', name);

  test('a Service reaches the webhook through its ready EndpointSlice; v1beta1 reviews when asked first', async () => {
    await http.post('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'conv-hook' },
      spec: { ports: [{ name: 'https', port: 443, targetPort: hook.port }] },
    });
    await establish(
      http,
      barsCrd(
        { service: { namespace: 'default', name: 'conv-hook', path: '/convert' }, caBundle: hook.caBundle },
        ['v1beta1', 'v1'],
      ),
    );
    await http.post(B('v1'), { ...foo('v1', 'svc', { hostPort: 's:1' }), kind: 'Bar' });
    // No endpoints yet: kube's endpoint resolver's answer.
    const none = await http.get(B('v2', 'svc'));
    expect(none.status).toBe(500);
    expect(none.json.message).toBe(
      `conversion webhook for ${G}/v1, Kind=Bar failed: Post "https://conv-hook.default.svc:443/convert?timeout=30s": no endpoints available for service "conv-hook"`,
    );
    const slice = await http.post('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'conv-hook-1', labels: { 'kubernetes.io/service-name': 'conv-hook' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port: hook.port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    });
    expect(slice.status, slice.text).toBe(201);
    const before = hook.reviews.length;
    const got = await http.get(B('v2', 'svc'));
    expect(got.status, got.text).toBe(200);
    expect(got.json).toMatchObject({ apiVersion: `${G}/v2`, kind: 'Bar', spec: { host: 's', port: 1 } });
    expect(hook.reviews[before]).toMatchObject({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      request: { desiredAPIVersion: `${G}/v2` },
    });
    // v1beta1 answers were never checked for their uid.
    hook.mode = 'wrong-uid';
    try {
      expect((await http.get(B('v2', 'svc'))).status).toBe(200);
    } finally {
      hook.mode = 'ok';
    }
  });
});

describe('storage version and storedVersions', () => {
  test('switching the storage version to v2: new writes are stored at v2, old objects still read', async () => {
    await http.post(P('v1'), foo('v1', 'old', { hostPort: 'o:1' }));
    const crd = (await http.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${R}`)).json;
    crd.spec.versions[0].storage = false;
    crd.spec.versions[1].storage = true;
    const put = await http.put(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${R}`, crd);
    expect(put.status, put.text).toBe(200);
    expect(put.json.status.storedVersions).toEqual(['v1', 'v2']);
    // The served types follow the CRD a moment later: probe until a write lands at v2.
    let n = 0;
    let name = '';
    await eventually(async () => {
      name = `new${n++}`;
      await http.post(P('v1'), foo('v1', name, { hostPort: 'n:2' }));
      return stored(name)?.apiVersion === `${G}/v2`;
    });
    expect(stored(name).spec).toEqual({ host: 'n', port: 2 });
    expect(stored('old').apiVersion).toBe(`${G}/v1`);
    expect((await kubectlJson('get', `foos.v2.${G}`, 'old')).spec).toEqual({ host: 'o', port: 1 });
    expect((await kubectlJson('get', `foos.v1.${G}`, name)).spec).toEqual({ hostPort: 'n:2' });
    // A write through v1 of an object stored at v1 now stores it at v2.
    await http.patch(P('v1', 'old'), { spec: { hostPort: 'o:3' } }, 'application/merge-patch+json');
    expect(stored('old')).toMatchObject({ apiVersion: `${G}/v2`, spec: { host: 'o', port: 3 } });
  });
});

describe('a webhook that is down', () => {
  test('reads and writes through another version fail as kube fails them; the storage version works', async () => {
    const crd = (await http.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${R}`)).json;
    const storage = crd.spec.versions.find((v: Json) => v.storage).name;
    const other = storage === 'v1' ? 'v2' : 'v1';
    const obj =
      storage === 'v1' ? foo('v1', 'down', { hostPort: 'd:1' }) : foo('v2', 'down', { host: 'd', port: 1 });
    await http.post(P(storage), obj);
    await hook.close();
    const prefix = `conversion webhook for ${G}/${storage}, Kind=Foo failed: Post "https://127.0.0.1:${hook.port}/convert?timeout=30s": `;
    // A kept-alive connection the server closed may answer the first call with a reset.
    await eventually(async () => {
      const r = await http.get(P(other, 'down'));
      expect(r.status).toBe(500);
      expect(r.json.message.startsWith(prefix), r.json.message).toBe(true);
      expect(r.json.message).toMatch(/connect: connection refused$/);
      return true;
    });
    const k = await env.run(['get', `foos.${other}.${G}`, 'down']);
    expect(k.code).toBe(1);
    expect(k.stderr).toContain(`Error from server: ${prefix}`);
    const create = await http.post(
      P(other),
      foo(other, 'never', other === 'v1' ? { hostPort: 'n:1' } : { host: 'n', port: 1 }),
    );
    expect(create.status).toBe(500);
    expect(create.json.message).toContain(
      `conversion webhook for ${G}/${other}, Kind=Foo failed: Post "https://127.0.0.1:${hook.port}/convert?timeout=30s": `,
    );
    expect(stored('never')).toBeUndefined();
    expect((await http.get(P(storage, 'down'))).status).toBe(200);
  });
});
