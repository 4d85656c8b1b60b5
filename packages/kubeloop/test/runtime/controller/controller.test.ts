/**
 * The controller builder and its reconcile loop against the local control plane: finalizers,
 * owned children, predicates, requeues, terminal errors, exceptions, read-your-writes, metrics.
 */
import { isAlreadyExists, isNotFound } from 'kubeloop';
import { ConfigMap, EventsV1Event } from 'kubeloop/client';
import { derivePolicyRules } from 'kubeloop/manifests';
import {
  controller,
  finalize,
  generationChanged,
  ItemExponentialFailureRateLimiter,
  isBeingDeleted,
  TerminalError,
} from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  fetchText,
  type RuntimeEnv,
  run,
  sample,
  startRuntimeEnv,
  testManager,
  Widget,
} from './helpers.js';

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv();
});
afterAll(() => t.stop());

const widget = (ns: string, name: string, extra: Partial<Widget> = {}): Widget => ({
  apiVersion: 'runtime.kubeloop.dev/v1',
  kind: 'Widget',
  ...extra,
  metadata: { name, namespace: ns, ...extra.metadata },
  spec: { size: 1, ...extra.spec },
});

/** Fast retries, so that a retry that should not happen would show at once. */
const fastRetries = () => new ItemExponentialFailureRateLimiter<string>(1, 20);

