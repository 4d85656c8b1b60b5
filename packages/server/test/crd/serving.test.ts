/**
 * Serving custom resources: every verb (watch and deletecollection included), the status and
 * scale subresources with kube's spec/status split and generation rules, Table output from
 * additionalPrinterColumns, metadata-only answers, label and field selectors (selectableFields)
 * and pagination — over HTTP and through kubectl.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { crPath, establish, eventually, type Http, httpClient, type Json, simpleCrd } from './support.js';

const G = 'serve.example.com';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${G}` },
  spec: {
    group: G,
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: {
            specReplicasPath: '.spec.replicas',
            statusReplicasPath: '.status.replicas',
            labelSelectorPath: '.status.selector',
          },
        },
        additionalPrinterColumns: [
          { name: 'Color', type: 'string', jsonPath: '.spec.color', description: 'The color.' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Ratio', type: 'number', format: 'float', jsonPath: '.spec.ratio', priority: 1 },
          { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
          {
            name: 'Phase',
            type: 'string',
            jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
            priority: 1,
          },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        selectableFields: [
          { jsonPath: '.spec.color' },
          { jsonPath: '.spec.replicas' },
          { jsonPath: '.status.ready' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  color: { type: 'string' },
                  replicas: { type: 'integer' },
                  ratio: { type: 'number' },
                },
              },
              status: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer' },
                  selector: { type: 'string' },
                  ready: { type: 'boolean' },
                  conditions: {
                    type: 'array',
                    items: {
                      type: 'object',
                      properties: { type: { type: 'string' }, reason: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const widget = (name: string, spec: Json = {}, labels?: Record<string, string>, extra: Json = {}) => ({
  apiVersion: `${G}/v1`,
  kind: 'Widget',
  metadata: { name, ...(labels && { labels }) },
  spec,
  ...extra,
});
const W = (name?: string, ns?: string) => crPath(G, 'v1', 'widgets', name, ns);

let env: KubectlEnv;
let http: Http;
beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
  await establish(http, widgetCrd);
  await establish(http, simpleCrd('gizmos', 'Gizmo', G));
  await establish(http, {
    ...simpleCrd('planets', 'Planet', G),
    spec: { ...simpleCrd('planets', 'Planet', G).spec, scope: 'Cluster' },
  });
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

describe('verbs', () => {
  test('create, get, list, update, patch and delete', async () => {
    const created = await http.post(
      W(),
      widget('w1', { color: 'red', replicas: 1 }, undefined, { status: { ready: true } }),
    );
    expect(created.status, created.text).toBe(201);
    const w1 = created.json;
    expect(w1).toMatchObject({ apiVersion: `${G}/v1`, kind: 'Widget', spec: { color: 'red', replicas: 1 } });
    // With a status subresource, create drops the status.
    expect(w1.status).toBeUndefined();
    expect(w1.metadata).toMatchObject({ name: 'w1', namespace: 'default', generation: 1 });
    expect(w1.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(w1.metadata.resourceVersion).toMatch(/^\d+$/);

    const dup = await http.post(W(), widget('w1'));
    expect(dup.status).toBe(409);
    expect(dup.json).toMatchObject({
      reason: 'AlreadyExists',
      message: `widgets.${G} "w1" already exists`,
      details: { name: 'w1', group: G, kind: 'widgets' },
    });

    expect((await http.get(W('w1'))).json).toEqual(w1);
    const list = (await http.get(W())).json;
    expect(list).toMatchObject({ kind: 'WidgetList', apiVersion: `${G}/v1`, items: [w1] });
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);

    // PUT needs a resourceVersion for custom resources, and a current one.
    const noRv = await http.put(W('w1'), widget('w1', { color: 'blue' }));
    expect(noRv.status).toBe(422);
    expect(noRv.json.message).toBe(
      `Widget.${G} "w1" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`,
    );
    const stale = await http.put(W('w1'), { ...w1, metadata: { ...w1.metadata, resourceVersion: '1' } });
    expect(stale.status).toBe(409);
    expect(stale.json.message).toBe(
      `Operation cannot be fulfilled on widgets.${G} "w1": the object has been modified; please apply your changes to the latest version and try again`,
    );

    // A label change is metadata: no new generation.
    const relabelled = await http.put(W('w1'), {
      ...w1,
      metadata: { ...w1.metadata, labels: { tier: 'a' } },
    });
    expect(relabelled.status, relabelled.text).toBe(200);
    expect(relabelled.json.metadata.generation).toBe(1);
    // A spec change is a new generation; the status a PUT carries is ignored.
    const updated = await http.put(W('w1'), {
      ...relabelled.json,
      spec: { color: 'blue', replicas: 1 },
      status: { ready: true },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json).toMatchObject({
      spec: { color: 'blue' },
      metadata: { generation: 2, labels: { tier: 'a' } },
    });
    expect(updated.json.status).toBeUndefined();

    const merged = await http.patch(W('w1'), { spec: { ratio: 0.5 } }, 'application/merge-patch+json');
    expect(merged.status, merged.text).toBe(200);
    expect(merged.json.spec).toEqual({ color: 'blue', replicas: 1, ratio: 0.5 });
    expect(merged.json.metadata.generation).toBe(3);
    const jsonPatched = await http.patch(
      W('w1'),
      [{ op: 'replace', path: '/spec/color', value: 'green' }],
      'application/json-patch+json',
    );
    expect(jsonPatched.json.spec.color).toBe('green');
    const strategic = await http.patch(W('w1'), { spec: {} }, 'application/strategic-merge-patch+json');
    expect(strategic.status).toBe(415);
    expect(strategic.json).toMatchObject({ reason: 'UnsupportedMediaType' });

    // Deleting a custom resource answers with a Status, as the generic registry does.
    const del = await http.delete(W('w1'));
    expect(del.status).toBe(200);
    expect(del.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'w1', group: G, kind: 'widgets', uid: w1.metadata.uid },
    });
    const gone = await http.get(W('w1'));
    expect(gone.status).toBe(404);
    expect(gone.json).toMatchObject({
      reason: 'NotFound',
      message: `widgets.${G} "w1" not found`,
      details: { name: 'w1', group: G, kind: 'widgets' },
    });
  });

  test('a deletion waits for the custom resource’s finalizers', async () => {
    const created = await http.post(W(), {
      ...widget('fin'),
      metadata: { name: 'fin', finalizers: ['example.com/keep'] },
    });
    expect(created.status).toBe(201);
    const del = await http.delete(W('fin'));
    expect(del.status).toBe(200);
    expect(del.json.metadata.deletionTimestamp).toBeTruthy();
    expect(del.json.metadata.generation).toBe(2);
    const released = await http.patch(
      W('fin'),
      { metadata: { finalizers: null } },
      'application/merge-patch+json',
    );
    expect(released.status).toBe(200);
    expect((await http.get(W('fin'))).status).toBe(404);
  });

  test('cluster-scoped custom resources', async () => {
    const path = `/apis/${G}/v1/planets`;
    const c = await http.post(path, {
      apiVersion: `${G}/v1`,
      kind: 'Planet',
      metadata: { name: 'mars', namespace: 'x' },
      spec: {},
    });
    expect(c.status, c.text).toBe(201);
    expect(c.json.metadata.namespace).toBeUndefined();
    expect((await http.get(`${path}/mars`)).json.metadata.name).toBe('mars');
    expect((await http.get(`/apis/${G}/v1/namespaces/default/planets`)).status).toBe(404);
    expect((await http.get(`${path}?fieldSelector=metadata.name%3Dmars`)).json.items).toHaveLength(1);
    const byNs = await http.get(`${path}?fieldSelector=metadata.namespace%3D`);
    expect(byNs.status).toBe(400);
    expect(byNs.json.message).toBe('field label not supported: metadata.namespace');
    expect(await env.ok(['get', 'planets', '-o', 'name'])).toBe(`planet.${G}/mars\n`);
  });
});

describe('status and scale subresources', () => {
  test('a status write changes only status and never the generation', async () => {
    const w = (await http.post(W(), widget('st', { color: 'red', replicas: 2 }, { app: 'st' }))).json;
    const put = await http.put(`${W('st')}/status`, {
      ...w,
      metadata: { ...w.metadata, labels: { app: 'changed' } },
      spec: { color: 'ignored' },
      status: { replicas: 2, ready: true, selector: 'app=st' },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.json.status).toEqual({ replicas: 2, ready: true, selector: 'app=st' });
    expect(put.json.spec).toEqual({ color: 'red', replicas: 2 });
    expect(put.json.metadata.labels).toEqual({ app: 'st' });
    expect(put.json.metadata.generation).toBe(1);

    const patched = await http.patch(
      `${W('st')}/status`,
      { status: { ready: false } },
      'application/merge-patch+json',
    );
    expect(patched.json.status).toEqual({ replicas: 2, ready: false, selector: 'app=st' });
    expect((await http.get(`${W('st')}/status`)).json.status.ready).toBe(false);
    expect(patched.json.metadata.generation).toBe(1);
  });

  test('without a status subresource, status is written through the resource and bumps the generation', async () => {
    const path = crPath(G, 'v1', 'gizmos');
    const g = await http.post(path, {
      apiVersion: `${G}/v1`,
      kind: 'Gizmo',
      metadata: { name: 'g' },
      spec: {},
      status: { a: 1 },
    });
    expect(g.json.status).toEqual({ a: 1 });
    const p = await http.patch(`${path}/g`, { status: { a: 2 } }, 'application/merge-patch+json');
    expect(p.json).toMatchObject({ status: { a: 2 }, metadata: { generation: 2 } });
    expect((await http.get(`${path}/g/status`)).status).toBe(404);
    expect((await http.get(`${path}/g/scale`)).status).toBe(404);
  });

  test('scale reads and writes the replicas paths and reports the label selector', async () => {
    const scale = await http.get(`${W('st')}/scale`);
    expect(scale.status).toBe(200);
    const w = (await http.get(W('st'))).json;
    expect(scale.json).toEqual({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: 'st',
        namespace: 'default',
        uid: w.metadata.uid,
        resourceVersion: w.metadata.resourceVersion,
        creationTimestamp: w.metadata.creationTimestamp,
      },
      spec: { replicas: 2 },
      status: { replicas: 2, selector: 'app=st' },
    });
    const put = await http.put(`${W('st')}/scale`, { ...scale.json, spec: { replicas: 5 } });
    expect(put.status, put.text).toBe(200);
    expect(put.json.spec.replicas).toBe(5);
    const after = (await http.get(W('st'))).json;
    expect(after.spec.replicas).toBe(5);
    expect(after.metadata.generation).toBe(2);
    const patched = await http.patch(
      `${W('st')}/scale`,
      { spec: { replicas: 3 } },
      'application/merge-patch+json',
    );
    expect(patched.json.spec.replicas).toBe(3);
    expect(await env.ok(['scale', 'widget/st', '--replicas=4'])).toBe(`widget.${G}/st scaled\n`);
    expect((await http.get(W('st'))).json.spec.replicas).toBe(4);
    // A stale resourceVersion in the Scale is a conflict.
    const stale = await http.put(`${W('st')}/scale`, { ...scale.json, spec: { replicas: 1 } });
    expect(stale.status).toBe(409);
  });

  test('scale of an object without spec replicas is an internal error, as in kube', async () => {
    await http.post(W(), widget('noreplicas', { color: 'red' }));
    const r = await http.get(`${W('noreplicas')}/scale`);
    expect(r.status).toBe(500);
    expect(r.json).toMatchObject({
      reason: 'InternalError',
      message: 'Internal error occurred: the spec replicas field ".spec.replicas" does not exist',
    });
    const neg = await http.patch(
      `${W('noreplicas')}/scale`,
      { spec: { replicas: -1 } },
      'application/merge-patch+json',
    );
    expect(neg.status).toBe(422);
    expect(neg.json.message).toBe(
      `Widget.${G} "noreplicas" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer`,
    );
  });
});

describe('watch', () => {
  test('sees ADDED, MODIFIED and DELETED, filtered by labels', async () => {
    const start = (await http.get(W())).json.metadata.resourceVersion;
    const all = http.watch(`${W()}?watch=true&resourceVersion=${start}`);
    const labelled = http.watch(`${W()}?watch=true&resourceVersion=${start}&labelSelector=watch%3Dyes`);
    try {
      await http.post(W(), widget('wa', { color: 'a' }, { watch: 'yes' }));
      await http.post(W(), widget('wb', { color: 'b' }));
      await http.patch(W('wa'), { spec: { color: 'c' } }, 'application/merge-patch+json');
      await http.delete(W('wa'));
      await eventually(() => all.events.length >= 4, 10_000, 'four events');
      expect(all.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', 'wa'],
        ['ADDED', 'wb'],
        ['MODIFIED', 'wa'],
        ['DELETED', 'wa'],
      ]);
      expect(all.events[2].object).toMatchObject({
        apiVersion: `${G}/v1`,
        kind: 'Widget',
        spec: { color: 'c' },
      });
      await eventually(() => labelled.events.length >= 3, 10_000, 'three labelled events');
      expect(labelled.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', 'wa'],
        ['MODIFIED', 'wa'],
        ['DELETED', 'wa'],
      ]);
    } finally {
      all.close();
      labelled.close();
    }
  });

  test('kubectl get -w prints rows with the printer columns', async () => {
    const w = env.spawn(['get', 'widgets', '--watch', '--output-watch-events']);
    try {
      await http.post(W(), widget('watched', { color: 'teal', replicas: 7 }));
      const line = await eventually(
        () => /^ADDED\s+watched\s+teal\s+7\s.*$/m.exec(w.output()),
        10_000,
        'the row',
      );
      // An absent value is a null cell, which kubectl prints empty.
      expect(line[0]).toMatch(/^ADDED\s+watched\s+teal\s+7\s+\d+s$/);
    } finally {
      await w.stop();
    }
  });
});

describe('tables', () => {
  test('columns from additionalPrinterColumns, typed cells, wide-only columns', async () => {
    await http.post(W(), widget('tbl', { color: 'red', replicas: 3, ratio: 0.25 }));
    await http.patch(
      `${W('tbl')}/status`,
      { status: { ready: true, conditions: [{ type: 'Ready', reason: 'AllGood' }] } },
      'application/merge-patch+json',
    );
    const t = (await http.get(`${W()}?fieldSelector=metadata.name%3Dtbl`, { headers: { Accept: TABLE } }))
      .json;
    expect(t.kind).toBe('Table');
    expect(t.columnDefinitions).toEqual([
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: expect.stringMatching(/^Name must be unique within a namespace/),
        priority: 0,
      },
      { name: 'Color', type: 'string', format: '', description: 'The color.', priority: 0 },
      {
        name: 'Replicas',
        type: 'integer',
        format: '',
        description: 'Custom resource definition column (in JSONPath format): .spec.replicas',
        priority: 0,
      },
      {
        name: 'Ratio',
        type: 'number',
        format: 'float',
        description: 'Custom resource definition column (in JSONPath format): .spec.ratio',
        priority: 1,
      },
      {
        name: 'Ready',
        type: 'boolean',
        format: '',
        description: 'Custom resource definition column (in JSONPath format): .status.ready',
        priority: 0,
      },
      {
        name: 'Phase',
        type: 'string',
        format: '',
        description:
          'Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].reason',
        priority: 1,
      },
      {
        name: 'Age',
        type: 'date',
        format: '',
        description: 'Custom resource definition column (in JSONPath format): .metadata.creationTimestamp',
        priority: 0,
      },
    ]);
    expect(t.rows).toHaveLength(1);
    const [name, color, replicas, ratio, ready, phase, age] = t.rows[0].cells;
    expect([name, color, replicas, ratio, ready, phase]).toEqual(['tbl', 'red', 3, 0.25, true, 'AllGood']);
    expect(age).toMatch(/^\d+s$/);
    expect(t.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'tbl' } });

    const table = await env.ok(['get', 'widget', 'tbl']);
    expect(table).toMatch(/^NAME\s+COLOR\s+REPLICAS\s+READY\s+AGE\ntbl\s+red\s+3\s+true\s+\d+s\n$/);
    const wide = await env.ok(['get', 'widget', 'tbl', '-o', 'wide']);
    expect(wide).toMatch(
      /^NAME\s+COLOR\s+REPLICAS\s+RATIO\s+READY\s+PHASE\s+AGE\ntbl\s+red\s+3\s+0\.25\s+true\s+AllGood\s+\d+s\n$/,
    );
    // A missing value is a null cell (kubectl prints nothing).
    await http.post(W(), widget('bare'));
    const bare = (await http.get(W('bare'), { headers: { Accept: TABLE } })).json;
    expect(bare.rows[0].cells.slice(0, 6)).toEqual(['bare', null, null, null, null, null]);
    expect(await env.ok(['get', 'widget', 'bare'])).toMatch(
      /^NAME\s+COLOR\s+REPLICAS\s+READY\s+AGE\nbare\s+\d+s\n$/,
    );
  });

  test('includeObject and single-object tables', async () => {
    const none = (
      await http.get(`${W()}?includeObject=None&fieldSelector=metadata.name%3Dtbl`, {
        headers: { Accept: TABLE },
      })
    ).json;
    expect(none.rows[0].object).toBeUndefined();
    const full = (
      await http.get(`${W()}?includeObject=Object&fieldSelector=metadata.name%3Dtbl`, {
        headers: { Accept: TABLE },
      })
    ).json;
    expect(full.rows[0].object).toMatchObject({ kind: 'Widget', spec: { color: 'red' } });
    const one = (await http.get(W('tbl'), { headers: { Accept: TABLE } })).json;
    expect(one).toMatchObject({
      kind: 'Table',
      rows: [{ cells: ['tbl', 'red', 3, 0.25, true, 'AllGood', expect.any(String)] }],
    });
  });

  test('metadata-only answers', async () => {
    const list = await http.get(`${W()}?fieldSelector=metadata.name%3Dtbl`, {
      headers: {
        Accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json',
      },
    });
    expect(list.json).toMatchObject({
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      items: [{ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'tbl' } }],
    });
    expect(list.json.items[0].spec).toBeUndefined();
    const one = await http.get(W('tbl'), {
      headers: { Accept: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json' },
    });
    expect(one.json).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: expect.objectContaining({ name: 'tbl' }),
    });
  });
});

describe('selectors and pagination', () => {
  const ns = 'sel';
  beforeAll(async () => {
    await http.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const items: [string, Json, Record<string, string>][] = [
      ['s1', { color: 'red', replicas: 1 }, { tier: 'front' }],
      ['s2', { color: 'red', replicas: 2 }, { tier: 'back' }],
      ['s3', { color: 'blue', replicas: 3 }, { tier: 'front' }],
      ['s4', { color: 'green', replicas: 1 }, {}],
      ['s5', {}, { tier: 'back' }],
    ];
    for (const [name, spec, labels] of items) {
      const r = await http.post(W(undefined, ns), widget(name, spec, labels));
      expect(r.status, r.text).toBe(201);
    }
    await http.patch(`${W('s3', ns)}/status`, { status: { ready: true } }, 'application/merge-patch+json');
  });
  const names = async (query: string) => {
    const r = await http.get(`${W(undefined, ns)}?${query}`);
    expect(r.status, r.text).toBe(200);
    return r.json.items.map((i: Json) => i.metadata.name);
  };

  test.each<[string, string, string[]]>([
    ['label equality', 'labelSelector=tier%3Dfront', ['s1', 's3']],
    ['label set', 'labelSelector=tier%20in%20(front,back)', ['s1', 's2', 's3', 's5']],
    ['label absent', 'labelSelector=!tier', ['s4']],
    ['name', 'fieldSelector=metadata.name%3Ds2', ['s2']],
    ['selectable string field', 'fieldSelector=spec.color%3Dred', ['s1', 's2']],
    ['selectable field, not equal', 'fieldSelector=spec.color!%3Dred', ['s3', 's4', 's5']],
    ['selectable integer field', 'fieldSelector=spec.replicas%3D1', ['s1', 's4']],
    ['selectable boolean field', 'fieldSelector=status.ready%3Dtrue', ['s3']],
    ['unset selectable field is empty', 'fieldSelector=spec.color%3D', ['s5']],
    ['labels and fields together', 'labelSelector=tier%3Dfront&fieldSelector=spec.color%3Dred', ['s1']],
  ])('%s', async (_what, query, expected) => {
    expect(await names(query)).toEqual(expected);
  });

  test('a field that is not selectable is a bad request', async () => {
    const r = await http.get(`${W(undefined, ns)}?fieldSelector=spec.ratio%3D1`);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ reason: 'BadRequest', message: 'field label not supported: spec.ratio' });
  });

  test('kubectl --field-selector on a selectable field, and -l', async () => {
    expect(
      await env.ok(['get', 'widgets', '-n', ns, '--field-selector', 'spec.color=red', '-o', 'name']),
    ).toBe(`widget.${G}/s1\nwidget.${G}/s2\n`);
    expect(await env.ok(['get', 'wd', '-n', ns, '-l', 'tier=back', '-o', 'name'])).toBe(
      `widget.${G}/s2\nwidget.${G}/s5\n`,
    );
  });

  test('limit and continue page through a consistent list', async () => {
    const first = (await http.get(`${W(undefined, ns)}?limit=2`)).json;
    expect(first.items.map((i: Json) => i.metadata.name)).toEqual(['s1', 's2']);
    expect(first.metadata.remainingItemCount).toBe(3);
    // A write between pages does not show in the pinned list.
    await http.post(W(undefined, ns), widget('s6'));
    const second = (await http.get(`${W(undefined, ns)}?limit=2&continue=${first.metadata.continue}`)).json;
    expect(second.items.map((i: Json) => i.metadata.name)).toEqual(['s3', 's4']);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const third = (await http.get(`${W(undefined, ns)}?limit=2&continue=${second.metadata.continue}`)).json;
    expect(third.items.map((i: Json) => i.metadata.name)).toEqual(['s5']);
    expect(third.metadata.continue).toBeUndefined();
    expect(await env.ok(['get', 'widgets', '-n', ns, '--chunk-size=2', '-o', 'name'])).toBe(
      ['s1', 's2', 's3', 's4', 's5', 's6'].map((n) => `widget.${G}/${n}\n`).join(''),
    );
  });

  test('deletecollection with a selector deletes the matching objects and returns them', async () => {
    const r = await http.delete(`${W(undefined, ns)}?labelSelector=tier%3Dback`);
    expect(r.status, r.text).toBe(200);
    expect(r.json.kind).toBe('WidgetList');
    expect(r.json.items.map((i: Json) => i.metadata.name)).toEqual(['s2', 's5']);
    expect(await names('')).toEqual(['s1', 's3', 's4', 's6']);
    const f = await http.delete(`${W(undefined, ns)}?fieldSelector=spec.color%3Dred`);
    expect(f.json.items.map((i: Json) => i.metadata.name)).toEqual(['s1']);
    expect(await env.ok(['delete', 'widgets', '--all', '-n', ns])).toBe(
      ['s3', 's4', 's6'].map((n) => `widget.${G} "${n}" deleted\n`).join(''),
    );
    expect(await names('')).toEqual([]);
  });
});
