import { eventually } from '@kubeloop/server/testing';
import {
  ApiError,
  Client,
  ConfigMap,
  Deployment,
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isUnauthorized,
  Namespace,
  Pod,
  type Status,
} from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientEnv, rejection, startClientEnv } from './helpers.js';

let t: ClientEnv;
const warnings: string[] = [];
beforeAll(async () => {
  t = await startClientEnv({ client: { onWarning: (w) => warnings.push(w) } });
});
afterAll(() => t.stop());

const deployment = (name: string, replicas = 1): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'main', image: 'nginx:1', ports: [{ containerPort: 80 }] }] },
    },
  },
});

const isStatus = (x: unknown): x is Status => (x as { kind?: string }).kind === 'Status';

describe('get, create, update, list', () => {
  it('creates, reads and replaces with optimistic concurrency', async () => {
    const cms = t.client.api(ConfigMap, 'default');
    const created = await cms.create({ metadata: { name: 'crud-1' }, data: { a: '1' } });
    expect(created).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: 'default' },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);

    const got = await cms.get('crud-1');
    expect(got.data).toEqual({ a: '1' });

    const updated = await cms.update({ ...got, data: { a: '2' } });
    expect(updated.data).toEqual({ a: '2' });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(got.metadata?.resourceVersion));

    // The copy read before the update is stale now.
    const stale = await rejection<ApiError>(cms.update({ ...got, data: { a: '3' } }));
    expect(isConflict(stale)).toBe(true);
    expect(stale.message).toBe(
      'Operation cannot be fulfilled on configmaps "crud-1": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('maps error answers to ApiError with code, reason, message and details', async () => {
    const cms = t.client.api(ConfigMap, 'default');
    const missing = await rejection<ApiError>(cms.get('nope'));
    expect(missing).toBeInstanceOf(ApiError);
    expect(isNotFound(missing)).toBe(true);
    expect([missing.code, missing.reason, missing.message]).toEqual([
      404,
      'NotFound',
      'configmaps "nope" not found',
    ]);
    expect(missing.details).toEqual({ name: 'nope', kind: 'configmaps' });

    await cms.create({ metadata: { name: 'dup' } });
    const dup = await rejection<ApiError>(cms.create({ metadata: { name: 'dup' } }));
    expect(isAlreadyExists(dup)).toBe(true);

    const bad = await rejection<ApiError>(cms.create({ metadata: { name: 'Bad_Name' } }));
    expect(isInvalid(bad)).toBe(true);
    expect(bad.code).toBe(422);
    expect(bad.details?.causes?.[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });

    const inMissingNs = await rejection<ApiError>(
      t.client.api(ConfigMap, 'no-such-ns').create({ metadata: { name: 'x' } }),
    );
    expect(isNotFound(inMissingNs)).toBe(true);
    expect(inMissingNs.message).toBe('namespaces "no-such-ns" not found');

    const unsupported = await rejection<ApiError>(t.client.api(Namespace).deleteCollection());
    expect([unsupported.code, unsupported.reason]).toEqual([405, 'MethodNotAllowed']);

    const tooBig = await rejection<ApiError>(
      cms.create({ metadata: { name: 'big' }, data: { x: 'x'.repeat(3 * 1024 * 1024 + 10) } }),
    );
    expect([tooBig.code, tooBig.reason]).toEqual([413, 'RequestEntityTooLarge']);

    const wrongToken = new Client({ server: t.env.url, caData: t.env.clientConfig.caData, token: 'wrong' });
    const unauth = await rejection<ApiError>(wrongToken.api(ConfigMap).list());
    await wrongToken.close();
    expect(isUnauthorized(unauth)).toBe(true);
    expect(unauth.code).toBe(401);
  });

  it('answers 403 Forbidden for creating in a terminating namespace', async () => {
    const nss = t.client.api(Namespace);
    await nss.create({ metadata: { name: 'doomed' } });
    await t.client
      .api(ConfigMap, 'doomed')
      .create({ metadata: { name: 'keep', finalizers: ['example.com/hold'] } });
    await nss.delete('doomed');
    const err = await rejection<ApiError>(
      t.client.api(ConfigMap, 'doomed').create({ metadata: { name: 'late' } }),
    );
    expect(isForbidden(err)).toBe(true);
    // Let the namespace go.
    await t.client.api(ConfigMap, 'doomed').patch('keep', { metadata: { finalizers: null } });
  });

  it('lists with label selectors in every form and field selectors', async () => {
    const cms = t.client.api(ConfigMap, 'default');
    for (const [name, labels] of [
      ['sel-a', { app: 'web', tier: 'front' }],
      ['sel-b', { app: 'web', tier: 'back' }],
      ['sel-c', { app: 'db' }],
    ] as const) {
      await cms.create({ metadata: { name, labels } });
    }
    const names = (l: { items: ConfigMap[] }) => l.items.map((i) => i.metadata?.name).sort();
    expect(names(await cms.list({ labelSelector: 'app=web' }))).toEqual(['sel-a', 'sel-b']);
    expect(names(await cms.list({ labelSelector: { app: 'web', tier: 'back' } }))).toEqual(['sel-b']);
    expect(
      names(
        await cms.list({
          labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['db', 'x'] }] },
        }),
      ),
    ).toEqual(['sel-c']);
    expect(names(await cms.list({ labelSelector: 'app,!tier' }))).toEqual(['sel-c']);
    expect(names(await cms.list({ fieldSelector: { 'metadata.name': 'sel-b' } }))).toEqual(['sel-b']);
    expect(
      names(await cms.list({ labelSelector: 'app=web', fieldSelector: 'metadata.name!=sel-a' })),
    ).toEqual(['sel-b']);
    const badSelector = await rejection<ApiError>(cms.list({ fieldSelector: 'spec.nope=1' }));
    expect(isBadRequest(badSelector)).toBe(true);
  });

  it('lists across all namespaces with an empty namespace, and needs one for single objects', async () => {
    await t.client.api(Namespace).create({ metadata: { name: 'other' } });
    await t.client
      .api(ConfigMap, 'other')
      .create({ metadata: { name: 'across', labels: { across: 'yes' } } });
    await t.client
      .api(ConfigMap, 'default')
      .create({ metadata: { name: 'across', labels: { across: 'yes' } } });
    const all = t.client.api(ConfigMap, '');
    const list = await all.list({ labelSelector: { across: 'yes' } });
    expect(list.items.map((i) => i.metadata?.namespace).sort()).toEqual(['default', 'other']);
    await expect(all.get('across')).rejects.toThrow(TypeError);
    // A single-object call on an all-namespaces API takes the object's namespace.
    const viaObject = await all.update({ ...list.items[0]!, data: { x: '1' } });
    expect(viaObject.data).toEqual({ x: '1' });
    expect(all.inNamespace('other').namespace).toBe('other');
  });

  it('pages through a list with limit/continue at one consistent revision', async () => {
    await t.client.api(Namespace).create({ metadata: { name: 'paging' } });
    const cms = t.client.api(ConfigMap, 'paging');
    for (let i = 0; i < 25; i++) await cms.create({ metadata: { name: `p-${String(i).padStart(2, '0')}` } });
    const pages: string[][] = [];
    let rv: string | undefined;
    for await (const page of cms.listPages({ limit: 10 })) {
      pages.push(page.items.map((i) => i.metadata?.name ?? ''));
      rv ??= page.metadata.resourceVersion;
      expect(page.metadata.resourceVersion).toBe(rv);
      // Written after the first page: not part of this consistent list.
      if (pages.length === 1) await cms.create({ metadata: { name: 'p-99-late' } });
    }
    // 25 plus the namespace's kube-root-ca.crt; the late object is not part of this list.
    expect(pages.map((p) => p.length)).toEqual([10, 10, 6]);
    expect(pages.flat()).not.toContain('p-99-late');
    const one = await cms.list({ limit: 5 });
    expect(one.items).toHaveLength(5);
    expect(one.metadata.continue).toBeTruthy();
    expect(one.metadata.remainingItemCount).toBe(22);
  });
});

