/**
 * HTTP-level checks of the Kubernetes API semantics the local server reproduces
 * (docs: /work/shared/design/KUBERNETES-SEMANTICS.md): metadata rules, writes, deletion,
 * reads, watches, representations, discovery, authentication and subresources.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../src/index.js';
import { httpClient } from './http.js';
import { eventually } from './kubectl.js';
import { statusProblems } from './status-check.js';

const NS = 'default';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const DEPLOY = `/apis/apps/v1/namespaces/${NS}/deployments`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const TABLE =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;
let seq = 0;
/** A fresh name per call, so that the tests of this file never see each other's objects. */
const fresh = (prefix: string) => `${prefix}-${++seq}`;

const configMap = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...((extra.metadata as object | undefined) ?? {}) },
  data: (extra.data as object | undefined) ?? { key: 'value' },
});
const deployment = (name: string, replicas = 1) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
    },
  },
});
const pod = (name: string, labels: Record<string, string> = {}, nodeName?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { ...(nodeName && { nodeName }), containers: [{ name: 'app', image: 'nginx:1.27' }] },
});

async function create(path: string, body: unknown): Promise<any> {
  const r = await http.post(path, body);
  expect(r.status, r.text).toBe(201);
  return r.json;
}

/** Expects a failure `Status` with this code and reason; returns it. */
function expectStatus(r: { status: number; json: any; text: string }, code: number, reason: string): any {
  expect(r.status, r.text).toBe(code);
  expect(statusProblems(code, r.json), r.text).toEqual([]);
  expect(r.json.reason, r.text).toBe(reason);
  return r.json;
}

beforeAll(async () => {
  cp = await startTestEnv({ bookmarkIntervalMs: 100 });
  http = httpClient(cp);
});

afterAll(async () => {
  http?.close();
  await cp?.stop();
});

describe('object metadata', () => {
  it('completes generateName with 5 random characters of the apimachinery alphabet', async () => {
    const names = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const o = await create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } });
      expect(o.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(o.metadata.generateName).toBe('gen-');
      names.add(o.metadata.name);
    }
    expect(names.size).toBe(5);
    // A name wins over generateName.
    const named = await create(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: fresh('n'), generateName: 'gen-' },
    });
    expect(named.metadata.name).toMatch(/^n-\d+$/);
  });

  it('sets uid, creationTimestamp and resourceVersion itself', async () => {
    const o = await create(
      CM,
      configMap(fresh('meta'), { metadata: { uid: 'mine', creationTimestamp: '2001-01-01T00:00:00Z' } }),
    );
    expect(o.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(o.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(o.metadata.creationTimestamp).not.toBe('2001-01-01T00:00:00Z');
    expect(Number(o.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(o.metadata.generation).toBeUndefined();
  });

  it('bumps generation on spec changes only; status and metadata writes leave it', async () => {
    const name = fresh('gen');
    const d = await create(DEPLOY, deployment(name));
    expect(d.metadata.generation).toBe(1);

    // metadata only
    const labelled = await http.patch(
      `${DEPLOY}/${name}`,
      { metadata: { labels: { extra: 'yes' } } },
      'application/merge-patch+json',
    );
    expect(labelled.status).toBe(200);
    expect(labelled.json.metadata.generation).toBe(1);

    // spec
    const scaled = await http.patch(
      `${DEPLOY}/${name}`,
      { spec: { replicas: 3 } },
      'application/merge-patch+json',
    );
    expect(scaled.json.metadata.generation).toBe(2);
    expect(scaled.json.spec.replicas).toBe(3);

    // a status write ignores the spec it carries and keeps the generation
    const withStatus = {
      ...scaled.json,
      spec: { ...scaled.json.spec, replicas: 9 },
      status: { replicas: 3, observedGeneration: 2 },
    };
    const st = await http.put(`${DEPLOY}/${name}/status`, withStatus);
    expect(st.status, st.text).toBe(200);
    expect(st.json.status.observedGeneration).toBe(2);
    expect(st.json.spec.replicas).toBe(3);
    expect(st.json.metadata.generation).toBe(2);

    // a main-resource write ignores the status it carries
    const main = { ...st.json, status: { replicas: 100 } };
    delete main.metadata.resourceVersion;
    const put = await http.put(`${DEPLOY}/${name}`, main);
    expect(put.status, put.text).toBe(200);
    expect(put.json.status.replicas).toBe(3);
    expect(put.json.metadata.generation).toBe(2);
  });
});

describe('writes', () => {
  it('refuses an update with a stale resourceVersion with 409 and the exact message', async () => {
    const name = fresh('stale');
    const o = await create(CM, configMap(name));
    const first = await http.put(`${CM}/${name}`, { ...o, data: { key: 'v2' } });
    expect(first.status).toBe(200);
    expect(Number(first.json.metadata.resourceVersion)).toBeGreaterThan(Number(o.metadata.resourceVersion));
    const stale = await http.put(`${CM}/${name}`, { ...o, data: { key: 'v3' } });
    const s = expectStatus(stale, 409, 'Conflict');
    expect(s.message).toBe(
      `Operation cannot be fulfilled on configmaps "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
    expect(s.details).toEqual({ name, kind: 'configmaps' });
    expect((await http.get(`${CM}/${name}`)).json.data.key).toBe('v2');
  });

  it('updates unconditionally without a resourceVersion', async () => {
    const name = fresh('uncond');
    await create(CM, configMap(name));
    const r = await http.put(`${CM}/${name}`, configMap(name, { data: { key: 'forced' } }));
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.key).toBe('forced');
    // The name in the body must match the URL.
    const other = await http.put(`${CM}/${name}`, configMap('someone-else'));
    expect(expectStatus(other, 400, 'BadRequest').message).toBe(
      `the name of the object (someone-else) does not match the name on the URL (${name})`,
    );
  });

  it('persists nothing with dryRun=All but validates and answers as if it did', async () => {
    const name = fresh('dry');
    const created = await http.post(`${CM}?dryRun=All`, configMap(name));
    expect(created.status).toBe(201);
    expect(created.json.metadata.uid).toBeTruthy();
    expect((await http.get(`${CM}/${name}`)).status).toBe(404);
    // Validation still runs.
    expectStatus(await http.post(`${CM}?dryRun=All`, configMap('Bad_Name')), 422, 'Invalid');

    const real = await create(CM, configMap(name));
    const updated = await http.put(`${CM}/${name}?dryRun=All`, { ...real, data: { key: 'dry' } });
    expect(updated.status).toBe(200);
    expect(updated.json.data.key).toBe('dry');
    const patched = await http.patch(
      `${CM}/${name}?dryRun=All`,
      { data: { key: 'dry' } },
      'application/merge-patch+json',
    );
    expect(patched.json.data.key).toBe('dry');
    const deleted = await http.delete(`${CM}/${name}?dryRun=All`);
    expect(deleted.status).toBe(200);
    const after = await http.get(`${CM}/${name}`);
    expect(after.json.data.key).toBe('value');
    expect(after.json.metadata.resourceVersion).toBe(real.metadata.resourceVersion);
    expectStatus(await http.post(`${CM}?dryRun=Nope`, configMap(fresh('dry'))), 422, 'Invalid');
  });

  it('applies fieldValidation Strict, Warn and Ignore', async () => {
    const body = { ...configMap(fresh('fv')), spec: { x: 1 } };
    const strict = await http.post(`${CM}?fieldValidation=Strict`, body);
    expect(expectStatus(strict, 400, 'BadRequest').message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "spec"',
    );

    const warn = await http.post(`${CM}?fieldValidation=Warn`, body);
    expect(warn.status).toBe(201);
    expect(warn.headers.warning).toBe('299 - "unknown field \\"spec\\""');
    expect(warn.json.spec).toBeUndefined();

    const ignore = await http.post(`${CM}?fieldValidation=Ignore`, {
      ...body,
      metadata: { name: fresh('fv') },
    });
    expect(ignore.status).toBe(201);
    expect(ignore.headers.warning).toBeUndefined();
    expect(ignore.json.spec).toBeUndefined();

    const dup = await http.send('POST', `${CM}?fieldValidation=Strict`, {
      raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${fresh('fv')}"},"data":{},"data":{}}`,
    });
    expect(expectStatus(dup, 400, 'BadRequest').message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data"',
    );
    const patchStrict = await http.patch(
      `${CM}/${warn.json.metadata.name}?fieldValidation=Strict`,
      { nope: 1 },
      'application/merge-patch+json',
    );
    // patch.go reports it as an invalid `patch` field of the patched object: a 422.
    const ps = expectStatus(patchStrict, 422, 'Invalid');
    expect(ps.message).toMatch(
      /^ "" is invalid: patch: Invalid value: "\{.*\}": strict decoding error: unknown field "nope"$/,
    );
    expect(ps.details.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'patch', message: expect.any(String) },
    ]);
    // ValidateCreateOptions: an unsupported directive makes the options invalid.
    expect(expectStatus(await http.post(`${CM}?fieldValidation=Loud`, body), 422, 'Invalid').message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"',
    );
  });
});

