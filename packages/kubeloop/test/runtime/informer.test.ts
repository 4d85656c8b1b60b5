import { ConfigMap } from 'kubeloop/client';
import {
  Informer,
  InformerFactory,
  type InformerLifecycleEvent,
  InformerSyncError,
  objectKey,
  type PartialObjectMetadata,
} from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type RuntimeEnv, startRuntimeEnv, Widget } from './helpers.js';

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv({ bookmarkIntervalMs: 100 });
});
afterAll(() => t.stop());

const fast = { initialMs: 10, maxMs: 50 };

describe('Informer', () => {
  it('keeps a frozen, indexed store and tells handlers about every change', async () => {
    const ns = 'i-basic';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    await widgets.create({
      metadata: { name: 'red', labels: { tier: 'a' } },
      spec: { color: 'red', size: 1 },
    });
    await widgets.create({
      metadata: { name: 'blue', labels: { tier: 'b' } },
      spec: { color: 'blue', size: 2 },
    });

    const informer = new Informer(widgets, { indexers: { color: (w) => w.spec?.color } });
    informer.store.addFieldIndex('spec.size', (w) => String(w.spec?.size ?? ''));
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (w, initial) => seen.push(`add ${w.metadata?.name} ${initial}`),
      onUpdate: (old, w) => seen.push(`update ${w.metadata?.name} ${old.spec?.size}->${w.spec?.size}`),
      onDelete: (w, unknown) => seen.push(`delete ${w.metadata?.name} ${unknown}`),
    });
    informer.start();
    await informer.waitForSync({ timeoutMs: 10_000 });
    expect(informer.hasSynced).toBe(true);
    expect(seen.sort()).toEqual(['add blue true', 'add red true']);
    seen.length = 0;

    const store = informer.store;
    expect(store.size).toBe(2);
    expect(store.get('red', ns)?.spec?.color).toBe('red');
    expect(store.getByKey(`${ns}/blue`)?.spec?.size).toBe(2);
    expect(store.byIndex('color', 'blue').map((w) => w.metadata?.name)).toEqual(['blue']);
    expect(store.list({ labelSelector: { tier: 'a' } }).map((w) => w.metadata?.name)).toEqual(['red']);
    expect(store.list({ fieldSelector: 'spec.size=2' }).map((w) => w.metadata?.name)).toEqual(['blue']);
    expect(store.namespace(ns).list({ labelSelector: 'tier in (a,b)' })).toHaveLength(2);
    expect(store.namespace('elsewhere').list()).toEqual([]);

    // Cached objects are shared: changing one fails loudly instead of corrupting the cache.
    const red = store.get('red', ns)!;
    expect(() => {
      red.spec!.size = 99;
    }).toThrow(TypeError);
    expect(() => {
      red.metadata!.labels!.tier = 'z';
    }).toThrow(TypeError);

    await widgets.patch('red', { spec: { size: 5, color: 'blue' } });
    await widgets.delete('blue');
    await widgets.create({ metadata: { name: 'green' }, spec: { color: 'green' } });
    await eventually(() => seen.length === 3, 5000, 'three changes');
    expect(seen).toEqual(['update red 1->5', 'delete blue false', 'add green false']);
    expect(store.byIndex('color', 'blue').map((w) => w.metadata?.name)).toEqual(['red']);
    expect(store.byIndex('color', 'red')).toEqual([]);
    expect(
      store
        .list()
        .map((w) => w.metadata?.name)
        .sort(),
    ).toEqual(['green', 'red']);

    await informer.stop();
    expect(informer.running).toBe(false);
  });

  it('stops at once, also right after its sync (before its watch is open)', async () => {
    const ns = 'i-stop';
    await t.namespace(ns);
    await t.client.api(Widget, ns).create({ metadata: { name: 'x' } });
    for (const watchList of [false, true, false, true]) {
      const informer = new Informer(t.client.api(Widget, ns), { watchList });
      informer.start();
      await informer.waitForSync({ timeoutMs: 10_000 });
      await informer.stop();
      expect(informer.running).toBe(false);
    }
    await eventually(() => t.env.faults.openWatches === 0, 5000, 'no watch left open');
  });

  it('strips managedFields by default, and applies a custom transform', async () => {
    const ns = 'i-transform';
    await t.namespace(ns);
    const cms = t.client.api(ConfigMap, ns);
    // Real API servers write managedFields on every write; this one keeps what a client sends.
    await cms.create({
      metadata: {
        name: 'applied',
        managedFields: [
          {
            manager: 'test',
            operation: 'Update',
            apiVersion: 'v1',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': {} },
          },
        ],
      },
      data: { a: '1' },
    });
    const raw = await cms.get('applied');
    expect(raw.metadata?.managedFields?.length).toBeGreaterThan(0);

    const plain = new Informer(cms).start();
    // Paged lists drop them too (watch-list is the default).
    const listed = new Informer(cms, { watchList: false }).start();
    const custom = new Informer(cms, {
      transform: (cm) => ({ ...cm, data: { redacted: 'yes' } }),
    }).start();
    await plain.waitForSync({ timeoutMs: 10_000 });
    await listed.waitForSync({ timeoutMs: 10_000 });
    await custom.waitForSync({ timeoutMs: 10_000 });
    for (const informer of [plain, listed]) {
      const cached = informer.store.get('applied', ns);
      expect(cached?.data).toEqual({ a: '1' });
      expect(cached?.metadata?.managedFields).toBeUndefined();
      expect(cached?.metadata?.uid).toBe(raw.metadata?.uid);
    }
    // A transform of one's own sees the objects whole.
    expect(custom.store.get('applied', ns)?.data).toEqual({ redacted: 'yes' });
    expect(custom.store.get('applied', ns)?.metadata?.managedFields).toEqual(raw.metadata?.managedFields);
    await Promise.all([plain.stop(), listed.stop(), custom.stop()]);
  });

  it('gives handlers added after start the current state first', async () => {
    const ns = 'i-late';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    await widgets.create({ metadata: { name: 'early' } });
    const informer = new Informer(widgets).start();
    await informer.waitForSync({ timeoutMs: 10_000 });

    const late: string[] = [];
    informer.addEventHandler({
      onAdd: (w, initial) => late.push(`add ${w.metadata?.name} ${initial}`),
      onUpdate: (_o, w) => late.push(`update ${w.metadata?.name}`),
    });
    // Synchronously, before any later event.
    expect(late).toEqual(['add early true']);
    await widgets.create({ metadata: { name: 'later' } });
    await widgets.patch('early', { spec: { size: 3 } });
    await eventually(() => late.length === 3, 5000, 'two changes');
    expect(late).toEqual(['add early true', 'add later false', 'update early']);

    const remove = informer.addEventHandler({ onAdd: () => late.push('removed handler') });
    remove();
    await widgets.create({ metadata: { name: 'last' } });
    await eventually(() => late.includes('add last false'), 5000, 'the last object');
    expect(late.filter((s) => s === 'removed handler')).toHaveLength(2); // only its replay of early and later
    await informer.stop();
  });

  it('keeps serving when a handler throws, and reports it', async () => {
    const ns = 'i-throw';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    const lifecycle: InformerLifecycleEvent[] = [];
    const informer = new Informer(widgets, { onLifecycle: (e) => lifecycle.push(e) });
    const good: string[] = [];
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    informer.addEventHandler({ onAdd: (w) => good.push(w.metadata?.name ?? '') });
    informer.start();
    await informer.waitForSync({ timeoutMs: 10_000 });
    await widgets.create({ metadata: { name: 'one' } });
    await widgets.create({ metadata: { name: 'two' } });
    await eventually(() => good.length === 2, 5000, 'both objects');
    const errors = lifecycle.filter((e) => e.type === 'handlerError');
    expect(errors).toHaveLength(2);
    expect(errors[0]?.type === 'handlerError' && (errors[0].error as Error).message).toBe('handler bug');
    await informer.stop();
  });

  it('metadata-only informers hold PartialObjectMetadata', async () => {
    const ns = 'i-meta';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    const owner = await widgets.create({ metadata: { name: 'owner' } });
    await widgets.create({
      metadata: {
        name: 'child',
        labels: { app: 'x' },
        ownerReferences: [
          { apiVersion: 'runtime.kubeloop.dev/v1', kind: 'Widget', name: 'owner', uid: owner.metadata!.uid! },
        ],
      },
      spec: { size: 7, color: 'big' },
    });
    const informer = Informer.metadata(widgets);
    const added: PartialObjectMetadata[] = [];
    informer.addEventHandler({ onAdd: (m) => added.push(m) });
    informer.start();
    await informer.waitForSync({ timeoutMs: 10_000 });
    const child = informer.store.get('child', ns);
    expect(child?.kind).toBe('PartialObjectMetadata');
    expect(child?.apiVersion).toBe('meta.k8s.io/v1');
    expect(child).not.toHaveProperty('spec');
    expect(child?.metadata.ownerReferences?.[0]?.uid).toBe(owner.metadata?.uid);
    expect(informer.store.list({ labelSelector: 'app=x' })).toHaveLength(1);
    await widgets.patch('child', { metadata: { labels: { app: 'y' } } });
    await eventually(() => informer.store.get('child', ns)?.metadata.labels?.app === 'y', 5000, 'the update');
    expect(added.map((m) => m.metadata.name).sort()).toEqual(['child', 'owner']);
    await informer.stop();
  });
});

