/**
 * Sharded controllers on the local control plane: replicas of one operator (managers in this
 * process, each with its own client) split the Widgets through shard Leases and labels; under
 * churn, a replica joining and a replica crashing move objects through the drain handshake
 * (or the expired Lease), and a recorder of every reconcile's start and end shows that no
 * Widget was ever reconciled by two replicas at once.
 */
import { ConfigMap, EventsV1Event, isAlreadyExists, Lease } from 'kubeloop/client';
import {
  controller,
  HashRing,
  type Manager,
  realClock,
  setControllerReference,
  shardLabel,
  sleep,
} from 'kubeloop/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fetchText, run, sample, testManager } from '../controller/helpers.js';
import { eventually, pool, type RuntimeEnv, startRuntimeEnv, Widget } from '../helpers.js';

const N = Number(process.env.KUBELOOP_SHARDING_OBJECTS ?? 600);
const ns = 'sharded';
const LABEL = shardLabel('widget');
const HOT = new Set(Array.from({ length: 30 }, (_, i) => `w-${i * 7}`));
// Generous against a loaded machine (every replica and the server share this process): a
// replica that cannot renew for the renew deadline stops, which would end the test's ring; and
// the crash bound (lease duration + retry period) includes a label write and this test's poll,
// which took 0.6 s at a load of 18 on 2 cores.
const timings = { leaseDurationMs: 5_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 };

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv();
  await t.namespace(ns);
  await t.namespace(`${ns}-owns`);
  await t.namespace(`${ns}-bulk`);
});
afterAll(() => t.stop());
/** Every manager a test started: stopped after it even when it failed, so none loads the next. */
const started: Manager[] = [];
/** The churn of the first test, stopped after it even when it failed. */
const churn = { on: false };
afterEach(async () => {
  churn.on = false;
  await Promise.allSettled(started.splice(0).map((m) => m.stop()));
});

const widget = (name: string, namespace = ns): Widget => ({
  apiVersion: 'runtime.kubeloop.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace },
  spec: { size: 1 },
});