describe('deletion', () => {
  it('keeps an object with finalizers until the last one is removed', async () => {
    const name = fresh('fin');
    const o = await create(
      CM,
      configMap(name, { metadata: { finalizers: ['example.com/a', 'example.com/b'] } }),
    );
    const w = http.watch(
      `${CM}?watch=true&resourceVersion=${o.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`,
    );
    try {
      const del = await http.delete(`${CM}/${name}`);
      expect(del.status).toBe(200);
      expect(del.json.metadata.deletionTimestamp).toMatch(/Z$/);
      expect(del.json.metadata.deletionGracePeriodSeconds).toBe(0);
      expect(del.json.metadata.finalizers).toEqual(['example.com/a', 'example.com/b']);
      const still = await http.get(`${CM}/${name}`);
      expect(still.status).toBe(200);

      // Deleting again changes nothing.
      const again = await http.delete(`${CM}/${name}`);
      expect(again.json.metadata.resourceVersion).toBe(del.json.metadata.resourceVersion);

      // No new finalizers once deletion started; other changes are allowed only through finalizers.
      const add = await http.patch(
        `${CM}/${name}`,
        { metadata: { finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] } },
        'application/merge-patch+json',
      );
      expect(expectStatus(add, 422, 'Invalid').message).toBe(
        `ConfigMap "${name}" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/c"}`,
      );

      const one = await http.patch(
        `${CM}/${name}`,
        { metadata: { finalizers: ['example.com/b'] } },
        'application/merge-patch+json',
      );
      expect(one.status).toBe(200);
      expect(one.json.metadata.finalizers).toEqual(['example.com/b']);
      const last = await http.patch(
        `${CM}/${name}`,
        { metadata: { finalizers: null } },
        'application/merge-patch+json',
      );
      expect(last.status).toBe(200);
      expect((await http.get(`${CM}/${name}`)).status).toBe(404);

      await eventually(() => w.events.some((e) => e.type === 'DELETED'), 5000, 'DELETED');
      // As with etcd: the update that removes the last finalizer is written (MODIFIED, the state
      // the PATCH answered), then the object is deleted.
      expect(w.events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
      expect(w.events[2].object).toEqual(last.json);
      expect(w.events[3].object.metadata.resourceVersion).not.toBe(last.json.metadata.resourceVersion);
    } finally {
      w.close();
    }
  });

  it('records Foreground and Orphan propagation as finalizers', async () => {
    const fg = fresh('fg');
    await create(CM, configMap(fg));
    const r1 = await http.delete(`${CM}/${fg}?propagationPolicy=Foreground`);
    expect(r1.status).toBe(200);
    expect(r1.json.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(r1.json.metadata.deletionTimestamp).toBeTruthy();

    const or = fresh('orphan');
    await create(CM, configMap(or));
    const r2 = await http.send('DELETE', `${CM}/${or}`, {
      raw: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Orphan' }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(r2.status).toBe(200);
    expect(r2.json.metadata.finalizers).toEqual(['orphan']);

    // Background deletes at once, answering with a Success Status for configmaps.
    const bg = fresh('bg');
    const created = await create(CM, configMap(bg));
    const r3 = await http.delete(`${CM}/${bg}?propagationPolicy=Background`);
    expect(r3.status).toBe(200);
    expect(r3.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: bg, kind: 'configmaps', uid: created.metadata.uid },
    });
    // ValidateDeleteOptions: a field error of the DeleteOptions (422), not a decoding error.
    expectStatus(await http.delete(`${CM}/${bg}?propagationPolicy=Sideways`), 422, 'Invalid');
  });

  it('answers 202 when deletion waits and orphanDependents=false was asked', async () => {
    const name = fresh('accepted');
    await create(CM, configMap(name, { metadata: { finalizers: ['example.com/x'] } }));
    const r = await http.send('DELETE', `${CM}/${name}`, {
      raw: JSON.stringify({ orphanDependents: false }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(r.status).toBe(202);
    expect(r.json.metadata.deletionTimestamp).toBeTruthy();
  });

  it('honours a dry run asked for in the DeleteOptions body, as kubectl --dry-run=server does', async () => {
    const name = fresh('drydel');
    await create(CM, configMap(name));
    const r = await http.send('DELETE', `${CM}/${name}`, {
      raw: JSON.stringify({
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        propagationPolicy: 'Background',
        dryRun: ['All'],
      }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(r.status).toBe(200);
    expect((await http.get(`${CM}/${name}`)).status).toBe(200);
    const bad = await http.send('DELETE', `${CM}/${name}`, {
      raw: JSON.stringify({ dryRun: ['Later'] }),
      headers: { 'Content-Type': 'application/json' },
    });
    expectStatus(bad, 422, 'Invalid');
    expect((await http.get(`${CM}/${name}`)).status).toBe(200);
  });

  it('checks preconditions', async () => {
    const name = fresh('pre');
    const o = await create(CM, configMap(name));
    const send = (preconditions: object) =>
      http.send('DELETE', `${CM}/${name}`, {
        raw: JSON.stringify({ preconditions }),
        headers: { 'Content-Type': 'application/json' },
      });
    const uid = expectStatus(await send({ uid: 'not-the-uid' }), 409, 'Conflict');
    expect(uid.message).toBe(
      `Operation cannot be fulfilled on ConfigMap "${name}": the UID in the precondition (not-the-uid) does not match the UID in record (${o.metadata.uid}). The object might have been deleted and then recreated`,
    );
    const rv = expectStatus(await send({ resourceVersion: '1' }), 409, 'Conflict');
    expect(rv.message).toBe(
      `Operation cannot be fulfilled on ConfigMap "${name}": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${o.metadata.resourceVersion}). The object might have been modified`,
    );
    const ok = await send({ uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion });
    expect(ok.status).toBe(200);
    expect((await http.get(`${CM}/${name}`)).status).toBe(404);
  });

  it('deletes collections by selector', async () => {
    const group = fresh('dc');
    for (let i = 0; i < 3; i++)
      await create(
        CM,
        configMap(`${group}-${i}`, { metadata: { labels: { group, keep: i === 0 ? 'yes' : 'no' } } }),
      );
    const r = await http.delete(`${CM}?labelSelector=${encodeURIComponent(`group=${group},keep=no`)}`);
    expect(r.status).toBe(200);
    expect(r.json.kind).toBe('ConfigMapList');
    expect(r.json.items.map((i: any) => i.metadata.name).sort()).toEqual([`${group}-1`, `${group}-2`]);
    const left = await http.get(`${CM}?labelSelector=group%3D${group}`);
    expect(left.json.items.map((i: any) => i.metadata.name)).toEqual([`${group}-0`]);
  });
});

describe('lists', () => {
  it('filters by every label selector operator', async () => {
    const t = fresh('sel');
    const objs: Record<string, Record<string, string>> = {
      a: { t, env: 'prod', tier: 'web' },
      b: { t, env: 'dev', tier: 'web' },
      c: { t, env: 'test' },
      d: { t, tier: 'db' },
    };
    for (const [n, labels] of Object.entries(objs))
      await create(CM, configMap(`${t}-${n}`, { metadata: { labels } }));
    const names = async (sel: string) => {
      const r = await http.get(`${CM}?labelSelector=${encodeURIComponent(`t=${t},${sel}`)}`);
      expect(r.status, r.text).toBe(200);
      return r.json.items.map((i: any) => i.metadata.name.slice(t.length + 1)).sort();
    };
    expect(await names('env=prod')).toEqual(['a']);
    expect(await names('env==prod')).toEqual(['a']);
    expect(await names('env!=prod')).toEqual(['b', 'c', 'd']);
    expect(await names('env in (dev,test)')).toEqual(['b', 'c']);
    expect(await names('env notin (dev,test)')).toEqual(['a', 'd']);
    expect(await names('tier')).toEqual(['a', 'b', 'd']);
    expect(await names('!tier')).toEqual(['c']);
    expect(await names('tier=web,env=dev')).toEqual(['b']);
    const bad = await http.get(`${CM}?labelSelector=${encodeURIComponent('env in (a')}`);
    expectStatus(bad, 400, 'BadRequest');
  });

  it('filters by field selectors, including pod fields', async () => {
    const t = fresh('fs');
    await create(PODS, pod(`${t}-on1`, { t }, 'node-1'));
    await create(PODS, pod(`${t}-on2`, { t }, 'node-2'));
    const running = await create(PODS, pod(`${t}-run`, { t }, 'node-1'));
    const st = await http.put(`${PODS}/${running.metadata.name}/status`, {
      ...running,
      status: { phase: 'Running' },
    });
    expect(st.status, st.text).toBe(200);
    const names = async (fs: string) => {
      const r = await http.get(`${PODS}?labelSelector=t%3D${t}&fieldSelector=${encodeURIComponent(fs)}`);
      expect(r.status, r.text).toBe(200);
      return r.json.items.map((i: any) => i.metadata.name.slice(t.length + 1)).sort();
    };
    expect(await names('spec.nodeName=node-1')).toEqual(['on1', 'run']);
    expect(await names('spec.nodeName!=node-1')).toEqual(['on2']);
    expect(await names('status.phase=Running')).toEqual(['run']);
    expect(await names('status.phase=Pending,spec.nodeName=node-1')).toEqual(['on1']);
    expect(await names(`metadata.name=${t}-on2`)).toEqual(['on2']);
    expect(await names(`metadata.namespace=${NS}`)).toEqual(['on1', 'on2', 'run']);
    const cross = await http.get(
      `/api/v1/pods?fieldSelector=${encodeURIComponent(`metadata.namespace=${NS},spec.nodeName=node-2`)}`,
    );
    expect(cross.json.items.map((i: any) => i.metadata.name)).toEqual([`${t}-on2`]);
    const bad = await http.get(`${CM}?fieldSelector=spec.nodeName%3Dx`);
    expect(expectStatus(bad, 400, 'BadRequest').message).toBe(
      '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
  });

  it('pages with limit and continue, consistent at the first page revision', async () => {
    const t = fresh('page');
    for (let i = 0; i < 5; i++) await create(CM, configMap(`${t}-${i}`, { metadata: { labels: { t } } }));
    const base = `${CM}?labelSelector=t%3D${t}&limit=2`;
    const p1 = await http.get(base);
    expect(p1.json.items.map((i: any) => i.metadata.name)).toEqual([`${t}-0`, `${t}-1`]);
    expect(p1.json.metadata.continue).toBeTruthy();
    const rv = p1.json.metadata.resourceVersion;

    // Change the collection between pages: later pages still show the state at `rv`.
    await http.delete(`${CM}/${t}-3`);
    await http.patch(`${CM}/${t}-2`, { data: { key: 'changed' } }, 'application/merge-patch+json');
    await create(CM, configMap(`${t}-25`, { metadata: { labels: { t } } }));

    const p2 = await http.get(`${base}&continue=${encodeURIComponent(p1.json.metadata.continue)}`);
    expect(p2.status, p2.text).toBe(200);
    expect(p2.json.metadata.resourceVersion).toBe(rv);
    expect(p2.json.items.map((i: any) => i.metadata.name)).toEqual([`${t}-2`, `${t}-3`]);
    expect(p2.json.items[0].data.key).toBe('value');
    const p3 = await http.get(`${base}&continue=${encodeURIComponent(p2.json.metadata.continue)}`);
    expect(p3.json.items.map((i: any) => i.metadata.name)).toEqual([`${t}-4`]);
    expect(p3.json.metadata.continue).toBeUndefined();

    // Without a selector the server counts what is left.
    const all = await http.get(`/api/v1/namespaces/kube-system/configmaps?limit=1`);
    if (all.json.metadata.continue) expect(all.json.metadata.remainingItemCount).toBeGreaterThanOrEqual(1);

    const conflict = await http.get(
      `${base}&resourceVersion=${rv}&continue=${encodeURIComponent(p1.json.metadata.continue)}`,
    );
    expect(expectStatus(conflict, 400, 'BadRequest').message).toBe(
      'specifying resource version is not allowed when using continue',
    );
  });

  it('follows the resourceVersion and resourceVersionMatch rules', async () => {
    const name = fresh('rvm');
    const o = await create(CM, configMap(name, { metadata: { labels: { rvm: name } } }));
    await http.patch(`${CM}/${name}`, { data: { key: 'later' } }, 'application/merge-patch+json');
    const sel = `labelSelector=rvm%3D${name}`;

    const any = await http.get(`${CM}?${sel}&resourceVersion=0`);
    expect(any.json.items[0].data.key).toBe('later');
    const notOlder = await http.get(
      `${CM}?${sel}&resourceVersion=${o.metadata.resourceVersion}&resourceVersionMatch=NotOlderThan`,
    );
    expect(notOlder.json.items[0].data.key).toBe('later');
    expect(Number(notOlder.json.metadata.resourceVersion)).toBeGreaterThan(
      Number(o.metadata.resourceVersion),
    );
    const exact = await http.get(
      `${CM}?${sel}&resourceVersion=${o.metadata.resourceVersion}&resourceVersionMatch=Exact`,
    );
    expect(exact.status, exact.text).toBe(200);
    expect(exact.json.metadata.resourceVersion).toBe(o.metadata.resourceVersion);
    expect(exact.json.items[0].data.key).toBe('value');

    // apimachinery's ValidateListOptions: 422 Invalid, every cause in its order.
    expect(expectStatus(await http.get(`${CM}?resourceVersionMatch=Exact`), 422, 'Invalid').message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    expect(
      expectStatus(await http.get(`${CM}?resourceVersion=0&resourceVersionMatch=Exact`), 422, 'Invalid')
        .message,
    ).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    );
    const several = expectStatus(
      await http.get(`${CM}?resourceVersionMatch=Newest&continue=abc`),
      422,
      'Invalid',
    );
    expect(several.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""]',
    );
    expect(several.details).toMatchObject({ group: 'meta.k8s.io', kind: 'ListOptions' });
    expect(several.details.causes.map((c: { reason: string }) => c.reason)).toEqual([
      'FieldValueForbidden',
      'FieldValueForbidden',
      'FieldValueNotSupported',
    ]);
    // A resourceVersion that is not an unsigned integer: kube-apiserver's storage error, a 500
    // without a reason; asked for exactly, the etcd store's 400.
    const notNumber = await http.get(`${CM}?resourceVersion=abc`);
    expect(notNumber.status).toBe(500);
    expect(notNumber.json.reason).toBeUndefined();
    expect(notNumber.json.message).toBe(
      'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    );
    expect(
      expectStatus(await http.get(`${CM}?resourceVersion=-1&resourceVersionMatch=Exact`), 400, 'BadRequest')
        .message,
    ).toBe(
      'invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax',
    );
    expect((await http.get(`${CM}?resourceVersion=99999999999999999999999`)).json.message).toBe(
      'resourceVersion: Invalid value: "99999999999999999999999": strconv.ParseUint: parsing "99999999999999999999999": value out of range',
    );
    const future = await http.get(`${CM}?resourceVersion=${cp.store.revision + 1000}`);
    const tooLarge = expectStatus(future, 504, 'Timeout');
    expect(tooLarge.message).toMatch(/^Timeout: Too large resource version: \d+, current: \d+$/);
    expect(tooLarge.details.retryAfterSeconds).toBe(1);
    // A GET at a resourceVersion is served at least that fresh: from the future, too large too.
    await create(CM, configMap('rv-get'));
    const getFuture = await http.get(`${CM}/rv-get?resourceVersion=${cp.store.revision + 1000}`);
    expect(expectStatus(getFuture, 504, 'Timeout').message).toMatch(
      /^Timeout: Too large resource version: \d+, current: \d+$/,
    );
    const getBad = await http.get(`${CM}/rv-get?resourceVersion=x1`);
    expect([getBad.status, getBad.json.message]).toEqual([
      500,
      'resourceVersion: Invalid value: "x1": strconv.ParseUint: parsing "x1": invalid syntax',
    ]);
    expect((await http.get(`${CM}/rv-get?resourceVersion=${cp.store.revision}`)).status).toBe(200);
    // An object's own resourceVersion that is not one: the etcd store's 500 with ParseUint's words.
    const put = await http.put(`${CM}/rv-get`, configMap('rv-get', { metadata: { resourceVersion: 'abc' } }));
    expect([put.status, put.json.message]).toEqual([500, 'strconv.ParseUint: parsing "abc": invalid syntax']);
    // A list's timeoutSeconds is read as an int64.
    expect(expectStatus(await http.get(`${CM}?timeoutSeconds=soon`), 400, 'BadRequest').message).toBe(
      'strconv.ParseInt: parsing "soon": invalid syntax',
    );
  });

  it('serves resourceVersion=0 lists whole, as a watch cache does, whatever the limit', async () => {
    const t = fresh('rv0');
    for (let i = 0; i < 3; i++) await create(CM, configMap(`${t}-${i}`, { metadata: { labels: { t } } }));
    const whole = await http.get(`${CM}?labelSelector=t%3D${t}&resourceVersion=0&limit=1`);
    expect(whole.status, whole.text).toBe(200);
    expect(whole.json.items.map((i: any) => i.metadata.name)).toEqual([`${t}-0`, `${t}-1`, `${t}-2`]);
    expect(whole.json.metadata.continue).toBeUndefined();
    expect(whole.json.metadata.remainingItemCount).toBeUndefined();
    // Any other resourceVersion with a limit is paged from storage.
    const rv = whole.json.metadata.resourceVersion;
    const paged = await http.get(`${CM}?labelSelector=t%3D${t}&resourceVersion=${rv}&limit=1`);
    expect(paged.json.items).toHaveLength(1);
    expect(paged.json.metadata.continue).toEqual(expect.any(String));
  });
});

describe('watches', () => {
  it('streams ADDED, MODIFIED and DELETED for changes after the list resourceVersion', async () => {
    const t = fresh('w');
    const list = await http.get(`${CM}?labelSelector=t%3D${t}`);
    const w = http.watch(
      `${CM}?watch=true&labelSelector=t%3D${t}&resourceVersion=${list.json.metadata.resourceVersion}`,
    );
    try {
      const o = await create(CM, configMap(`${t}-a`, { metadata: { labels: { t } } }));
      const m = await http.patch(`${CM}/${t}-a`, { data: { key: 'm' } }, 'application/merge-patch+json');
      const d = await http.delete(`${CM}/${t}-a`);
      expect(d.status).toBe(200);
      await eventually(() => w.events.length >= 3, 5000, 'three events');
      expect(w.status).toBe(200);
      expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
      expect(w.events[0].object.metadata.resourceVersion).toBe(o.metadata.resourceVersion);
      expect(w.events[1].object.data.key).toBe('m');
      expect(w.events[1].object.metadata.resourceVersion).toBe(m.json.metadata.resourceVersion);
      expect(Number(w.events[2].object.metadata.resourceVersion)).toBeGreaterThan(
        Number(m.json.metadata.resourceVersion),
      );
    } finally {
      w.close();
    }
  });

  it('delivers every later change exactly once, in order, from a resourceVersion', async () => {
    const t = fresh('order');
    const start = await http.get(`${CM}?labelSelector=t%3D${t}`);
    const writes: string[] = [];
    const names = [`${t}-a`, `${t}-b`, `${t}-c`];
    for (const n of names)
      writes.push((await create(CM, configMap(n, { metadata: { labels: { t } } }))).metadata.resourceVersion);
    for (let i = 0; i < 12; i++) {
      const r = await http.patch(
        `${CM}/${names[i % 3]}`,
        { data: { i: String(i) } },
        'application/merge-patch+json',
      );
      writes.push(r.json.metadata.resourceVersion);
    }
    // Started after the writes: the history replays them, then live changes follow.
    const w = http.watch(
      `${CM}?watch=1&labelSelector=t%3D${t}&resourceVersion=${start.json.metadata.resourceVersion}`,
    );
    try {
      const r = await http.patch(`${CM}/${t}-a`, { data: { live: 'yes' } }, 'application/merge-patch+json');
      writes.push(r.json.metadata.resourceVersion);
      await eventually(() => w.events.length >= writes.length, 5000, 'all events');
      expect(w.events.map((e) => e.object.metadata.resourceVersion)).toEqual(writes);
      // Watching from the middle replays only what came after.
      const mid = http.watch(`${CM}?watch=1&labelSelector=t%3D${t}&resourceVersion=${writes[9]}`);
      try {
        await eventually(() => mid.events.length >= writes.length - 10, 5000, 'later events');
        expect(mid.events.map((e) => e.object.metadata.resourceVersion)).toEqual(writes.slice(10));
      } finally {
        mid.close();
      }
    } finally {
      w.close();
    }
  });

  it('reports an object entering and leaving a selector as ADDED and DELETED', async () => {
    const t = fresh('trans');
    const o = await create(CM, configMap(t, { metadata: { labels: { watched: 'no' } } }));
    const w = http.watch(
      `${CM}?watch=true&labelSelector=watched%3Dyes&resourceVersion=${o.metadata.resourceVersion}`,
    );
    try {
      await http.patch(
        `${CM}/${t}`,
        { metadata: { labels: { watched: 'yes' } } },
        'application/merge-patch+json',
      );
      await http.patch(`${CM}/${t}`, { data: { key: 'inside' } }, 'application/merge-patch+json');
      const out = await http.patch(
        `${CM}/${t}`,
        { metadata: { labels: { watched: 'no' } } },
        'application/merge-patch+json',
      );
      await http.patch(`${CM}/${t}`, { data: { key: 'outside' } }, 'application/merge-patch+json');
      await eventually(() => w.events.length >= 3, 5000, 'three events');
      expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
      expect(w.events[2].object.metadata.resourceVersion).toBe(out.json.metadata.resourceVersion);
    } finally {
      w.close();
    }
  });

  it('sends bookmarks when allowed, and ends cleanly at timeoutSeconds', async () => {
    const w = http.watch(
      `${CM}?watch=true&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=${cp.store.revision}`,
    );
    // Without allowWatchBookmarks there are none.
    const plain = http.watch(`${CM}?watch=true&timeoutSeconds=1&resourceVersion=${cp.store.revision}`);
    await eventually(() => w.ended && plain.ended, 5000, 'the end of the watches');
    expect(w.status).toBe(200);
    const bookmarks = w.events.filter((e) => e.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThan(0);
    expect(bookmarks[0].object).toEqual({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { resourceVersion: expect.stringMatching(/^\d+$/), creationTimestamp: null },
    });
    expect(plain.status).toBe(200);
    expect(plain.events.filter((e) => e.type === 'BOOKMARK')).toEqual([]);
  });

  it('streams the current state first with sendInitialEvents, ending with an annotated bookmark', async () => {
    const t = fresh('init');
    for (const n of ['a', 'b']) await create(CM, configMap(`${t}-${n}`, { metadata: { labels: { t } } }));
    const w = http.watch(
      `${CM}?watch=true&labelSelector=t%3D${t}&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
    );
    try {
      await eventually(
        () => w.events.some((e) => e.type === 'BOOKMARK'),
        5000,
        'the initial-events-end bookmark',
      );
      const [a, b, end] = w.events;
      expect([a.type, b.type]).toEqual(['ADDED', 'ADDED']);
      expect([a.object.metadata.name, b.object.metadata.name]).toEqual([`${t}-a`, `${t}-b`]);
      expect(end.type).toBe('BOOKMARK');
      expect(end.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
      expect(Number(end.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(
        Number(b.object.metadata.resourceVersion),
      );
      const c = await create(CM, configMap(`${t}-c`, { metadata: { labels: { t } } }));
      await eventually(
        () => w.events.some((e) => e.object.metadata?.name === `${t}-c`),
        5000,
        'the live event',
      );
      expect(
        w.events.find((e) => e.type === 'ADDED' && e.object.metadata.name === `${t}-c`)?.object.metadata
          .resourceVersion,
      ).toBe(c.metadata.resourceVersion);
    } finally {
      w.close();
    }
    // sendInitialEvents requires bookmarks.
    const r = await http.get(`${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`);
    expect(expectStatus(r, 422, 'Invalid').details.causes[0].field).toBe('allowWatchBookmarks');
  });

  it('sends a large snapshot as the client reads it, and the changes made meanwhile after its end', async () => {
    const t = fresh('big');
    const data = { blob: 'x'.repeat(4096) };
    const names = Array.from({ length: 2000 }, (_, i) => `${t}-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map((n) => create(CM, configMap(n, { metadata: { labels: { t } }, data }))),
      );
    }
    const w = http.watch(
      `${CM}?watch=true&labelSelector=t%3D${t}&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
      {},
      { paused: true },
    );
    try {
      await eventually(() => w.status === 200, 5000, 'the response');
      // 8 MB do not fit in the connection's buffers: the server is still sending the snapshot.
      const changed = await http.patch(
        `${CM}/${names[7]}`,
        { data: { k: '1' } },
        'application/merge-patch+json',
      );
      const added = await create(CM, configMap(`${t}-new`, { metadata: { labels: { t } } }));
      await http.delete(`${CM}/${names[9]}`);
      w.resume();
      await eventually(
        () => w.events.some((e) => e.type === 'DELETED'),
        10_000,
        'the snapshot and the changes',
      );
      const end = w.events.findIndex((e) => e.type === 'BOOKMARK');
      expect(end).toBe(names.length);
      expect(w.events[end].object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
      const initial = w.events.slice(0, end);
      expect(initial.every((e) => e.type === 'ADDED')).toBe(true);
      expect(initial.map((e) => e.object.metadata.name)).toEqual(names);
      const bookmarkRv = Number(w.events[end].object.metadata.resourceVersion);
      expect(initial.every((e) => Number(e.object.metadata.resourceVersion) <= bookmarkRv)).toBe(true);
      // After the snapshot: the changes, in order (and periodic bookmarks).
      const after = w.events.slice(end + 1).filter((e) => e.type !== 'BOOKMARK');
      expect(after.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['MODIFIED', names[7]],
        ['ADDED', `${t}-new`],
        ['DELETED', names[9]],
      ]);
      expect(after[0].object.metadata.resourceVersion).toBe(changed.json.metadata.resourceVersion);
      expect(after[1].object.metadata.resourceVersion).toBe(added.metadata.resourceVersion);
      expect(Number(changed.json.metadata.resourceVersion)).toBeGreaterThan(bookmarkRv);
    } finally {
      w.close();
    }
  });

  it('sends initial events in the representation asked for, objects of any size included', async () => {
    const t = fresh('repr');
    const big = { blob: 'y'.repeat(300_000) }; // larger than a batch of the snapshot
    await create(CM, configMap(`${t}-a`, { metadata: { labels: { t } } }));
    await create(CM, configMap(`${t}-big`, { metadata: { labels: { t } }, data: big }));
    await create(CM, configMap(`${t}-c`, { metadata: { labels: { t } } }));
    const query = `${CM}?watch=true&labelSelector=t%3D${t}&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`;
    const plain = http.watch(query);
    const meta = http.watch(query, {
      Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
    });
    try {
      for (const w of [plain, meta]) {
        await eventually(() => w.events.some((e) => e.type === 'BOOKMARK'), 5000, 'the end bookmark');
      }
      expect(plain.events.slice(0, 3).map((e) => [e.type, e.object.kind, e.object.metadata.name])).toEqual([
        ['ADDED', 'ConfigMap', `${t}-a`],
        ['ADDED', 'ConfigMap', `${t}-big`],
        ['ADDED', 'ConfigMap', `${t}-c`],
      ]);
      expect(plain.events[1].object.data).toEqual(big);
      expect(
        meta.events.slice(0, 3).map((e) => [e.object.kind, e.object.metadata.name, e.object.data]),
      ).toEqual([
        ['PartialObjectMetadata', `${t}-a`, undefined],
        ['PartialObjectMetadata', `${t}-big`, undefined],
        ['PartialObjectMetadata', `${t}-c`, undefined],
      ]);
    } finally {
      plain.close();
      meta.close();
    }
  });

  it('watches one object through its path', async () => {
    const name = fresh('one');
    const o = await create(CM, configMap(name));
    await create(CM, configMap(fresh('other')));
    const w = http.watch(
      `/api/v1/watch/namespaces/${NS}/configmaps/${name}?resourceVersion=${o.metadata.resourceVersion}`,
    );
    try {
      await http.patch(`${CM}/${name}`, { data: { key: 'x' } }, 'application/merge-patch+json');
      await create(CM, configMap(fresh('other')));
      await http.delete(`${CM}/${name}`);
      await eventually(() => w.events.some((e) => e.type === 'DELETED'), 5000, 'DELETED');
      expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['MODIFIED', name],
        ['DELETED', name],
      ]);
    } finally {
      w.close();
    }
  });
});

describe('with a short history', () => {
  let small: ControlPlane;
  let h: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    small = await startTestEnv({ watchHistorySize: 5, bookmarkIntervalMs: 100 });
    h = httpClient(small);
  });
  afterAll(async () => {
    h?.close();
    await small?.stop();
  });

  const churn = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await h.post(CM, configMap(fresh('churn')));
      expect(r.status).toBe(201);
    }
  };

  it('expires a continue token once the history moved past it', async () => {
    for (let i = 0; i < 3; i++)
      await h.post(CM, configMap(`page-${i}`, { metadata: { labels: { p: 'x' } } }));
    const p1 = await h.get(`${CM}?labelSelector=p%3Dx&limit=1`);
    expect(p1.json.metadata.continue).toBeTruthy();
    await churn(10);
    const p2 = await h.get(
      `${CM}?labelSelector=p%3Dx&limit=1&continue=${encodeURIComponent(p1.json.metadata.continue)}`,
    );
    const s = expectStatus(p2, 410, 'Expired');
    expect(s.message).toBe(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    );
    // The Status carries a token that continues inconsistently, at the current state.
    expect(s.metadata.continue).toBeTruthy();
    const rest = await h.get(
      `${CM}?labelSelector=p%3Dx&limit=5&continue=${encodeURIComponent(s.metadata.continue)}`,
    );
    expect(rest.status, rest.text).toBe(200);
    expect(rest.json.items.map((i: any) => i.metadata.name)).toEqual(['page-1', 'page-2']);
  });

  it('refuses an Exact list older than the history with 410', async () => {
    const old = small.store.oldestRevision;
    await churn(10);
    const r = await h.get(`${CM}?resourceVersion=${old}&resourceVersionMatch=Exact`);
    expect(expectStatus(r, 410, 'Expired').message).toBe(
      'The resourceVersion for the provided list is too old.',
    );
  });

  it('answers a watch from a too-old resourceVersion with an ERROR event carrying a 410 Status', async () => {
    await churn(10);
    const w = h.watch(`${CM}?watch=true&resourceVersion=1`);
    await eventually(() => w.ended, 5000, 'the end of the watch');
    expect(w.status).toBe(200);
    expect(w.events).toHaveLength(1);
    expect(w.events[0].type).toBe('ERROR');
    expect(statusProblems(410, w.events[0].object)).toEqual([]);
    expect(w.events[0].object.reason).toBe('Expired');
    expect(w.events[0].object.message).toMatch(/^too old resource version: 1 \(\d+\)$/);
  });
});

describe('representations', () => {
  it('renders Tables for kubectl, with includeObject', async () => {
    const name = fresh('tbl');
    await create(CM, configMap(name, { data: { a: '1', b: '2' } }));
    const one = await http.get(`${CM}/${name}`, { headers: { Accept: TABLE } });
    expect(one.status).toBe(200);
    expect(one.json.kind).toBe('Table');
    expect(one.json.apiVersion).toBe('meta.k8s.io/v1');
    expect(one.json.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Data', 'Age']);
    expect(one.json.rows).toHaveLength(1);
    expect(one.json.rows[0].cells.slice(0, 2)).toEqual([name, 2]);
    expect(one.json.rows[0].object.kind).toBe('PartialObjectMetadata');
    expect(one.json.rows[0].object.metadata.name).toBe(name);

    const list = await http.get(`${CM}?includeObject=None&limit=500`, { headers: { Accept: TABLE } });
    expect(list.json.kind).toBe('Table');
    expect(list.json.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(list.json.rows.every((r: any) => r.object === undefined)).toBe(true);
    const full = await http.get(`${CM}?includeObject=Object`, { headers: { Accept: TABLE } });
    expect(full.json.rows.find((r: any) => r.cells[0] === name).object.data).toEqual({ a: '1', b: '2' });

    const deploys = await http.get(DEPLOY, { headers: { Accept: TABLE } });
    expect(deploys.json.columnDefinitions.map((c: any) => c.name).slice(0, 5)).toEqual([
      'Name',
      'Ready',
      'Up-to-date',
      'Available',
      'Age',
    ]);
  });

  it('renders PartialObjectMetadata and PartialObjectMetadataList', async () => {
    const name = fresh('pom');
    await create(CM, configMap(name));
    const list = await http.get(CM, {
      headers: {
        Accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json',
      },
    });
    expect(list.json.kind).toBe('PartialObjectMetadataList');
    expect(list.json.apiVersion).toBe('meta.k8s.io/v1');
    const item = list.json.items.find((i: any) => i.metadata.name === name);
    expect(item).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: expect.any(Object),
    });
    const one = await http.get(`${CM}/${name}`, {
      headers: { Accept: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' },
    });
    expect(one.json.kind).toBe('PartialObjectMetadata');
    expect(one.json.data).toBeUndefined();
    expect(one.json.metadata.uid).toBeTruthy();
    // Protobuf is served now (unknown media type parameters are ignored): only an unknown type is refused.
    const none = await http.get(CM, { headers: { Accept: 'text/html' } });
    expectStatus(none, 406, 'NotAcceptable');
  });
});

describe('discovery', () => {
  it('serves /api, /apis and the resource lists', async () => {
    const api = await http.get('/api');
    expect(api.json.kind).toBe('APIVersions');
    expect(api.json.versions).toEqual(['v1']);

    const apis = await http.get('/apis');
    expect(apis.json.kind).toBe('APIGroupList');
    const apps = apis.json.groups.find((g: any) => g.name === 'apps');
    expect(apps.preferredVersion).toEqual({ groupVersion: 'apps/v1', version: 'v1' });

    const core = await http.get('/api/v1');
    expect(core.json.kind).toBe('APIResourceList');
    expect(core.json.groupVersion).toBe('v1');
    const cm = core.json.resources.find((r: any) => r.name === 'configmaps');
    expect(cm).toMatchObject({
      singularName: 'configmap',
      namespaced: true,
      kind: 'ConfigMap',
      shortNames: ['cm'],
    });
    expect([...cm.verbs].sort()).toEqual([
      'create',
      'delete',
      'deletecollection',
      'get',
      'list',
      'patch',
      'update',
      'watch',
    ]);
    expect(core.json.resources.find((r: any) => r.name === 'pods/status')).toMatchObject({
      kind: 'Pod',
      verbs: ['get', 'patch', 'update'],
    });
    const ns = core.json.resources.find((r: any) => r.name === 'namespaces');
    expect(ns.namespaced).toBe(false);

    const appsV1 = await http.get('/apis/apps/v1');
    const scale = appsV1.json.resources.find((r: any) => r.name === 'deployments/scale');
    expect(scale).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect(appsV1.json.resources.find((r: any) => r.name === 'deployments').categories).toEqual(['all']);

    const group = await http.get('/apis/apps');
    expect(group.json.kind).toBe('APIGroup');
    expect((await http.get('/apis/nope.example.com')).status).toBe(404);

    const aggregated = await http.get('/apis', {
      headers: {
        Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
      },
    });
    expect(aggregated.headers['content-type']).toBe(
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    expect(aggregated.json.kind).toBe('APIGroupDiscoveryList');
    expect(aggregated.json.items.some((g: any) => g.metadata.name === 'apps')).toBe(true);

    const version = await http.get('/version');
    expect(version.json.major).toBe('1');
  });
});

describe('authentication', () => {
  it('answers 401 to a wrong token, and 403 to a request without one (system:anonymous)', async () => {
    const wrong = expectStatus(await http.get(CM, { token: 'wrong-token' }), 401, 'Unauthorized');
    expect(wrong.message).toBe('Unauthorized');
    const anonymous = expectStatus(await http.get(CM, { token: null }), 403, 'Forbidden');
    expect(anonymous.message).toBe(
      `configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "${NS}"`,
    );
  });

  it('serves health and version to anyone as long as RBAC lets everyone read them', async () => {
    // kube's bootstrap policy does it with system:public-info-viewer; created here where absent.
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    const role = {
      metadata: { name: 'system:public-info-viewer' },
      rules: [
        { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
      ],
    };
    const binding = {
      metadata: { name: 'test-public-info' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' }],
    };
    expect([201, 409]).toContain((await http.post(`${rbac}/clusterroles`, role)).status);
    expect((await http.post(`${rbac}/clusterrolebindings`, binding)).status).toBe(201);
    for (const path of ['/healthz', '/livez', '/readyz', '/version'])
      expect((await http.get(path, { token: null })).status, path).toBe(200);
  });
});

describe('subresources', () => {
  it('writes only status through /status, and ignores status on the main resource', async () => {
    const name = fresh('st');
    const p = await create(PODS, pod(name, { app: 'x' }));
    expect(p.status.phase).toBe('Pending');
    const body = {
      ...p,
      metadata: { ...p.metadata, labels: { app: 'changed' } },
      spec: { ...p.spec, activeDeadlineSeconds: 5 },
      status: { phase: 'Running', podIP: '10.0.0.7' },
    };
    const st = await http.put(`${PODS}/${name}/status`, body);
    expect(st.status, st.text).toBe(200);
    expect(st.json.status.phase).toBe('Running');
    // kube's podStatusStrategy resets the spec (and owner references) but lets labels change.
    expect(st.json.metadata.labels).toEqual({ app: 'changed' });
    expect(st.json.spec.activeDeadlineSeconds).toBeUndefined();

    const patched = await http.patch(
      `${PODS}/${name}/status`,
      { status: { podIP: '10.0.0.8' } },
      'application/merge-patch+json',
    );
    expect(patched.json.status).toMatchObject({ phase: 'Running', podIP: '10.0.0.8' });

    const main = await http.patch(
      `${PODS}/${name}`,
      { status: { phase: 'Failed' }, metadata: { labels: { app: 'y' } } },
      'application/merge-patch+json',
    );
    expect(main.json.status.phase).toBe('Running');
    expect(main.json.metadata.labels).toEqual({ app: 'y' });
    expect((await http.get(`${PODS}/${name}/status`)).json.status.phase).toBe('Running');
  });

  it('reads and writes replicas through /scale', async () => {
    const name = fresh('sc');
    await create(DEPLOY, deployment(name, 2));
    const scale = await http.get(`${DEPLOY}/${name}/scale`);
    expect(scale.status).toBe(200);
    expect(scale.json).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name, namespace: NS },
      spec: { replicas: 2 },
      status: { replicas: 0, selector: `app=${name}` },
    });
    const put = await http.put(`${DEPLOY}/${name}/scale`, { ...scale.json, spec: { replicas: 5 } });
    expect(put.status, put.text).toBe(200);
    expect(put.json.spec.replicas).toBe(5);
    expect((await http.get(`${DEPLOY}/${name}`)).json.spec.replicas).toBe(5);
    const patched = await http.patch(
      `${DEPLOY}/${name}/scale`,
      { spec: { replicas: 1 } },
      'application/merge-patch+json',
    );
    expect(patched.json.spec.replicas).toBe(1);
    const d = (await http.get(`${DEPLOY}/${name}`)).json;
    expect(d.spec.replicas).toBe(1);
    expect(d.metadata.generation).toBe(3);
    const stale = await http.put(`${DEPLOY}/${name}/scale`, { ...scale.json, spec: { replicas: 4 } });
    expectStatus(stale, 409, 'Conflict');
    const negative = await http.put(`${DEPLOY}/${name}/scale`, { ...patched.json, spec: { replicas: -1 } });
    expectStatus(negative, 422, 'Invalid');
    expectStatus(await http.get(`${CM}/x/scale`), 404, 'NotFound');
  });
});