describe('Informer without handlers (deferred decoding)', () => {
  it('keeps objects as received until read, and reads exactly what an eager informer holds', async () => {
    const ns = 'i-deferred';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    for (let i = 0; i < 40; i++) {
      await widgets.create({
        metadata: { name: `w${i}`, labels: { tier: i % 2 ? 'odd' : 'even' } },
        spec: { color: `c${i % 3}`, size: i },
      });
    }
    const lazy = new Informer(widgets);
    const eager = new Informer(widgets);
    const eagerSeen: string[] = [];
    eager.addEventHandler({ onAdd: (w) => eagerSeen.push(w.metadata!.name!) });
    lazy.start();
    eager.start();
    await Promise.all([lazy.waitForSync({ timeoutMs: 10_000 }), eager.waitForSync({ timeoutMs: 10_000 })]);

    // Nothing was decoded by the sync (a look inside the store).
    const items = (lazy.store as unknown as { items: Map<string, Map<string, object>> }).items;
    const held = [...(items.get(ns)?.values() ?? [])];
    expect(held).toHaveLength(40);
    expect(held.every((v) => v.constructor.name === 'DeferredObject')).toBe(true);

    // Changes after the sync: an update, a delete, a create.
    await widgets.patch('w1', { spec: { size: 1000 } });
    await widgets.delete('w2');
    await widgets.create({ metadata: { name: 'late', labels: { tier: 'odd' } }, spec: { size: -1 } });
    const server = async () =>
      (await widgets.list()).items
        .map((w) => {
          const { managedFields: _, ...metadata } = w.metadata!;
          return { ...w, metadata };
        })
        .sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
    const want = await server();
    await eventually(() => expect(lazy.store.size).toBe(want.length));
    await eventually(() => expect(lazy.store.get('w1', ns)?.spec?.size).toBe(1000));
    await eventually(() => expect(eager.store.get('late', ns)).toBeDefined());

    // Reads decode; what they give is what the eager informer holds, frozen, without managedFields.
    const sorted = (ws: readonly Widget[]) =>
      [...ws].sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
    expect(sorted(lazy.store.list())).toEqual(want);
    expect(sorted(lazy.store.list())).toEqual(sorted(eager.store.list()));
    const w5 = lazy.store.get('w5', ns)!;
    expect(Object.isFrozen(w5.spec)).toBe(true);
    expect(w5.metadata?.managedFields).toBeUndefined();
    // A decoded object is kept: the same object on the next read.
    expect(lazy.store.get('w5', ns)).toBe(w5);
    expect(
      lazy.store
        .list({ labelSelector: { tier: 'odd' } })
        .map((w) => w.metadata?.name)
        .sort(),
    ).toEqual(
      want
        .filter((w) => w.metadata.labels?.tier === 'odd')
        .map((w) => w.metadata.name)
        .sort(),
    );
    expect(lazy.store.list({ fieldSelector: { 'metadata.name': 'w7' } })).toEqual([
      want.find((w) => w.metadata.name === 'w7'),
    ]);

    // An index added now indexes every object; a handler added now gets every object first.
    lazy.store.addIndex('color', (w) => w.spec?.color);
    expect(lazy.store.byIndex('color', 'c0').length).toBe(want.filter((w) => w.spec?.color === 'c0').length);
    const late: Widget[] = [];
    lazy.addEventHandler({
      onAdd: (w) => late.push(w),
      onUpdate: (_, w) => late.push(w),
    });
    expect(sorted(late)).toEqual(want);
    await widgets.patch('w3', { spec: { size: 3000 } });
    await eventually(() => expect(late.at(-1)?.spec?.size).toBe(3000));
    expect(Object.isFrozen(late.at(-1))).toBe(true);
    await Promise.all([lazy.stop(), eager.stop()]);
  });

  it('keeps managedFields in what it keeps when the transform wants them', async () => {
    const ns = 'i-deferred-mf';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    await widgets.create({ metadata: { name: 'a' }, spec: { size: 1 } });
    const all = new Informer(widgets, { transform: null });
    const custom = new Informer(widgets, {
      transform: (w) => ({
        ...w,
        metadata: { ...w.metadata, annotations: { managers: String(w.metadata?.managedFields?.length) } },
      }),
    });
    all.start();
    custom.start();
    await Promise.all([all.waitForSync({ timeoutMs: 10_000 }), custom.waitForSync({ timeoutMs: 10_000 })]);
    expect(all.store.get('a', ns)?.metadata?.managedFields?.length).toBe(1);
    expect(custom.store.get('a', ns)?.metadata?.annotations).toEqual({ managers: '1' });
    await Promise.all([all.stop(), custom.stop()]);
  });
});