describe('controller', () => {
  it('runs the finalizer lifecycle: add before work, clean up on deletion, then remove', async () => {
    const ns = 'c-finalizer';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    const FIN = 'runtime.kubeloop.dev/cleanup';
    // Deleted before the controller ever ran, held by someone else's finalizer.
    await widgets.create(widget(ns, 'held', { metadata: { name: 'held', finalizers: ['test/hold'] } }));
    await widgets.delete('held');
    const cleaned: string[] = [];
    const seen: string[] = [];
    const c = controller(Widget)
      .inNamespace(ns)
      .reconcile(async (w, { client }) => {
        seen.push(`${w.metadata?.name}:${isBeingDeleted(w)}`);
        if ((await finalize(client, w, FIN, () => void cleaned.push(w.metadata?.name ?? ''))) === 'deleted')
          return;
        await client.patchStatus(w, { seen: 1 });
      });
    const m = testManager(t.client);
    const { done } = await run(m.add(c));
    try {
      await widgets.create(widget(ns, 'a'));
      const a = await eventually(async () => {
        const w = await widgets.get('a');
        return w.status?.seen === 1 ? w : undefined;
      });
      expect(a.metadata?.finalizers).toEqual([FIN]);
      await widgets.delete('a');
      await eventually(async () => {
        try {
          await widgets.get('a');
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      });
      expect(cleaned).toEqual(['a']);
      // The held widget was reconciled while being deleted: no finalizer added, no cleanup.
      await eventually(() => seen.includes('held:true'));
      expect((await widgets.get('held')).metadata?.finalizers).toEqual(['test/hold']);
      expect(cleaned).toEqual(['a']);
    } finally {
      await m.stop();
      await done;
      await widgets.patch('held', { metadata: { finalizers: null } });
    }
  });

  it('reconciles the owner when an owned child changes or is deleted', async () => {
    const ns = 'c-owns';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    const cms = t.client.api(ConfigMap, ns);
    const reconciles = new Map<string, number>();
    const c = controller(Widget)
      .inNamespace(ns)
      .owns(ConfigMap)
      .reconcile(async (w, { client, cache }) => {
        const name = w.metadata?.name ?? '';
        reconciles.set(name, (reconciles.get(name) ?? 0) + 1);
        const existing = await cache.get(ConfigMap, `${name}-child`, ns);
        if (existing) return;
        try {
          await client.create({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              name: `${name}-child`,
              namespace: ns,
              ownerReferences: [
                {
                  apiVersion: 'runtime.kubeloop.dev/v1',
                  kind: 'Widget',
                  name,
                  uid: w.metadata?.uid ?? '',
                  controller: true,
                },
              ],
            },
            data: { v: '1' },
          });
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
      });
    const m = testManager(t.client);
    const { done } = await run(m.add(c));
    try {
      await widgets.create(widget(ns, 'parent'));
      const child = await eventually(() => cms.get('parent-child').catch(() => undefined));
      const before = reconciles.get('parent') ?? 0;
      await cms.patch('parent-child', { data: { v: '2' } });
      await eventually(
        () => (reconciles.get('parent') ?? 0) > before,
        10_000,
        'a reconcile after the child changed',
      );
      // No garbage collector runs here: delete the child by hand; the owner recreates it.
      await cms.delete('parent-child');
      const again = await eventually(() => cms.get('parent-child').catch(() => undefined));
      expect(again.metadata?.uid).not.toBe(child.metadata?.uid);
    } finally {
      await m.stop();
      await done;
    }
  });

  it('filters events with predicates', async () => {
    const ns = 'c-predicates';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    const filtered: string[] = [];
    const all: string[] = [];
    const describe = (w: Widget) => `${w.metadata?.generation}:${w.metadata?.labels?.touched ?? '-'}`;
    const m = testManager(t.client)
      .add(
        controller(Widget)
          .named('filtered')
          .inNamespace(ns)
          .withPredicates(generationChanged())
          .reconcile((w) => void filtered.push(describe(w))),
      )
      .add(
        controller(Widget)
          .named('witness')
          .inNamespace(ns)
          .reconcile((w) => void all.push(describe(w))),
      );
    const { done } = await run(m);
    try {
      await widgets.create(widget(ns, 'p'));
      await eventually(() => filtered.includes('1:-') && all.includes('1:-'));
      await widgets.patch('p', { metadata: { labels: { touched: 'yes' } } });
      // The witness saw the label change, so the shared informer delivered it to both controllers.
      await eventually(() => all.includes('1:yes'));
      await widgets.patch('p', { spec: { size: 2 } });
      await eventually(() => filtered.includes('2:yes'));
      expect(filtered).toEqual(['1:-', '2:yes']);
    } finally {
      await m.stop();
      await done;
    }
  });

  it('requeues after the requested delay', async () => {
    const ns = 'c-requeue';
    await t.namespace(ns);
    let count = 0;
    const m = testManager(t.client).add(
      controller(Widget)
        .inNamespace(ns)
        .reconcile(() => {
          count++;
          return count < 4 ? { requeueAfter: 20 } : undefined;
        }),
    );
    const { done } = await run(m);
    try {
      await t.client.api(Widget, ns).create(widget(ns, 'r'));
      await eventually(() => count >= 4, 10_000, 'four reconciles without any change');
      const metrics = await fetchText(`${m.metricsUrl}/metrics`);
      expect(
        sample(metrics.text, 'controller_runtime_reconcile_total', {
          controller: 'widget',
          result: 'requeue_after',
        }),
      ).toBe(3);
    } finally {
      await m.stop();
      await done;
    }
  });

  it('does not retry terminal errors, retries other errors and exceptions with backoff', async () => {
    const ns = 'c-errors';
    await t.namespace(ns);
    const attempts = new Map<string, number>();
    const m = testManager(t.client).add(
      controller(Widget)
        .inNamespace(ns)
        .withOptions({ rateLimiter: fastRetries() })
        .reconcile((w) => {
          const name = w.metadata?.name ?? '';
          const n = (attempts.get(name) ?? 0) + 1;
          attempts.set(name, n);
          if (name === 'terminal' && w.metadata?.generation === 1) throw new TerminalError('spec is invalid');
          if (name === 'failing' && n <= 2) throw new Error('temporarily unavailable');
          if (name === 'buggy' && n <= 3) {
            const missing = undefined as unknown as { field: string };
            return { requeueAfter: missing.field.length };
          }
          return undefined;
        }),
    );
    const { done } = await run(m);
    const widgets = t.client.api(Widget, ns);
    try {
      await widgets.create(widget(ns, 'terminal'));
      await widgets.create(widget(ns, 'failing'));
      await widgets.create(widget(ns, 'buggy'));
      await eventually(() => attempts.get('failing') === 3 && attempts.get('buggy') === 4, 10_000, 'retries');
      // A retry of the terminal error would have happened by now (1 ms backoff); a change reconciles it again.
      await widgets.patch('terminal', { spec: { size: 5 } });
      await eventually(() => attempts.get('terminal') === 2);
      const text = (await fetchText(`${m.metricsUrl}/metrics`)).text;
      const c = { controller: 'widget' };
      expect(sample(text, 'controller_runtime_terminal_reconcile_errors_total', c)).toBe(1);
      expect(sample(text, 'controller_runtime_reconcile_panics_total', c)).toBe(3);
      expect(sample(text, 'controller_runtime_reconcile_errors_total', c)).toBe(6);
      expect(sample(text, 'controller_runtime_reconcile_total', { ...c, result: 'error' })).toBe(6);
      expect(attempts.get('terminal')).toBe(2);
    } finally {
      await m.stop();
      await done;
    }
  });

  it('aborts a reconcile past its timeout and retries it', async () => {
    const ns = 'c-timeout';
    await t.namespace(ns);
    let attempts = 0;
    let abortedReason: unknown;
    const m = testManager(t.client).add(
      controller(Widget)
        .inNamespace(ns)
        .withOptions({ reconcileTimeoutMs: 50, rateLimiter: fastRetries() })
        .reconcile(async (_w, { signal }) => {
          attempts++;
          if (attempts === 1) {
            await new Promise<void>((resolve) =>
              signal.addEventListener('abort', () => resolve(), { once: true }),
            );
            abortedReason = signal.reason;
          }
        }),
    );
    const { done } = await run(m);
    try {
      await t.client.api(Widget, ns).create(widget(ns, 'slow'));
      await eventually(() => attempts >= 2);
      expect((abortedReason as Error).name).toBe('ReconcileTimeoutError');
    } finally {
      await m.stop();
      await done;
    }
  });

  it('aborts the running reconciles, each with the stop reason, when the grace period of a stop ends', async () => {
    const ns = 'c-hardstop';
    await t.namespace(ns);
    const reasons = new Map<string, unknown>();
    let started = 0;
    const m = testManager(t.client, { gracefulShutdownTimeoutMs: 50 }).add(
      controller(Widget)
        .inNamespace(ns)
        .withOptions({ maxConcurrentReconciles: 2 })
        .reconcile(async (w, { signal }) => {
          started++;
          await new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          reasons.set(w.metadata?.name ?? '', signal.reason);
        }),
    );
    const { done } = await run(m);
    await t.client.api(Widget, ns).create(widget(ns, 'a'));
    await t.client.api(Widget, ns).create(widget(ns, 'b'));
    await eventually(() => started === 2);
    await m.stop();
    await done;
    expect([...reasons.keys()].sort()).toEqual(['a', 'b']);
    for (const reason of reasons.values()) expect((reason as Error).message).toMatch(/stopped/);
  });

  it('ends its shutdown within the grace period though the API server never answers its event writes', async () => {
    const ns = 'c-quiet-events';
    await t.namespace(ns);
    // Every request answers but the Events', which hang as those of a server that went away.
    let eventWrites = 0;
    const hanging = () => {
      eventWrites++;
      return new Promise(() => undefined);
    };
    const client = new Proxy(t.client, {
      get(target, prop, receiver) {
        if (prop !== 'api') return Reflect.get(target, prop, receiver);
        return (...args: Parameters<typeof target.api>) =>
          args[0] === EventsV1Event ? { create: hanging, patch: hanging } : target.api(...args);
      },
    });
    const reconciled = new Set<string>();
    const m = testManager(client, { gracefulShutdownTimeoutMs: 200 }).add(
      controller(Widget)
        .inNamespace(ns)
        .reconcile(async (w, { events }) => {
          events.normal('Synced', 'synced');
          reconciled.add(w.metadata?.name ?? '');
        }),
    );
    const { done } = await run(m);
    for (const name of ['a', 'b', 'c', 'd', 'e']) await t.client.api(Widget, ns).create(widget(ns, name));
    await eventually(() => reconciled.size === 5);
    await m.stop();
    await done;
    // One write at a time: the first hangs, the four behind it are dropped at the deadline.
    expect(eventWrites).toBe(1);
  });

  it('reads its own writes: an immediately requeued reconcile never sees an older version', async () => {
    const ns = 'c-ryw';
    await t.namespace(ns);
    const observed: number[] = [];
    const childVisible: boolean[] = [];
    const m = testManager(t.client).add(
      controller(Widget)
        .inNamespace(ns)
        .reconcile(async (w, { client, cache }) => {
          const seen = w.status?.seen ?? 0;
          observed.push(seen);
          if (seen >= 25) return undefined;
          if (seen === 0) {
            await client.create({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'made', namespace: ns },
            });
            childVisible.push((await cache.get(ConfigMap, 'made', ns)) !== undefined);
          }
          // An update guarded by the resourceVersion: a stale read would conflict.
          await client.api(Widget, ns).updateStatus({ ...w, status: { seen: seen + 1 } });
          return { requeueAfter: 0 };
        }),
    );
    const { done } = await run(m);
    try {
      await t.client.api(Widget, ns).create(widget(ns, 'counter'));
      await eventually(() => observed.includes(25), 20_000, 'the counter to reach 25');
      // Each value once (a stale read would repeat one); the last write's own event may add a 25.
      const upTo25 = observed.slice(0, observed.indexOf(25) + 1);
      expect(upTo25).toEqual(Array.from({ length: 26 }, (_, i) => i));
      expect(observed.slice(upTo25.length).every((v) => v === 25)).toBe(true);
      expect(childVisible).toEqual([true]);
    } finally {
      await m.stop();
      await done;
    }
  });

  it('serves /healthz, /readyz and /metrics with controller-runtime names', async () => {
    const ns = 'c-metrics';
    await t.namespace(ns);
    let reconciled = false;
    const m = testManager(t.client).add(
      controller(Widget)
        .inNamespace(ns)
        .withOptions({ maxConcurrentReconciles: 3 })
        .reconcile(() => {
          reconciled = true;
        }),
    );
    const { done } = await run(m);
    try {
      await t.client.api(Widget, ns).create(widget(ns, 'm'));
      await eventually(() => reconciled);
      expect((await fetchText(`${m.healthUrl}/healthz`)).status).toBe(200);
      expect((await fetchText(`${m.healthUrl}/readyz`)).status).toBe(200);
      const text = await eventually(async () => {
        const r = (await fetchText(`${m.metricsUrl}/metrics`)).text;
        const ok = sample(r, 'controller_runtime_reconcile_total', {
          controller: 'widget',
          result: 'success',
        });
        return (ok ?? 0) >= 1 ? r : undefined;
      });
      for (const name of [
        'controller_runtime_reconcile_total',
        'controller_runtime_reconcile_errors_total',
        'controller_runtime_terminal_reconcile_errors_total',
        'controller_runtime_reconcile_panics_total',
        'controller_runtime_reconcile_time_seconds_bucket',
        'controller_runtime_max_concurrent_reconciles',
        'controller_runtime_active_workers',
        'workqueue_adds_total',
        'workqueue_depth',
      ]) {
        expect(text, name).toContain(`${name}{`);
      }
      expect(sample(text, 'controller_runtime_max_concurrent_reconciles', { controller: 'widget' })).toBe(3);
      expect(sample(text, 'workqueue_adds_total', { name: 'widget' })).toBeGreaterThanOrEqual(1);
    } finally {
      await m.stop();
      await done;
    }
  });

  it('aggregates repeated events into one series', async () => {
    const ns = 'c-events';
    await t.namespace(ns);
    const m = testManager(t.client, { name: 'widget-operator' }).add(
      controller(Widget)
        .inNamespace(ns)
        .reconcile((_w, { events }) => {
          for (let i = 0; i < 3; i++) events.warning('Broken', 'the widget is broken');
          events.normal('Checked', 'looked at it');
        }),
    );
    const { done } = await run(m);
    try {
      await t.client.api(Widget, ns).create(widget(ns, 'e'));
      // As client-go: the second occurrence writes a series of 2 at once; later ones are counted
      // and written when the series goes quiet, every 30 minutes, or when the manager stops.
      await eventually(async () => {
        const items = (await t.client.api(EventsV1Event, ns).list()).items;
        const broken = items.find((e) => e.reason === 'Broken');
        return items.length === 2 && broken?.series?.count === 2 ? items : undefined;
      });
      await m.stop();
      await done;
      const list = (await t.client.api(EventsV1Event, ns).list()).items;
      expect(list.find((e) => e.reason === 'Broken')?.series?.count).toBe(3);
      const broken = list.find((e) => e.reason === 'Broken');
      expect(broken?.type).toBe('Warning');
      expect(broken?.regarding?.name).toBe('e');
      expect(broken?.reportingController).toBe('widget-operator');
    } finally {
      await m.stop();
      await done;
    }
  });

  it('maps watched kinds to requests and scopes the primary kind by labels', async () => {
    const ns = 'c-watches';
    await t.namespace(ns);
    const seen: string[] = [];
    const m = testManager(t.client).add(
      controller(Widget)
        .inNamespace(ns)
        .withLabelSelector({ team: 'a' })
        .watches(ConfigMap, (cm) => {
          const target = cm.data?.widget;
          return target ? [{ namespace: cm.metadata?.namespace ?? '', name: target }] : [];
        })
        .reconcile((w) => void seen.push(`${w.metadata?.name}:${w.metadata?.resourceVersion}`)),
    );
    const { done } = await run(m);
    try {
      const widgets = t.client.api(Widget, ns);
      await widgets.create(widget(ns, 'other', { metadata: { name: 'other', labels: { team: 'b' } } }));
      const mine = await widgets.create(
        widget(ns, 'mine', { metadata: { name: 'mine', labels: { team: 'a' } } }),
      );
      await eventually(() => seen.length === 1);
      await t.client.api(ConfigMap, ns).create({ metadata: { name: 'pointer' }, data: { widget: 'mine' } });
      await eventually(() => seen.length === 2);
      // Both reconciles were of the labelled widget, the second caused by the ConfigMap alone.
      expect(seen).toEqual([
        `mine:${mine.metadata?.resourceVersion}`,
        `mine:${mine.metadata?.resourceVersion}`,
      ]);
    } finally {
      await m.stop();
      await done;
    }
  });

  it('runs up to maxConcurrentReconciles at once, never one key twice', async () => {
    const ns = 'c-concurrency';
    await t.namespace(ns);
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const running = new Map<string, number>();
    let maxPerKey = 0;
    let maxTotal = 0;
    let calls = 0;
    const m = testManager(t.client).add(
      controller(Widget)
        .inNamespace(ns)
        .withOptions({ maxConcurrentReconciles: 3 })
        .reconcile(async (w) => {
          const key = w.metadata?.name ?? '';
          calls++;
          running.set(key, (running.get(key) ?? 0) + 1);
          maxPerKey = Math.max(maxPerKey, running.get(key) ?? 0);
          maxTotal = Math.max(
            maxTotal,
            [...running.values()].reduce((a, b) => a + b, 0),
          );
          await gate;
          running.set(key, (running.get(key) ?? 0) - 1);
        }),
    );
    const { done } = await run(m);
    try {
      const widgets = t.client.api(Widget, ns);
      for (const name of ['k1', 'k2', 'k3', 'k4']) await widgets.create(widget(ns, name));
      await eventually(() => maxTotal === 3, 10_000, 'three reconciles at once');
      // Changes of keys being reconciled wait for their reconcile to end.
      await widgets.patch('k1', { spec: { size: 7 } });
      await widgets.patch('k2', { spec: { size: 7 } });
      expect(calls).toBe(3);
      open();
      await eventually(() => calls >= 4 && [...running.values()].every((n) => n === 0));
      expect(maxPerKey).toBe(1);
      expect(maxTotal).toBe(3);
    } finally {
      open();
      await m.stop();
      await done;
    }
  });

  it('exposes the permissions it needs', () => {
    const c = controller(Widget)
      .owns(ConfigMap)
      .watches(EventsV1Event, () => [])
      .reconcile(() => undefined);
    expect(c.name).toBe('widget');
    expect(c.permissions.for).toBe(Widget);
    expect(c.permissions.owns).toEqual([ConfigMap]);
    expect(c.permissions.watches).toEqual([EventsV1Event]);
    const manager = testManager(t.client, { leaderElection: { id: 'x' } }).add(c);
    const rules = derivePolicyRules(manager.permissions);
    const widgets = rules.cluster.find((r) => r.resources?.includes('widgets'));
    expect(widgets?.verbs).toEqual(expect.arrayContaining(['get', 'list', 'watch']));
    expect(rules.cluster.find((r) => r.resources?.includes('configmaps'))?.verbs).toContain('create');
    expect(rules.leaderElection.some((r) => r.resources?.includes('leases'))).toBe(true);
  });
});