describe('patch', () => {
  it('merge-patches (null deletes), JSON-patches and strategic-merge-patches', async () => {
    const cms = t.client.api(ConfigMap, 'default');
    await cms.create({ metadata: { name: 'patchy' }, data: { a: '1', b: '2' } });
    const merged = await cms.patch('patchy', { data: { a: null, c: '3' } });
    expect(merged.data).toEqual({ b: '2', c: '3' });
    const jsonPatched = await cms.patch(
      'patchy',
      [
        { op: 'test', path: '/data/b', value: '2' },
        { op: 'replace', path: '/data/b', value: 'two' },
        { op: 'remove', path: '/data/c' },
      ],
      { type: 'json' },
    );
    expect(jsonPatched.data).toEqual({ b: 'two' });
    const failedTest = await rejection<ApiError>(
      cms.patch('patchy', [{ op: 'test', path: '/data/b', value: 'nope' }], { type: 'json' }),
    );
    expect(failedTest).toBeInstanceOf(ApiError);

    const deps = t.client.api(Deployment, 'default');
    await deps.create(deployment('smp'));
    const smp = await deps.patch(
      'smp',
      { spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'busybox' }] } } } },
      { type: 'strategic' },
    );
    // Strategic merge: containers merge by name; a merge patch would have replaced the list.
    expect(smp.spec?.template.spec?.containers.map((c) => c.name).sort()).toEqual(['main', 'sidecar']);
  });

  it('sends dryRun, fieldManager and fieldValidation on writes', async () => {
    const cms = t.client.api(ConfigMap, 'default');
    const dry = await cms.create({ metadata: { name: 'dry' }, data: { a: '1' } }, { dryRun: true });
    expect(dry.metadata?.name).toBe('dry');
    expect(isNotFound(await rejection(cms.get('dry')))).toBe(true);

    await cms.create({ metadata: { name: 'wet' }, data: { a: '1' } }, { fieldManager: 'tester' });
    await cms.patch('wet', { data: { a: '2' } }, { dryRun: true });
    expect((await cms.get('wet')).data).toEqual({ a: '1' });
    await cms.delete('wet', { dryRun: true });
    expect((await cms.get('wet')).data).toEqual({ a: '1' });

    const unknown = { metadata: { name: 'strict' }, data: {}, bogus: 1 } as ConfigMap;
    const strict = await rejection<ApiError>(cms.create(unknown, { fieldValidation: 'Strict' }));
    expect(isBadRequest(strict)).toBe(true);
    expect(strict.message).toContain('unknown field "bogus"');

    warnings.length = 0;
    await cms.create({ ...unknown, metadata: { name: 'warned' } }, { fieldValidation: 'Warn' });
    expect(warnings).toEqual(['unknown field "bogus"']);
    warnings.length = 0;
    await cms.create({ ...unknown, metadata: { name: 'ignored' } }, { fieldValidation: 'Ignore' });
    expect(warnings).toEqual([]);
  });
});

