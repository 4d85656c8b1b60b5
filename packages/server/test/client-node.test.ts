/**
 * The official JavaScript client, `@kubernetes/client-node` 1.x, against the local server:
 * CRUD of a ConfigMap and a Deployment (including a merge patch), a watch round trip, and an
 * informer (list + watch) that sees objects come and go.
 */
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Deployment,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../src/index.js';
import { eventually } from './kubectl.js';

const NS = 'default';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let cp: ControlPlane;
let kc: KubeConfig;
let core: CoreV1Api;
let apps: AppsV1Api;

beforeAll(async () => {
  // A bare API server: no garbage collector completes the foreground deletion checked below.
  cp = await startTestEnv({ controllers: false });
  kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfig);
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
});

afterAll(async () => {
  await cp?.stop();
});

/** The ApiException a call fails with. */
async function failure(p: Promise<unknown>): Promise<ApiException<string>> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiException) return err as ApiException<string>;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('@kubernetes/client-node', () => {
  it('creates, reads, lists, replaces, patches and deletes a ConfigMap', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'cn-cm', labels: { suite: 'client-node' } }, data: { a: '1' } },
    });
    expect(created.metadata?.uid).toBeTruthy();
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);

    const read = await core.readNamespacedConfigMap({ name: 'cn-cm', namespace: NS });
    expect(read.data).toEqual({ a: '1' });

    const list = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'suite=client-node' });
    expect(list.items.map((i) => i.metadata?.name)).toEqual(['cn-cm']);
    expect(list.metadata?.resourceVersion).toMatch(/^\d+$/);

    const replaced = await core.replaceNamespacedConfigMap({
      name: 'cn-cm',
      namespace: NS,
      body: { ...read, data: { a: '2' } },
    });
    expect(replaced.data).toEqual({ a: '2' });
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(
      Number(read.metadata?.resourceVersion),
    );

    // A stale replace is a 409 the client surfaces as an ApiException.
    const conflict = await failure(
      core.replaceNamespacedConfigMap({
        name: 'cn-cm',
        namespace: NS,
        body: { ...read, data: { a: 'stale' } },
      }),
    );
    expect(conflict.code).toBe(409);
    expect(JSON.parse(conflict.body).reason).toBe('Conflict');

    const patched = await core.patchNamespacedConfigMap(
      { name: 'cn-cm', namespace: NS, body: { data: { b: 'x' }, metadata: { labels: { patched: 'yes' } } } },
      mergePatch,
    );
    expect(patched.data).toEqual({ a: '2', b: 'x' });
    expect(patched.metadata?.labels).toEqual({ suite: 'client-node', patched: 'yes' });

    // The client's default patch type is a JSON patch.
    const jsonPatched = await core.patchNamespacedConfigMap({
      name: 'cn-cm',
      namespace: NS,
      body: [{ op: 'remove', path: '/data/b' }],
    });
    expect(jsonPatched.data).toEqual({ a: '2' });

    await core.deleteNamespacedConfigMap({ name: 'cn-cm', namespace: NS });
    const gone = await failure(core.readNamespacedConfigMap({ name: 'cn-cm', namespace: NS }));
    expect(gone.code).toBe(404);
    expect(JSON.parse(gone.body)).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      message: 'configmaps "cn-cm" not found',
    });
  });

  it('creates, reads, lists, replaces, patches and deletes a Deployment', async () => {
    const body: V1Deployment = {
      metadata: { name: 'cn-deploy' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'cn' } },
        template: {
          metadata: { labels: { app: 'cn' } },
          spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
        },
      },
    };
    const created = await apps.createNamespacedDeployment({ namespace: NS, body });
    expect(created.metadata?.generation).toBe(1);
    // Server-side defaults arrive typed.
    expect(created.spec?.strategy?.type).toBe('RollingUpdate');
    expect(created.spec?.template.spec?.containers[0]?.terminationMessagePath).toBe('/dev/termination-log');

    const read = await apps.readNamespacedDeployment({ name: 'cn-deploy', namespace: NS });
    const replaced = await apps.replaceNamespacedDeployment({
      name: 'cn-deploy',
      namespace: NS,
      body: { ...read, spec: { ...read.spec!, replicas: 2 } },
    });
    expect(replaced.spec?.replicas).toBe(2);
    expect(replaced.metadata?.generation).toBe(2);

    const patched = await apps.patchNamespacedDeployment(
      { name: 'cn-deploy', namespace: NS, body: { spec: { replicas: 4 } } },
      mergePatch,
    );
    expect(patched.spec?.replicas).toBe(4);

    const scale = await apps.readNamespacedDeploymentScale({ name: 'cn-deploy', namespace: NS });
    expect(scale.spec?.replicas).toBe(4);
    expect(scale.status?.selector).toBe('app=cn');

    const status = await apps.patchNamespacedDeploymentStatus(
      {
        name: 'cn-deploy',
        namespace: NS,
        body: { status: { replicas: 4, readyReplicas: 3, observedGeneration: 3 } },
      },
      mergePatch,
    );
    expect(status.status?.readyReplicas).toBe(3);

    const list = await apps.listDeploymentForAllNamespaces();
    expect(list.items.map((d) => d.metadata?.name)).toContain('cn-deploy');

    // Foreground deletion leaves the owner behind its foregroundDeletion finalizer (the answer is
    // the object, which the client reads into the V1Status it expects).
    await apps.deleteNamespacedDeployment({
      name: 'cn-deploy',
      namespace: NS,
      propagationPolicy: 'Foreground',
    });
    const pending = await apps.readNamespacedDeployment({ name: 'cn-deploy', namespace: NS });
    expect(pending.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(pending.metadata?.finalizers).toEqual(['foregroundDeletion']);
    await apps.patchNamespacedDeployment(
      { name: 'cn-deploy', namespace: NS, body: { metadata: { finalizers: null } } },
      mergePatch,
    );
    const gone = await failure(apps.readNamespacedDeployment({ name: 'cn-deploy', namespace: NS }));
    expect(gone.code).toBe(404);
  });

  it('watches ADDED, MODIFIED and DELETED for changes made after the watch started', async () => {
    const events: { type: string; name: string; data: unknown }[] = [];
    let ended: unknown = 'running';
    const list = await core.listNamespacedConfigMap({ namespace: NS });
    const controller = await new Watch(kc).watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { resourceVersion: list.metadata?.resourceVersion, labelSelector: 'w=cn', allowWatchBookmarks: true },
      (type, obj: V1ConfigMap) => {
        if (type !== 'BOOKMARK') events.push({ type, name: obj.metadata?.name ?? '', data: obj.data });
      },
      (err) => {
        ended = err ?? null;
      },
    );
    try {
      await core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: 'cn-w', labels: { w: 'cn' } }, data: { v: '1' } },
      });
      await core.patchNamespacedConfigMap(
        { name: 'cn-w', namespace: NS, body: { data: { v: '2' } } },
        mergePatch,
      );
      await core.deleteNamespacedConfigMap({ name: 'cn-w', namespace: NS });
      await eventually(() => events.length >= 3, 10_000, 'three watch events');
      expect(events).toEqual([
        { type: 'ADDED', name: 'cn-w', data: { v: '1' } },
        { type: 'MODIFIED', name: 'cn-w', data: { v: '2' } },
        { type: 'DELETED', name: 'cn-w', data: { v: '2' } },
      ]);
      expect(ended).toBe('running');
    } finally {
      controller.abort();
    }
    // Closing the watch from the server side ends it with the done callback.
    const second = await new Watch(kc).watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      {},
      () => undefined,
      (err) => {
        ended = err ?? null;
      },
    );
    try {
      await eventually(() => cp.faults.openWatches >= 1, 5000, 'the watch to be open');
      ended = 'running';
      cp.faults.dropWatches();
      await eventually(() => ended !== 'running', 5000, 'the done callback');
    } finally {
      second.abort();
    }
  });

  it('keeps an informer (list + watch) in step with the server', async () => {
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'inf-a', labels: { inf: 'yes' } } },
    });
    const informer = makeInformer<V1ConfigMap>(
      kc,
      `/api/v1/namespaces/${NS}/configmaps`,
      () => core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'inf=yes' }),
      'inf=yes',
    );
    const added: string[] = [];
    const updated: string[] = [];
    const deleted: string[] = [];
    informer.on('add', (o) => added.push(o.metadata?.name ?? ''));
    informer.on('update', (o) => updated.push(`${o.metadata?.name}:${o.data?.v}`));
    informer.on('delete', (o) => deleted.push(o.metadata?.name ?? ''));
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    try {
      await eventually(() => added.includes('inf-a'), 10_000, 'the listed object');
      await core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: 'inf-b', labels: { inf: 'yes' } } },
      });
      await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'inf-other' } } });
      await core.patchNamespacedConfigMap(
        { name: 'inf-a', namespace: NS, body: { data: { v: '2' } } },
        mergePatch,
      );
      await core.deleteNamespacedConfigMap({ name: 'inf-b', namespace: NS });
      await eventually(() => deleted.includes('inf-b'), 10_000, 'the deletion');
      expect(added).toEqual(['inf-a', 'inf-b']);
      expect(updated).toEqual(['inf-a:2']);
      expect(informer.list(NS).map((o) => o.metadata?.name)).toEqual(['inf-a']);
      expect(informer.get('inf-a', NS)?.data).toEqual({ v: '2' });
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});
