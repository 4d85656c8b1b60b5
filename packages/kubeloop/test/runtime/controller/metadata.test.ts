/**
 * Metadata-only reads of the manager's cache: a controller that watches another kind through
 * its shared metadata-only informer (`watchesMetadata`) and reads it with `getMetadata`, a
 * metadata informer removed from the cache once its kind is of no more use, and a runnable
 * reading through a controller's informer of a kind rather than opening a second watch.
 */
import { ConfigMap, Secret } from 'kubeloop/client';
import { controller, type Informer, type PartialObjectMetadata } from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type RuntimeEnv, run, startRuntimeEnv, testManager, Widget } from './helpers.js';

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv();
});
afterAll(() => t.stop());

describe('metadata-only watches', () => {
  it('maps metadata events of another kind to requests, and reads its labels in the reconcile', async () => {
    const ns = 'md-watch';
    await t.namespace(ns);
    const colours = new Map<string, string | undefined>();
    const mapped: PartialObjectMetadata[] = [];
    const m = testManager(t.newClient()).add(
      controller(Widget)
        .inNamespace(ns)
        .watchesMetadata(ConfigMap, (cm) => {
          mapped.push(cm);
          const widget = cm.metadata.labels?.widget;
          return widget ? [{ namespace: ns, name: widget }] : [];
        })
        .reconcile(async (w, { cache }) => {
          const name = w.metadata?.name ?? '';
          const cm = await cache.getMetadata(ConfigMap, `${name}-colour`, ns);
          colours.set(name, cm?.metadata.labels?.colour);
        }),
    );
    const r = await run(m);
    try {
      await t.client.api(Widget, ns).create({
        apiVersion: 'runtime.kubeloop.dev/v1',
        kind: 'Widget',
        metadata: { name: 'w', namespace: ns },
        spec: { size: 1 },
      });
      await eventually(() => colours.has('w'), 10_000, 'the first reconcile');
      expect(colours.get('w')).toBeUndefined();
      const cms = t.client.api(ConfigMap, ns);
      await cms.create({
        metadata: { name: 'w-colour', labels: { widget: 'w', colour: 'red' } },
        data: { big: 'x'.repeat(1000) },
      });
      await eventually(() => colours.get('w') === 'red', 10_000, 'the ConfigMap seen');
      await cms.patch('w-colour', { metadata: { labels: { colour: 'blue' } } }, { type: 'merge' });
      await eventually(() => colours.get('w') === 'blue', 10_000, 'the label change seen');
      // Only metadata is cached and mapped: not the data.
      expect(mapped.length).toBeGreaterThan(0);
      expect(mapped.every((cm) => !('data' in cm))).toBe(true);
    } finally {
      await m.stop();
      await r.done;
    }
  });

  it('removes a shared metadata informer: it stops, and asking again makes a new one', async () => {
    let first: Informer<PartialObjectMetadata> | undefined;
    let second: Informer<PartialObjectMetadata> | undefined;
    let removed = false;
    const m = testManager(t.newClient()).add({
      name: 'remover',
      prepare({ cache }) {
        first = cache.metadataInformer(ConfigMap, { namespace: 'default' });
      },
      async start({ cache }) {
        await first?.waitForSync();
        await cache.removeMetadataInformer(first!);
        removed = true;
        second = cache.metadataInformer(ConfigMap, { namespace: 'default' });
      },
    });
    const r = await run(m);
    try {
      await eventually(() => removed && second !== undefined, 10_000, 'the informer removed');
      expect(first?.running).toBe(false);
      expect(second).not.toBe(first);
      await second?.waitForSync({ timeoutMs: 10_000 });
      expect(second?.hasSynced).toBe(true);
    } finally {
      await m.stop();
      await r.done;
    }
  });

  it("lets a runnable read through a controller's informer of a kind (existingInformer)", async () => {
    const ns = 'md-shared';
    await t.namespace(ns);
    let shared: Informer<ConfigMap> | undefined;
    let unwatched: unknown;
    const m = testManager(t.newClient())
      .add({
        name: 'reader',
        // Prepared after the controllers, though added first: their informers exist by now.
        prepare({ cache }) {
          shared = cache.existingInformer(ConfigMap);
          unwatched = cache.existingInformer(Secret);
        },
        start() {},
      })
      .add(
        controller(Widget)
          .owns(ConfigMap)
          .reconcile(() => undefined),
      );
    const r = await run(m);
    try {
      // No controller watches Secrets: none is made for the asking.
      expect(unwatched).toBeUndefined();
      expect(shared).toBeDefined();
      await t.client.api(ConfigMap, ns).create({ metadata: { name: 'seen' }, data: { a: 'b' } });
      await eventually(() => shared?.store.get('seen', ns) !== undefined, 10_000, 'the ConfigMap cached');
      // The controller's own informer: whole objects.
      expect(shared?.store.get('seen', ns)?.data).toEqual({ a: 'b' });
    } finally {
      await m.stop();
      await r.done;
    }
  });
});