describe('waitForSync', () => {
  it('says which informer did not sync and why', async () => {
    const ns = 'i-timeout';
    await t.namespace(ns);
    t.env.faults.inject({
      match: { verb: 'list', resource: 'widgets', namespace: ns },
      action: { status: 500, message: 'etcd is on fire' },
    });
    const informer = new Informer(t.newClient({ retry: false }).api(Widget, ns), {
      watchList: false,
      backoff: fast,
      onLifecycle: () => undefined,
    });
    const never = new Informer(t.client.api(Widget, 'never-started'));
    try {
      informer.start();
      const err = await informer.waitForSync({ timeoutMs: 300 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InformerSyncError);
      const e = err as InformerSyncError;
      expect(e.reason).toBe('timeout');
      expect(e.informer).toContain(
        `widgets.runtime.kubeloop.dev (Widget.v1.runtime.kubeloop.dev) in namespace "${ns}"`,
      );
      expect(e.message).toContain('did not sync within 300 ms');
      expect(e.message).toContain('etcd is on fire');

      const notStarted = await never.waitForSync({ timeoutMs: 50 }).catch((x: unknown) => x);
      expect((notStarted as Error).message).toContain('it was never started');
    } finally {
      t.env.faults.clear();
      await informer.stop();
    }
  });

  it('fails at once on 403, naming the resource and verb', async () => {
    const ns = 'i-forbidden';
    await t.namespace(ns);
    const remove = t.env.faults.inject({
      match: { verb: 'list', resource: 'widgets', namespace: ns },
      action: { status: 403, reason: 'Forbidden', message: 'widgets is forbidden: User "robot" cannot list' },
    });
    const informer = new Informer(t.newClient({ retry: false }).api(Widget, ns), {
      watchList: false,
      backoff: fast,
      onLifecycle: () => undefined,
    });
    try {
      informer.start();
      // No deadline: an auth failure must not hang.
      const err = (await informer.waitForSync().catch((e: unknown) => e)) as InformerSyncError;
      expect(err).toBeInstanceOf(InformerSyncError);
      expect(err.reason).toBe('auth');
      expect(err.message).toContain('cannot list');
      expect(err.message).toContain(`namespace "${ns}"`);
      expect(err.message).toContain('403 Forbidden');
      // A second wait fails at once too, until access is granted.
      await expect(informer.waitForSync()).rejects.toThrow(/403/);
      remove();
      await eventually(() => informer.hasSynced, 10_000, 'the sync once allowed');
    } finally {
      await informer.stop();
    }
  });

  it('rejects when the informer is stopped before it synced', async () => {
    const ns = 'i-stopped';
    await t.namespace(ns);
    t.env.faults.inject({
      match: { verb: 'list', resource: 'widgets', namespace: ns },
      action: { status: 500 },
    });
    const informer = new Informer(t.newClient({ retry: false }).api(Widget, ns), {
      watchList: false,
      backoff: fast,
      onLifecycle: () => undefined,
    }).start();
    const waiting = informer.waitForSync().catch((e: unknown) => e);
    await informer.stop();
    t.env.faults.clear();
    const err = (await waiting) as InformerSyncError;
    expect(err.reason).toBe('stopped');
  });
});

describe('InformerFactory', () => {
  it('shares one informer and one watch per collection', async () => {
    const ns = 'f-shared';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    await widgets.create({ metadata: { name: 'a', labels: { x: '1', y: '2' } } });
    const factory = new InformerFactory(t.client);
    const first = factory.informer(Widget, { namespace: ns });
    const second = factory.informer(Widget, { namespace: ns });
    expect(second).toBe(first);
    const bySel1 = factory.informer(Widget, { namespace: ns, labelSelector: 'x=1,y=2' });
    const bySel2 = factory.informer(Widget, { namespace: ns, labelSelector: { y: '2', x: '1' } });
    expect(bySel2).toBe(bySel1);
    expect(bySel1).not.toBe(first);
    const meta = factory.metadataInformer(Widget, { namespace: ns });
    expect(meta).not.toBe(first);

    const seenA: string[] = [];
    const seenB: string[] = [];
    first.addEventHandler({ onAdd: (w) => seenA.push(objectKey(w)) });
    factory.start();
    await factory.waitForSync({ timeoutMs: 10_000 });
    // One stream for the two users of `first`, one for the selector, one for metadata.
    expect(t.env.faults.dropWatches({ resource: 'widgets', namespace: ns })).toBe(3);

    // Added after start: starts at once; a handler added late gets the state.
    const late = factory.informer(Widget, { namespace: ns, fieldSelector: 'metadata.name=a' });
    await late.waitForSync({ timeoutMs: 10_000 });
    second.addEventHandler({ onAdd: (w) => seenB.push(objectKey(w)) });
    await widgets.create({ metadata: { name: 'b' } });
    await eventually(() => seenA.length === 2 && seenB.length === 2, 5000, 'b in both handlers');
    expect(seenA).toEqual([`${ns}/a`, `${ns}/b`]);
    expect(seenB).toEqual([`${ns}/a`, `${ns}/b`]);
    expect(late.store.list().map((w) => w.metadata?.name)).toEqual(['a']);

    // Indexes asked for by a later user are added to the shared store.
    const color = (w: Widget) => w.spec?.color;
    factory.informer(Widget, { namespace: ns, indexers: { color } });
    expect(first.store.hasIndex('color')).toBe(true);
    expect(() => factory.informer(Widget, { namespace: ns, indexers: { color: () => 'x' } })).toThrow(
      /another index named "color"/,
    );
    await factory.stop();
    expect(factory.informers.every((i) => !i.running)).toBe(true);
  });

  it('starts any number of informers on its one stop signal without a listener-leak warning', async () => {
    const ns = 'f-many';
    await t.namespace(ns);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const factory = new InformerFactory(t.client);
    try {
      // A manager of a dozen kinds (the built-in controllers watch more) has a dozen informers.
      for (let i = 0; i < 12; i++)
        factory.informer(Widget, { namespace: ns, labelSelector: { n: String(i) } });
      factory.start();
      await factory.waitForSync({ timeoutMs: 10_000 });
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await factory.stop();
    }
  });

  it('waitForSync names every informer that did not sync', async () => {
    const ns = 'f-fail';
    await t.namespace(ns);
    t.env.faults.inject({
      match: { verb: 'list', resource: 'widgets', namespace: ns },
      action: { status: 500 },
    });
    t.env.faults.inject({
      match: { verb: 'watch', resource: 'widgets', namespace: ns },
      action: { status: 500 },
    });
    const factory = new InformerFactory(t.newClient({ retry: false }), {
      backoff: fast,
      onLifecycle: () => undefined,
    });
    factory.informer(Widget, { namespace: ns });
    factory.informer(Widget, { namespace: ns, labelSelector: 'a=b' });
    factory.informer(ConfigMap, { namespace: ns });
    factory.start();
    try {
      const err = (await factory
        .waitForSync({ timeoutMs: 300 })
        .catch((e: unknown) => e)) as InformerSyncError;
      expect(err).toBeInstanceOf(InformerSyncError);
      expect(err.message).toMatch(/^2 of 3 informers did not sync/);
      expect(err.message).toContain(
        `widgets.runtime.kubeloop.dev (Widget.v1.runtime.kubeloop.dev) in namespace "${ns}"`,
      );
      expect(err.message).toContain('(with labelSelector)');
      expect(err.message).not.toContain('configmaps');
    } finally {
      t.env.faults.clear();
      await factory.stop();
    }
  });
});
