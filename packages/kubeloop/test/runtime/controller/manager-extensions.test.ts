/**
 * What the manager offers controllers beyond reconcile-by-key, against the local control plane:
 * field indexes on the shared cache, map functions that read it, the deleted object's last state
 * in `onGone`, and runnables that share the manager's client and cache.
 */
import { ConfigMap } from 'kubeloop/client';
import { controller, type ReconcileRequest } from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type RuntimeEnv, run, startRuntimeEnv, testManager, Widget } from './helpers.js';

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv();
});
afterAll(() => t.stop());

const widget = (ns: string, name: string, size = 1): Widget => ({
  apiVersion: 'runtime.kubeloop.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { size },
});

const configMap = (ns: string, name: string, owner: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { owner },
});

describe('field indexes', () => {
  it('lists by an indexed field, from the builder or the manager, and refuses an unindexed one', async () => {
    const ns = 'mx-index';
    await t.namespace(ns);
    for (const [name, owner] of [
      ['a1', 'a'],
      ['a2', 'a'],
      ['b1', 'b'],
    ] as const) {
      await t.client.api(ConfigMap, ns).create(configMap(ns, name, owner));
    }
    const seen = new Map<string, string[]>();
    let unindexed: unknown;
    const m = testManager(t.newClient())
      .indexField(ConfigMap, 'data.size', (c) => c.data?.size)
      .add(
        controller(Widget)
          .inNamespace(ns)
          .indexField(ConfigMap, 'data.owner', (c) => c.data?.owner)
          .reconcile(async (w, { cache }) => {
            const name = w.metadata?.name ?? '';
            const owned = await cache.list(ConfigMap, {
              namespace: ns,
              fieldSelector: { 'data.owner': name },
            });
            seen.set(name, owned.map((c) => c.metadata?.name ?? '').sort());
            await cache.list(ConfigMap, { fieldSelector: { 'data.size': '1' } });
            try {
              await cache.list(ConfigMap, { fieldSelector: { 'data.colour': 'red' } });
            } catch (err) {
              unindexed = err;
            }
          }),
      );
    const r = await run(m);
    try {
      await t.client.api(Widget, ns).create(widget(ns, 'a'));
      await t.client.api(Widget, ns).create(widget(ns, 'b'));
      await t.client.api(Widget, ns).create(widget(ns, 'c'));
      await eventually(() => seen.size === 3, 10_000, 'three reconciles');
      expect(seen.get('a')).toEqual(['a1', 'a2']);
      expect(seen.get('b')).toEqual(['b1']);
      expect(seen.get('c')).toEqual([]);
      expect(String(unindexed)).toMatch(/data\.colour/);
    } finally {
      await m.stop();
      await r.done;
    }
  });
});

describe('map functions', () => {
  it('read the cache as it is now to find the objects an event concerns', async () => {
    const ns = 'mx-map';
    await t.namespace(ns);
    await t.client.api(Widget, ns).create(widget(ns, 'small', 1));
    await t.client.api(Widget, ns).create(widget(ns, 'large', 2));
    const reconciled: string[] = [];
    const m = testManager(t.newClient()).add(
      controller(Widget)
        .inNamespace(ns)
        // A ConfigMap concerns the Widgets of its size (a list) and the one it names (a get).
        .watches(ConfigMap, (cm, cache) => [
          ...cache
            .list(Widget, { namespace: ns })
            .filter((w) => String(w.spec?.size) === cm.data?.size)
            .map((w) => ({ namespace: ns, name: w.metadata?.name ?? '' })),
          ...(cache.get(Widget, cm.data?.owner ?? '', ns)
            ? [{ namespace: ns, name: cm.data?.owner ?? '' }]
            : []),
        ])
        .reconcile((w) => {
          reconciled.push(w.metadata?.name ?? '');
        }),
    );
    const r = await run(m);
    try {
      await eventually(() => reconciled.length === 2, 10_000, 'the first reconciles');
      reconciled.length = 0;
      await t.client.api(ConfigMap, ns).create({ ...configMap(ns, 'by-size', 'none'), data: { size: '2' } });
      await eventually(() => reconciled.length === 1, 10_000, 'the reconcile of large');
      expect(reconciled).toEqual(['large']);
      await t.client.api(ConfigMap, ns).create(configMap(ns, 'by-owner', 'small'));
      await eventually(() => reconciled.length === 2, 10_000, 'the reconcile of small');
      expect(reconciled).toEqual(['large', 'small']);
    } finally {
      await m.stop();
      await r.done;
    }
  });
});

