/**
 * Sharded controllers on the local control plane: replicas of one operator (managers in this
 * process, each with its own client) split the Widgets through shard Leases and labels; under
 * churn, a replica joining and a replica crashing move objects through the drain handshake
 * (or the expired Lease), and a recorder of every reconcile's start and end shows that no
 * Widget was ever reconciled by two replicas at once.
 */
import { EventsV1Event } from 'kubeloop/client';
import { controller, HashRing, type Manager, realClock, shardLabel, sleep } from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchText, run, sample, testManager } from '../controller/helpers.js';
import { eventually, pool, type RuntimeEnv, startRuntimeEnv, Widget } from '../helpers.js';

const N = Number(process.env.KUBELOOP_SHARDING_OBJECTS ?? 600);
const ns = 'sharded';
const LABEL = shardLabel('widget');
const HOT = new Set(Array.from({ length: 30 }, (_, i) => `w-${i * 7}`));
const timings = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 250 };

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv();
  await t.namespace(ns);
});
afterAll(() => t.stop());

const widget = (name: string): Widget => ({
  apiVersion: 'runtime.kubeloop.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { size: 1 },
});

describe('sharding', () => {
  it('splits objects over 3 replicas, moves them on join and crash, and never reconciles one twice at once', async () => {
    const active = new Map<string, string>();
    const overlaps: string[] = [];
    const reconciledBy = new Map<string, Set<string>>();
    const make = (shard: string): Manager =>
      testManager(t.newClient(), {
        sharding: { name: 'widgets', shardId: shard, namespace: ns, ...timings },
        maxConcurrentReconciles: 4,
      }).add(
        controller(Widget)
          .inNamespace(ns)
          .reconcile(async (w, { signal }) => {
            const key = w.metadata!.name!;
            const other = active.get(key);
            if (other !== undefined) overlaps.push(`${key}: ${other} and ${shard}`);
            active.set(key, shard);
            (reconciledBy.get(key) ?? reconciledBy.set(key, new Set()).get(key)!).add(shard);
            // Hot objects are always being reconciled, so that every handover of one meets a
            // reconcile in flight; the others take a few milliseconds.
            const hot = HOT.has(key);
            try {
              await sleep(realClock, hot ? 20 : Math.random() * 5, signal);
            } finally {
              if (active.get(key) === shard) active.delete(key);
            }
            return hot ? { requeueAfter: 10 } : undefined;
          }),
      );

    const api = t.client.api(Widget, ns);
    const labels = async () => {
      const list = await api.list();
      return new Map(list.items.map((w) => [w.metadata!.name!, w.metadata!.labels ?? {}]));
    };
    /** Every Widget labeled with its shard on the ring of `live`, none draining; name → shard. */
    const settled = async (live: string[]) => {
      const ring = new HashRing(live);
      const all = await labels();
      for (const [name, l] of all) {
        if (l[LABEL] !== ring.shardFor(`${ns}/${name}`)) return undefined;
        if (l['sharding.kubeloop.dev/drain-widget'] !== undefined) return undefined;
      }
      return new Map([...all].map(([k, l]) => [k, l[LABEL]!]));
    };

    const managers = new Map<string, Manager>();
    const runs: Promise<void>[] = [];
    for (const s of ['shard-a', 'shard-b', 'shard-c']) {
      const m = make(s);
      managers.set(s, m);
      runs.push((await run(m)).done);
    }
    await pool(
      Array.from({ length: N }, (_, i) => `w-${i}`),
      16,
      async (name) => void (await api.create(widget(name))),
    );

    // Balanced assignment, and each replica's cache holds only its own share.
    const first = await eventually(() => settled(['shard-a', 'shard-b', 'shard-c']), 30_000, 'all assigned');
    const counts = new Map<string, number>();
    for (const s of first.values()) counts.set(s, (counts.get(s) ?? 0) + 1);
    for (const [s, n] of counts) {
      expect(n, s).toBeGreaterThanOrEqual((N / 3) * 0.85);
      expect(n, s).toBeLessThanOrEqual((N / 3) * 1.15);
      await eventually(() => managers.get(s)!.shardAssignments.widget === n, 10_000, `${s}'s cache`);
    }
    await eventually(() => [...first.keys()].every((k) => reconciledBy.has(k)), 20_000, 'all reconciled');

    // Churn throughout: creates, updates and deletes while shards join and crash.
    let churning = true;
    let extra = 0;
    const churn = (async () => {
      while (churning) {
        const i = Math.floor(Math.random() * N);
        await Promise.allSettled([
          api.create(widget(`x-${extra++}`)),
          api.patch(`w-${i}`, { spec: { size: Math.floor(Math.random() * 100) } }),
          ...(extra % 5 === 0 ? [api.delete(`x-${extra - 3}`)] : []),
        ]);
        await sleep(realClock, 5);
      }
    })();

    // A fourth replica joins: about a quarter moves, all of it to the newcomer, through the drain.
    const d = make('shard-d');
    managers.set('shard-d', d);
    runs.push((await run(d)).done);
    const second = await eventually(
      () => settled(['shard-a', 'shard-b', 'shard-c', 'shard-d']),
      30_000,
      'rebalanced onto 4 shards',
    );
    const moved = [...first.keys()].filter((k) => second.has(k) && second.get(k) !== first.get(k));
    expect(moved.length).toBeGreaterThan(N * 0.25 * 0.6);
    expect(moved.length).toBeLessThan(N * 0.25 * 1.4);
    for (const k of moved) expect(second.get(k)).toBe('shard-d');
    expect(overlaps).toEqual([]);
    await eventually(
      () => moved.every((k) => reconciledBy.get(k)?.has('shard-d')),
      20_000,
      'moved reconciled by d',
    );

    // A crash: shard-c's Lease is not released; its objects move once it expires.
    const ofC = [...second].filter(([, s]) => s === 'shard-c').map(([k]) => k);
    const metricsC = (await fetchText(`${managers.get('shard-c')!.metricsUrl}/metrics`)).text;
    let drained =
      sample(metricsC, 'kubeloop_sharding_handovers_total', { shard: 'shard-c', reason: 'drained' }) ?? 0;
    const killedAt = performance.now();
    await managers.get('shard-c')!.abort();
    managers.delete('shard-c');
    const third = await eventually(
      () => settled(['shard-a', 'shard-b', 'shard-d']),
      // Lease duration + retry period, plus the label writes and this poll's own lists.
      timings.leaseDurationMs + timings.retryPeriodMs + 3_000,
      "shard-c's objects moved",
    );
    if (process.env.KUBELOOP_SHARDING_REPORT) {
      console.info(
        `sharding: ${ofC.length} objects of the crashed shard moved in ${Math.round(performance.now() - killedAt)} ms`,
      );
    }
    for (const k of ofC) if (third.has(k)) expect(third.get(k)).not.toBe('shard-c');
    const moved3 = [...second.keys()].filter((k) => third.has(k) && third.get(k) !== second.get(k));
    expect(moved3.every((k) => second.get(k) === 'shard-c')).toBe(true);

    churning = false;
    await churn;
    const final = await eventually(() => settled(['shard-a', 'shard-b', 'shard-d']), 20_000, 'settled');
    // Every object, created during churn too, is reconciled by the shard it ended on.
    await eventually(
      () => [...final].every(([k, s]) => reconciledBy.get(k)?.has(s)),
      20_000,
      'every object reconciled by its shard',
    );

    // Metrics and Events of the handovers.
    for (const [s, m] of managers) {
      const text = (await fetchText(`${m.metricsUrl}/metrics`)).text;
      drained += sample(text, 'kubeloop_sharding_handovers_total', { shard: s, reason: 'drained' }) ?? 0;
      expect(sample(text, 'kubeloop_sharding_assigned_objects', { shard: s })).toBe(
        [...final.values()].filter((x) => x === s).length,
      );
    }
    expect(drained).toBeGreaterThanOrEqual(moved.length);
    const events = await t.client.api(EventsV1Event, ns).list();
    expect(events.items.some((e) => e.reason === 'ShardJoined')).toBe(true);
    expect(events.items.some((e) => e.reason === 'ShardLeft')).toBe(true);

    for (const m of managers.values()) await m.stop();
    await Promise.allSettled(runs);
    expect(overlaps).toEqual([]);
  }, 120_000);
});
