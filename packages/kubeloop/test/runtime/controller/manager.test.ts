/**
 * The manager against the local control plane: leader election between competing managers
 * (crash and clean hand-over, never two leaders reconciling) and the graceful drain on SIGTERM.
 */
import { Lease } from 'kubeloop/client';
import { controller, LeaderElectionLostError, type Manager } from 'kubeloop/runtime';
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

describe('leader election', () => {
  it('hands over on a crash after the lease expires, at once on a clean shutdown, and never runs two leaders', async () => {
    const ns = 'm-leader';
    await t.namespace(ns);
    const lease = {
      id: 'widget-operator',
      namespace: ns,
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 200,
    };
    const reconciles: { manager: string; at: number }[] = [];
    const make = (id: string): Manager =>
      testManager(t.newClient(), { leaderElection: { ...lease, identity: id } }).add(
        controller(Widget)
          .inNamespace(ns)
          .reconcile(() => {
            reconciles.push({ manager: id, at: Date.now() });
            return { requeueAfter: 20 };
          }),
      );
    await t.client.api(Widget, ns).create(widget(ns, 'tick'));
    const since = (id: string, from: number) => reconciles.some((r) => r.manager === id && r.at >= from);

    const a = make('a');
    const ra = await run(a);
    await eventually(() => since('a', 0), 10_000, 'a to lead');
    const b = make('b');
    const rb = await run(b);
    expect(b.isLeader).toBe(false);

    // A crash: the lease is not released; b takes over once it expires.
    const killedAt = Date.now();
    await a.abort();
    await ra.done;
    await eventually(
      () => since('b', killedAt),
      lease.leaseDurationMs + lease.retryPeriodMs * 1.2 + 2_000,
      'b to lead within lease duration + retry period',
    );
    expect(b.isLeader).toBe(true);
    const metricsB = (await fetchText(`${b.metricsUrl}/metrics`)).text;
    expect(sample(metricsB, 'leader_election_master_status', { name: lease.id })).toBe(1);

    // A clean shutdown releases the lease: c takes over within a retry period, long before it would expire.
    const c = make('c');
    const rc = await run(c);
    expect(c.isLeader).toBe(false);
    await b.stop();
    await rb.done;
    const stoppedAt = Date.now();
    await eventually(
      () => since('c', stoppedAt),
      lease.retryPeriodMs * 1.2 + 1_500,
      'c to lead within a retry period of the release',
    );
    await c.stop();
    await rc.done;
    expect((await t.client.api(Lease, ns).get(lease.id)).spec?.holderIdentity ?? '').toBe('');

    // Ordered by time, the reconciles come from one manager after another: a, then b, then c.
    const sorted = [...reconciles].sort((x, y) => x.at - y.at);
    const runs = sorted.map((r) => r.manager).filter((m, i, all) => i === 0 || all[i - 1] !== m);
    expect(runs).toEqual(['a', 'b', 'c']);
  });
});

describe('losing leadership', () => {
  it('stops the controllers at once and fails start() when the lease cannot be renewed', async () => {
    const ns = 'm-lost';
    await t.namespace(ns);
    const lease = {
      id: 'lost',
      namespace: ns,
      leaseDurationMs: 1_500,
      renewDeadlineMs: 1_000,
      retryPeriodMs: 100,
    };
    let reconciles = 0;
    const m = testManager(t.newClient({ retry: { maxRetries: 0 } }), { leaderElection: lease }).add(
      controller(Widget)
        .inNamespace(ns)
        .reconcile(() => {
          reconciles++;
          return { requeueAfter: 10 };
        }),
    );
    const { done } = await run(m);
    await t.client.api(Widget, ns).create(widget(ns, 'w'));
    await eventually(() => reconciles > 0);
    const remove = t.env.faults.inject({
      match: { resource: 'leases', namespace: ns },
      action: { status: 500 },
    });
    try {
      await expect(done).rejects.toThrow(LeaderElectionLostError);
      expect(m.isLeader).toBe(false);
      const after = reconciles;
      // Another object's change would be reconciled by a running controller; this one is stopped.
      await t.client.api(Widget, ns).create(widget(ns, 'x'));
      expect(reconciles).toBe(after);
    } finally {
      remove();
    }
  });
});

describe('graceful shutdown', () => {
  it('drains on SIGTERM: stops intake, lets the running reconcile finish, releases the lease', async () => {
    const ns = 'm-drain';
    await t.namespace(ns);
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const started: string[] = [];
    const finished: string[] = [];
    const m = testManager(t.newClient(), {
      handleSignals: true,
      leaderElection: {
        id: 'drain',
        namespace: ns,
        leaseDurationMs: 3_000,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 200,
      },
    }).add(
      controller(Widget)
        .inNamespace(ns)
        .reconcile(async (w, { client }) => {
          const name = w.metadata?.name ?? '';
          started.push(name);
          await gate;
          await client.patchStatus(w, { seen: 1 });
          finished.push(name);
        }),
    );
    const listeners = process.listenerCount('SIGTERM');
    const { done } = await run(m);
    expect(process.listenerCount('SIGTERM')).toBe(listeners + 1);
    let stopped = false;
    void done.then(() => {
      stopped = true;
    });
    const widgets = t.client.api(Widget, ns);
    await widgets.create(widget(ns, 'slow'));
    await eventually(() => started.includes('slow'));
    process.emit('SIGTERM', 'SIGTERM');
    await widgets.create(widget(ns, 'late'));
    expect(stopped).toBe(false);
    open();
    await done;
    expect(finished).toEqual(['slow']);
    expect(started).toEqual(['slow']);
    expect((await widgets.get('slow')).status?.seen).toBe(1);
    expect((await t.client.api(Lease, ns).get('drain')).spec?.holderIdentity ?? '').toBe('');
    expect(process.listenerCount('SIGTERM')).toBe(listeners);
  });
});