describe('onGone', () => {
  it("gets the deleted object's last state, and nothing for an object gone before the start", async () => {
    const ns = 'mx-gone';
    await t.namespace(ns);
    const gone: { request: ReconcileRequest; size: number | undefined }[] = [];
    const m2 = testManager(t.newClient()).add(
      controller(Widget)
        .inNamespace(ns)
        .onGone((request, _ctx, last) => {
          gone.push({ request, size: last?.spec?.size });
        })
        .reconcile(() => undefined),
    );
    const r = await run(m2);
    try {
      await t.client.api(Widget, ns).create(widget(ns, 'w', 7));
      await t.client.api(Widget, ns).patch('w', { spec: { size: 9 } }, { type: 'merge' });
      await eventually(
        async () => (await t.client.api(Widget, ns).get('w')).spec?.size === 9,
        5_000,
        'the patch',
      );
      await t.client.api(Widget, ns).delete('w');
      await eventually(() => gone.length > 0, 10_000, 'the gone handler');
      expect(gone[0]).toEqual({ request: { namespace: ns, name: 'w' }, size: 9 });
    } finally {
      await m2.stop();
      await r.done;
    }
  });
});

describe('runnables', () => {
  it('start after the caches synced with the shared cache, stop with the manager, and a failure stops it', async () => {
    const ns = 'mx-run';
    await t.namespace(ns);
    await t.client.api(Widget, ns).create(widget(ns, 'present'));
    const events: string[] = [];
    let sawAtStart: string[] = [];
    const m = testManager(t.newClient()).add({
      name: 'watcher',
      prepare({ cache }) {
        cache.informer(Widget, { namespace: ns });
        events.push('prepare');
      },
      async start({ cache, signal }) {
        sawAtStart = (await cache.list(Widget, { namespace: ns })).map((w) => w.metadata?.name ?? '');
        events.push('start');
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        events.push('stopped');
      },
    });
    const r = await run(m);
    await eventually(() => events.includes('start'), 5_000, 'the runnable to start');
    expect(sawAtStart).toEqual(['present']);
    await m.stop();
    await r.done;
    expect(events).toEqual(['prepare', 'start', 'stopped']);

    // A stop asked for while a runnable prepares: the runnables after it are not prepared.
    let release: () => void = () => undefined;
    const prepared: string[] = [];
    const slow = testManager(t.newClient())
      .add({
        name: 'slow',
        prepare: () =>
          new Promise<void>((resolve) => {
            prepared.push('slow');
            release = resolve;
          }),
        start: () => undefined,
      })
      .add({ name: 'later', prepare: () => void prepared.push('later'), start: () => undefined });
    const slowRun = slow.start();
    await eventually(() => prepared.length === 1, 5_000, 'the slow prepare');
    const stopping = slow.stop();
    release();
    await stopping;
    await slowRun;
    expect(prepared).toEqual(['slow']);

    const failing = testManager(t.newClient()).add({
      name: 'failing',
      start() {
        throw new Error('boom');
      },
    });
    await expect(failing.start()).rejects.toThrow('boom');
  });
});

describe('read-your-writes past the timeout', () => {
  it("lists the manager's own writes as the server has them when the cache lags behind", async () => {
    const ns = 'mx-lag';
    await t.namespace(ns);
    const listed: string[][] = [];
    const m = testManager(t.newClient(), { readYourWritesTimeoutMs: 200 }).add(
      controller(Widget)
        .inNamespace(ns)
        .watches(ConfigMap, () => [])
        .reconcile(async (w, { client, cache }) => {
          if (w.metadata?.name !== 'go') return;
          // The cache hears of nothing for a while: its watches are cut and come back late.
          const undo = ['watch', 'list'].map((verb) =>
            t.env.faults.inject({ match: { verb, resource: 'configmaps' }, action: { delayMs: 3_000 } }),
          );
          t.env.faults.dropWatches();
          try {
            await client.api(ConfigMap, ns).create(configMap(ns, 'mine', 'go'));
            const all = await cache.list(ConfigMap, { namespace: ns });
            listed.push(
              all
                .map((c) => c.metadata?.name ?? '')
                .filter((n) => n !== 'kube-root-ca.crt')
                .sort(),
            );
            const labelled = await cache.list(ConfigMap, { namespace: ns, labelSelector: { none: 'x' } });
            listed.push(labelled.map((c) => c.metadata?.name ?? ''));
          } finally {
            for (const u of undo) u();
          }
        }),
    );
    const r = await run(m);
    try {
      await t.client.api(ConfigMap, ns).create(configMap(ns, 'before', 'x'));
      await t.client.api(Widget, ns).create(widget(ns, 'go'));
      await eventually(() => listed.length === 2, 15_000, 'the lists');
      expect(listed[0]).toEqual(['before', 'mine']);
      expect(listed[1]).toEqual([]);
    } finally {
      await m.stop();
      await r.done;
    }
  });
});