describe('delete', () => {
  it('deletes with propagation policies, preconditions and grace periods', async () => {
    const cms = t.client.api(ConfigMap, 'default');
    const a = await cms.create({ metadata: { name: 'del-a' } });
    const precondition = await rejection<ApiError>(
      cms.delete('del-a', { preconditions: { uid: 'not-the-uid' } }),
    );
    expect(isConflict(precondition)).toBe(true);
    expect(precondition.message).toContain('the UID in the precondition (not-the-uid) does not match');
    const staleRv = await rejection<ApiError>(
      cms.delete('del-a', { preconditions: { resourceVersion: '1' } }),
    );
    expect(isConflict(staleRv)).toBe(true);

    const gone = await cms.delete('del-a', {
      preconditions: { uid: a.metadata!.uid!, resourceVersion: a.metadata!.resourceVersion! },
      gracePeriodSeconds: 0,
    });
    expect(isStatus(gone) && gone.status).toBe('Success');
    expect(isNotFound(await rejection(cms.get('del-a')))).toBe(true);

    await cms.create({ metadata: { name: 'del-fg' } });
    const fg = await cms.delete('del-fg', { propagationPolicy: 'Foreground' });
    expect(isStatus(fg)).toBe(false);
    expect((fg as ConfigMap).metadata?.deletionTimestamp).toBeTruthy();
    expect((fg as ConfigMap).metadata?.finalizers).toEqual(['foregroundDeletion']);
    // The garbage collector may finish the foreground deletion (no dependents) before we do.
    await cms.patch('del-fg', { metadata: { finalizers: null } }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    expect(isNotFound(await rejection(cms.get('del-fg')))).toBe(true);

    await cms.create({ metadata: { name: 'del-orphan' } });
    const orphan = await cms.delete('del-orphan', { propagationPolicy: 'Orphan' });
    expect((orphan as ConfigMap).metadata?.finalizers).toEqual(['orphan']);

    // Pods answer deletes with the object.
    const pods = t.client.api(Pod, 'default');
    await pods.create({
      metadata: { name: 'del-pod' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const pod = await pods.delete('del-pod', { gracePeriodSeconds: 0 });
    expect((pod as Pod).kind).toBe('Pod');
  });

  it('deletes a collection by selector', async () => {
    await t.client.api(Namespace).create({ metadata: { name: 'bulk' } });
    const cms = t.client.api(ConfigMap, 'bulk');
    for (const [name, group] of [
      ['b1', 'x'],
      ['b2', 'x'],
      ['b3', 'y'],
    ]) {
      await cms.create({ metadata: { name: name!, labels: { group: group! } } });
    }
    const dry = await cms.deleteCollection({ labelSelector: { group: 'x' }, dryRun: true });
    expect(isStatus(dry) ? [] : dry.items).toHaveLength(2);
    expect((await cms.list({ labelSelector: { group: 'x' } })).items).toHaveLength(2);
    const deleted = await cms.deleteCollection({ labelSelector: { group: 'x' } });
    expect(isStatus(deleted) ? [] : deleted.items.map((i) => i.metadata?.name).sort()).toEqual(['b1', 'b2']);
    expect((await cms.list({ labelSelector: 'group' })).items.map((i) => i.metadata?.name)).toEqual(['b3']);
  });
});

describe('subresources and cluster-scoped kinds', () => {
  it('reads and writes the status subresource', async () => {
    const deps = t.client.api(Deployment, 'default');
    const d = await deps.create(deployment('status-demo'));
    const withStatus = await deps.updateStatus({ ...d, status: { replicas: 1, updatedReplicas: 1 } });
    expect(withStatus.status).toMatchObject({ replicas: 1, updatedReplicas: 1 });
    expect(withStatus.metadata?.generation).toBe(d.metadata?.generation);
    // The main resource ignores status.
    const main = await deps.update({ ...withStatus, status: { replicas: 9 } });
    expect(main.status?.replicas).toBe(1);
    const patched = await deps.patchStatus('status-demo', { status: { readyReplicas: 1 } });
    expect(patched.status).toMatchObject({ replicas: 1, readyReplicas: 1 });
    expect((await deps.getStatus('status-demo')).status?.readyReplicas).toBe(1);
    const viaClient = await t.client.patchStatus(patched, { observedGeneration: 5 });
    expect(viaClient.status?.observedGeneration).toBe(5);
  });

  it('reads and writes the scale subresource', async () => {
    const deps = t.client.api(Deployment, 'default');
    await deps.create(deployment('scaled', 2));
    const scale = await deps.getScale('scaled');
    expect(scale).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 2 } });
    const up = await deps.updateScale('scaled', { ...scale, spec: { replicas: 4 } });
    expect(up.spec?.replicas).toBe(4);
    expect((await deps.get('scaled')).spec?.replicas).toBe(4);
    const down = await deps.patchScale('scaled', { spec: { replicas: 1 } });
    expect(down.spec?.replicas).toBe(1);
    expect((await deps.get('scaled')).spec?.replicas).toBe(1);
  });

  it('addresses cluster-scoped kinds without a namespace', async () => {
    const nss = t.client.api(Namespace, 'ignored-for-cluster-scoped');
    const ns = await nss.create({ metadata: { name: 'scoped' } });
    expect(ns.status?.phase).toBe('Active');
    expect((await nss.get('scoped')).metadata?.uid).toBe(ns.metadata?.uid);
    const terminating = await nss.delete('scoped');
    expect((terminating as Namespace).status?.phase).toBe('Terminating');
    await eventually(async () => isNotFound(await rejection(nss.get('scoped'))), 10_000, 'namespace removal');
  });
});

describe('object-level client calls', () => {
  it('finds kind and namespace from the object', async () => {
    const c = t.client;
    const cm = await c.create<ConfigMap>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'obj-level' },
      data: { a: '1' },
    });
    expect(cm.metadata?.namespace).toBe('default');
    expect((await c.get(ConfigMap, 'obj-level')).data).toEqual({ a: '1' });
    const updated = await c.update<ConfigMap>({ ...cm, data: { a: '2' } });
    const patched = await c.patch(updated, { data: { b: '3' } });
    expect(patched.data).toEqual({ a: '2', b: '3' });
    const jsonPatched = await c.patch(patched, [{ op: 'remove', path: '/data/b' }], { type: 'json' });
    expect(jsonPatched.data).toEqual({ a: '2' });
    await c.delete(jsonPatched);
    expect(isNotFound(await rejection(c.get(ConfigMap, 'obj-level')))).toBe(true);
    await expect(c.create({ metadata: { name: 'x' } } as ConfigMap)).rejects.toThrow(TypeError);
    const version = await c.version();
    expect(version.gitVersion).toMatch(/^v1\.\d+/);
  });

  it('surfaces a list continuation that is too old as a 410', async () => {
    const remove = t.env.faults.inject({
      match: { verb: 'list', resource: 'configmaps' },
      action: { status: 410 },
      times: 1,
    });
    try {
      const err = await rejection<ApiError>(t.client.api(ConfigMap).list({ continue: 'opaque' }));
      expect(isGone(err)).toBe(true);
    } finally {
      remove();
    }
  });
});