describe('sharding', () => {
  it('splits objects over 3 replicas, moves them on join and crash, and never reconciles one twice at once', async () => {
    const active = new Map<string, string>();
    const overlaps: string[] = [];
    const reconciledBy = new Map<string, Set<string>>();
    const make = (shard: string): Manager => {
      const m = testManager(t.newClient(), {
        sharding: { name: 'widgets', shardId: shard, namespace: ns, ...timings, sharderWorkers: 8 },
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
            return hot ? { requeueAfter: 30 } : undefined;
          }),
      );
      started.push(m);
      return m;
    };

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
        if (l[LABEL] !== ring.shardFor(`${ns}/${name}`)) {
          return undefined;
        }
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
    churn.on = true;
    let extra = 0;
    const churning = (async () => {
      while (churn.on) {
        const i = Math.floor(Math.random() * N);
        await Promise.allSettled([
          api.create(widget(`x-${extra++}`)),
          api.patch(`w-${i}`, { spec: { size: Math.floor(Math.random() * 100) } }),
          ...(extra % 5 === 0 ? [api.delete(`x-${extra - 3}`)] : []),
        ]);
        await sleep(realClock, 15);
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

    // A crash of a shard that is not the sharder: its Lease is not released. The sharder treats
    // it as drained once the Lease expired — no acknowledgement awaited, no resync — so its objects
    // start moving within lease duration + retry period of its last renewal. Measured from the
    // Lease's own renewTime, so the bound does not include how long this test took to get here;
    // the whole move then takes the label writes of its objects, which depend on the machine.
    const sharder = (await t.client.api(Lease, ns).get('widgets-sharder')).spec?.holderIdentity;
    const victim = ['shard-c', 'shard-b', 'shard-a'].find((s) => s !== sharder)!;
    const ofC = [...second].filter(([, s]) => s === victim).map(([k]) => k);
    const metricsC = (await fetchText(`${managers.get(victim)!.metricsUrl}/metrics`)).text;
    let drained =
      sample(metricsC, 'kubeloop_sharding_handovers_total', { shard: victim, reason: 'drained' }) ?? 0;
    await managers.get(victim)!.abort();
    managers.delete(victim);
    const lease = await t.client.api(Lease, ns).get(`widgets-shard-${victim}`);
    const renewedAt = Date.parse(lease.spec!.renewTime!);
    const leaseMs = lease.spec!.leaseDurationSeconds! * 1000;
    const onVictim = async () =>
      new Set((await api.list({ labelSelector: `${LABEL}=${victim}` })).items.map((w) => w.metadata!.name!));
    const firstMovedAt = await eventually(
      async () => {
        const left = await onVictim();
        return ofC.some((k) => !left.has(k)) ? Date.now() : undefined;
      },
      leaseMs + 10_000,
      `${victim}'s objects to start moving`,
    );
    const movedAt = await eventually(
      async () => ((await onVictim()).size === 0 ? Date.now() : undefined),
      20_000,
      `${victim}'s objects moved`,
    );
    if (process.env.KUBELOOP_SHARDING_REPORT) {
      console.info(
        `sharding: the crashed shard's Lease expired ${leaseMs} ms after its last renewal; its ${ofC.length} objects started moving ${firstMovedAt - renewedAt - leaseMs} ms and had all moved ${movedAt - renewedAt - leaseMs} ms after the expiry (retry period ${timings.retryPeriodMs} ms)`,
      );
    }
    expect(firstMovedAt - renewedAt).toBeLessThanOrEqual(timings.leaseDurationMs + timings.retryPeriodMs);
    const live = [...managers.keys()].sort();
    const third = await eventually(() => settled(live), 20_000, 'settled on 3 shards');
    for (const k of ofC) if (third.has(k)) expect(third.get(k)).not.toBe(victim);
    const moved3 = [...second.keys()].filter((k) => third.has(k) && third.get(k) !== second.get(k));
    expect(moved3.every((k) => second.get(k) === victim)).toBe(true);

    churn.on = false;
    await churning;
    const final = await eventually(() => settled(live), 20_000, 'settled');
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
    // A clean stop gives the sharder's Lease up (client-go's ReleaseOnCancel): the next sharder
    // need not wait for it to expire. Its release once came after its client was closed.
    expect((await t.client.api(Lease, ns).get('widgets-sharder')).spec?.holderIdentity).toBe('');
  }, 120_000);

  it('labels children with their parent’s shard from their creation, so each replica caches only its own children, and they follow a move', async () => {
    const ons = `${ns}-owns`;
    /** Each child as its create stored it: with the shard label of the replica that made it. */
    const created: string[] = [];
    const make = (shard: string): Manager => {
      const m = testManager(t.newClient(), {
        sharding: { name: 'owners', shardId: shard, namespace: ons, ...timings },
      }).add(
        controller(Widget)
          .inNamespace(ons)
          .owns(ConfigMap)
          .reconcile(async (w, { client }) => {
            const cm: ConfigMap = {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: w.metadata!.name!, namespace: ons },
            };
            try {
              const made = await client.api(ConfigMap, ons).create(setControllerReference(w, cm));
              created.push(`${made.metadata?.name}: ${made.metadata?.labels?.[LABEL]} by ${shard}`);
            } catch (err) {
              // Created by an earlier run whose child this shard's cache did not hold yet.
              if (!isAlreadyExists(err)) throw err;
            }
            return undefined;
          }),
      );
      started.push(m);
      return m;
    };
    const managers = new Map<string, Manager>();
    const runs: Promise<void>[] = [];
    const join = async (s: string) => {
      const m = make(s);
      managers.set(s, m);
      runs.push((await run(m)).done);
    };
    await join('own-a');
    await join('own-b');
    const names = Array.from({ length: 60 }, (_, i) => `p-${i}`);
    await pool(names, 8, async (n) => void (await t.client.api(Widget, ons).create(widget(n, ons))));

    /** Every child carries its parent's shard (the ring's for the parent), and each replica's cache holds exactly its own. */
    const childrenFollow = async (live: string[]) => {
      const ring = new HashRing(live);
      const cms = new Map(
        (await t.client.api(ConfigMap, ons).list()).items.map((c) => [
          c.metadata!.name!,
          c.metadata!.labels ?? {},
        ]),
      );
      const parents = (await t.client.api(Widget, ons).list()).items;
      for (const p of parents) {
        const want = ring.shardFor(`${ons}/${p.metadata!.name}`);
        if (p.metadata!.labels?.[LABEL] !== want) return false;
        if (cms.get(p.metadata!.name!)?.[LABEL] !== want) return false;
      }
      for (const [s, m] of managers) {
        const cached = await m.cache.list(ConfigMap, { namespace: ons });
        const mine = parents.filter((p) => ring.shardFor(`${ons}/${p.metadata!.name}`) === s).length;
        if (cached.length !== mine || cached.some((c) => c.metadata!.labels?.[LABEL] !== s)) return false;
      }
      return true;
    };
    await eventually(() => childrenFollow(['own-a', 'own-b']), 30_000, 'children on their parents’ shards');
    // Labeled at creation by the reconcile's client, not later by the sharder.
    expect(created.length).toBeGreaterThanOrEqual(names.length);
    for (const c of created) expect(c).toMatch(/: (own-[ab]) by \1$/);

    // A third replica: the parents that move take their children along.
    await join('own-c');
    await eventually(
      () => childrenFollow(['own-a', 'own-b', 'own-c']),
      30_000,
      'children moved with their parents',
    );

    for (const m of managers.values()) await m.stop();
    await Promise.allSettled(runs);
  }, 90_000);

  it('renews its shard Lease while its bulk label writes hold every connection of its client', async () => {
    // The stall seen under load (README): every connection of the replica's client busy with
    // the sharder's label writes, a Lease renewal waited behind them — for a free connection or
    // a new one's TLS handshake — past the renew deadline, and the replica stopped. Here the
    // pool is bounded (2 connections) and the server holds each label write longer than the
    // renew deadline: a renewal on those connections could not get through in time.
    const bns = `${ns}-bulk`;
    const api = t.client.api(ConfigMap, bns);
    await pool(
      Array.from({ length: 12 }, (_, i) => `b-${i}`),
      6,
      async (name) => void (await api.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } })),
    );
    const deadlines = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };
    const holdMs = deadlines.renewDeadlineMs * 2;
    const unhold = t.env.faults.inject({
      match: { verb: 'patch', resource: 'configmaps', namespace: bns },
      action: { delayMs: holdMs },
    });
    try {
      const m = testManager(t.newClient({ maxConnections: 2 }), {
        sharding: { name: 'bulk', shardId: 'bulk-a', namespace: bns, ...deadlines, sharderWorkers: 8 },
      }).add(
        controller(ConfigMap)
          .inNamespace(bns)
          .reconcile(async () => undefined),
      );
      started.push(m);
      let outcome = 'running';
      const { done } = await run(m);
      done.then(
        () => {
          outcome = 'stopped';
        },
        (err: unknown) => {
          outcome = String(err);
        },
      );
      // The first label write answered: the sharder's writes held both connections for twice
      // the renew deadline by then (the others queue behind them).
      await eventually(
        async () => (await api.list()).items.some((c) => c.metadata?.labels?.[shardLabel('configmap')]),
        30_000,
        'a label write answered',
      );
      expect(outcome).toBe('running');
      const lease = await t.client.api(Lease, bns).get('bulk-shard-bulk-a');
      expect(lease.spec?.holderIdentity).toBe('bulk-a');
      // Live all along (the ring would have dropped the shard otherwise): renewed within a lease duration.
      expect(Date.parse(lease.spec!.renewTime!) + lease.spec!.leaseDurationSeconds! * 1000).toBeGreaterThan(
        Date.now(),
      );
    } finally {
      unhold();
    }
  }, 60_000);
});
