/**
 * Manager-wide controller defaults: `maxConcurrentReconciles` on the manager sizes the workers
 * of controllers that do not set their own, and a controller's own setting wins.
 */
import { controller } from 'kubeloop/runtime';
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

const widget = (ns: string, name: string): Widget => ({
  apiVersion: 'runtime.kubeloop.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { size: 1 },
});

/** Runs a manager with `options` whose controller holds every reconcile until released; returns the peak concurrency. */
async function peakConcurrency(
  ns: string,
  managerWorkers: number,
  controllerWorkers: number | undefined,
): Promise<{ peak: number; metric: number | undefined }> {
  await t.namespace(ns);
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let running = 0;
  let peak = 0;
  let done = 0;
  const base = controller(Widget).inNamespace(ns);
  const m = testManager(t.client, { maxConcurrentReconciles: managerWorkers }).add(
    (controllerWorkers === undefined
      ? base
      : base.withOptions({ maxConcurrentReconciles: controllerWorkers })
    ).reconcile(async () => {
      running++;
      peak = Math.max(peak, running);
      await gate;
      running--;
      done++;
    }),
  );
  const { done: stopped } = await run(m);
  try {
    const names = ['k1', 'k2', 'k3', 'k4', 'k5'];
    for (const name of names) await t.client.api(Widget, ns).create(widget(ns, name));
    const expected = Math.min(names.length, controllerWorkers ?? managerWorkers);
    await eventually(() => peak === expected, 10_000, `${expected} reconciles at once`);
    const metrics = (await fetchText(`${m.metricsUrl}/metrics`)).text;
    open();
    await eventually(() => done >= names.length, 10_000, 'every reconcile to finish');
    return {
      peak,
      metric: sample(metrics, 'controller_runtime_max_concurrent_reconciles', { controller: 'widget' }),
    };
  } finally {
    open();
    await m.stop();
    await stopped;
  }
}

describe('manager maxConcurrentReconciles', () => {
  it('sizes the workers of a controller that sets none', async () => {
    expect(await peakConcurrency('mo-default', 2, undefined)).toEqual({ peak: 2, metric: 2 });
  });

  it("yields to the controller's own setting", async () => {
    expect(await peakConcurrency('mo-own', 2, 3)).toEqual({ peak: 3, metric: 3 });
  });
});

describe('a controller with its own client', () => {
  it('writes with that client while it reads the manager cache', async () => {
    const ns = 'mo-own-client';
    await t.namespace(ns);
    const own = t.newClient({ userAgent: 'widget-writer/v1' });
    const m = testManager(t.client).add(
      controller(Widget)
        .inNamespace(ns)
        .withOptions({ client: own })
        .reconcile(async (w, { client }) => {
          if (w.metadata?.labels?.seen) return;
          await client.api(Widget, ns).patch(w.metadata!.name!, { metadata: { labels: { seen: 'yes' } } });
        }),
    );
    const { done } = await run(m);
    try {
      await t.client.api(Widget, ns).create(widget(ns, 'w1'));
      let managers: string[] = [];
      await eventually(
        async () => {
          const got = await t.client.api(Widget, ns).get('w1');
          managers = (got.metadata?.managedFields ?? []).map((f) => f.manager ?? '');
          return got.metadata?.labels?.seen === 'yes';
        },
        10_000,
        'the reconcile to label the widget',
      );
      // The label was written by the controller's own client (its user agent names the manager).
      expect(managers).toContain('widget-writer');
    } finally {
      await m.stop();
      await done;
    }
  });
});
