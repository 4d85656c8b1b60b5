/**
 * Chaos: informers against the local control plane while concurrent writers create, update and
 * delete objects and the server drops watch streams, answers 410 and 500, and delays responses.
 * Afterwards every informer's store must equal the server's state exactly, handlers must have
 * received the final version of every object (and never an older version after a newer one),
 * and stopping must leave no sockets or timers behind.
 *
 * Size: `KUBELOOP_CHAOS_OBJECTS` objects (default 5,000, the figure; about 15–25 s on a
 * 2-core CI machine). Set it lower for a quick local run, higher for a longer soak.
 */
import { Client } from 'kubeloop/client';
import { Informer, type InformerLifecycleEvent, objectKey } from 'kubeloop/runtime';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { activeResources, eventually, pool, type RuntimeEnv, startRuntimeEnv, Widget } from './helpers.js';

const OBJECTS = Number(process.env.KUBELOOP_CHAOS_OBJECTS ?? 5000);
const WRITERS = 16;
const NAMESPACES = ['chaos-a', 'chaos-b', 'chaos-c', 'chaos-d'];

let t: RuntimeEnv;
beforeAll(async () => {
  // A short watch history, so that resuming after a delay really expires (410) now and then.
  t = await startRuntimeEnv({ bookmarkIntervalMs: 250, watchHistorySize: 1500 });
  for (const ns of NAMESPACES) await t.namespace(ns);
});
afterAll(() => t.stop());

interface Delivered {
  rv: number;
  deleted: boolean;
}

/** Records what handlers received, per key, and any delivery that went backwards. */
function observe(informer: Informer<Widget>) {
  const delivered = new Map<string, Delivered>();
  const regressions: string[] = [];
  const note = (w: Widget, deleted: boolean, mayRepeat: boolean) => {
    const key = objectKey(w);
    const rv = Number(w.metadata?.resourceVersion);
    const prev = delivered.get(key);
    if (prev && (rv < prev.rv || (rv === prev.rv && !mayRepeat))) {
      regressions.push(`${key}: ${deleted ? 'delete' : 'add/update'} at ${rv} after ${prev.rv}`);
    }
    delivered.set(key, { rv, deleted });
  };
  informer.addEventHandler({
    onAdd: (w) => note(w, false, false),
    onUpdate: (_old, w) => note(w, false, false),
    // A deletion noticed by a relist carries the last state seen: the same version again.
    onDelete: (w, finalStateUnknown) => note(w, true, finalStateUnknown),
  });
  return { delivered, regressions };
}

it(`informers converge exactly under chaos (${OBJECTS} objects)`, async () => {
  const before = activeResources();
  const lifecycles = new Map<string, InformerLifecycleEvent[]>();
  const clients: Client[] = [];
  const informer = (name: string, watchList: boolean, retry: boolean) => {
    const client = new Client(t.env.clientConfig, retry ? { retry: { baseDelayMs: 1 } } : { retry: false });
    clients.push(client);
    const events: InformerLifecycleEvent[] = [];
    lifecycles.set(name, events);
    return new Informer(client.api(Widget, ''), {
      watchList,
      pageSize: 500,
      backoff: { initialMs: 10, maxMs: 200 },
      idleTimeoutMs: 5000,
      onLifecycle: (e) => events.push(e),
    });
  };
  // Paged lists through a retrying client; watch-lists with every failure reaching the watcher.
  const listing = informer('list', false, true);
  const streaming = informer('watch-list', true, false);
  // And a cache nobody handles events of: it keeps objects undecoded until read (`Store`).
  const unhandled = informer('deferred', true, false);
  const observed = [
    { name: 'list', informer: listing, ...observe(listing) },
    { name: 'watch-list', informer: streaming, ...observe(streaming) },
  ];
  listing.start();
  streaming.start();
  unhandled.start();
  await Promise.all([
    listing.waitForSync({ timeoutMs: 20_000 }),
    streaming.waitForSync({ timeoutMs: 20_000 }),
    unhandled.waitForSync({ timeoutMs: 20_000 }),
  ]);

  // Chaos, until the writers are done.
  let writing = true;
  const faults = t.env.faults;
  const match = { resource: 'widgets' } as const;
  const chaos = (async () => {
    const actions = [
      () => faults.dropWatches(match),
      () => faults.inject({ match: { ...match, verb: 'watch' }, action: { status: 410 }, times: 1 }),
      () => faults.inject({ match: { ...match, verb: 'watch' }, action: { status: 500 }, times: 2 }),
      () => faults.inject({ match: { ...match, verb: 'list' }, action: { status: 500 }, times: 1 }),
      () => faults.inject({ match: { ...match, verb: 'list' }, action: { status: 410 }, times: 1 }),
      () => faults.inject({ match: { ...match, verb: 'watch' }, action: { delayMs: 300 }, times: 1 }),
      () => faults.inject({ match: { ...match, verb: 'list' }, action: { delayMs: 300 }, times: 1 }),
      () => faults.inject({ match: { ...match, verb: 'watch' }, action: { drop: true }, times: 1 }),
    ];
    let n = 0;
    while (writing) {
      actions[n++ % actions.length]!();
      // Pacing of the fault injection, not synchronisation.
      await new Promise((r) => setTimeout(r, 40));
    }
    return n;
  })();

  const writer = new Client(t.env.clientConfig, { retry: { baseDelayMs: 1 } });
  clients.push(writer);
  const ids = Array.from({ length: OBJECTS }, (_, i) => i);
  const where = (i: number) => ({ ns: NAMESPACES[i % NAMESPACES.length]!, name: `w-${i}` });
  const api = (i: number) => writer.api(Widget, where(i).ns);
  try {
    await pool(ids, WRITERS, async (i) => {
      await api(i).create({
        metadata: { name: where(i).name, labels: { n: String(i % 7) } },
        spec: { size: i },
      });
    });
    // Between the phases, for certain: every watcher's resourceVersion expires at once.
    const expiredRelists = () =>
      [...lifecycles.values()].map(
        (evs) => evs.filter((e) => e.type === 'relisting' && e.reason === 'expired').length,
      );
    const base = expiredRelists();
    const expire = faults.inject({ match: { ...match, verb: 'watch' }, action: { status: 410 } });
    faults.dropWatches(match);
    await eventually(
      () => expiredRelists().every((n, k) => n > (base[k] ?? 0)),
      10_000,
      'every informer to relist after 410 Gone',
    );
    expire();
    await pool(
      ids.filter((i) => i % 2 === 0),
      WRITERS,
      async (i) => {
        await api(i).patch(where(i).name, { spec: { round: 1 } });
        if (i % 4 === 0) await api(i).patch(where(i).name, { spec: { round: 2 }, status: { seen: 1 } });
      },
    );
    await pool(
      ids.filter((i) => i % 3 === 0),
      WRITERS,
      async (i) => {
        await api(i).delete(where(i).name);
        // Some come back under the same name: a new object for the same key.
        if (i % 9 === 0) await api(i).create({ metadata: { name: where(i).name }, spec: { size: -i } });
      },
    );
  } finally {
    writing = false;
  }
  const injected = await chaos;
  faults.clear();

  // The server's final state, key → resourceVersion.
  const truth = new Map<string, number>();
  for await (const page of writer.api(Widget, '').listPages({ limit: 1000 })) {
    for (const w of page.items) truth.set(objectKey(w), Number(w.metadata?.resourceVersion));
  }
  expect(truth.size).toBe(OBJECTS - Math.ceil(OBJECTS / 3) + Math.ceil(OBJECTS / 9));

  const storeState = (i: Informer<Widget>) =>
    new Map(i.store.list().map((w) => [objectKey(w), Number(w.metadata?.resourceVersion)]));
  for (const o of [
    ...observed,
    { name: 'deferred', informer: unhandled, delivered: undefined, regressions: [] },
  ]) {
    await eventually(
      () => {
        const s = storeState(o.informer);
        if (s.size !== truth.size) return false;
        for (const [k, rv] of truth) if (s.get(k) !== rv) return false;
        return true;
      },
      30_000,
      `the ${o.name} informer to converge`,
    );
    // Exactly the server's state: same keys, same versions.
    expect(storeState(o.informer)).toEqual(truth);
    if (!o.delivered) continue; // no handlers
    // Handlers saw the final version of every object, and deletions of all the others.
    const missing: string[] = [];
    for (const [key, rv] of truth) {
      const d = o.delivered.get(key);
      if (!d || d.deleted || d.rv !== rv) missing.push(`${key}@${rv}: ${JSON.stringify(d)}`);
    }
    expect(missing).toEqual([]);
    const undeleted = [...o.delivered].filter(([key, d]) => !truth.has(key) && !d.deleted).map(([k]) => k);
    expect(undeleted).toEqual([]);
    expect(o.regressions).toEqual([]);
  }

  const summary = Object.fromEntries(
    [...lifecycles].map(([name, evs]) => [
      name,
      {
        relists: evs.filter((e) => e.type === 'relisting').length,
        reconnects: evs.filter((e) => e.type === 'reconnecting').length,
        errors: evs.filter((e) => e.type === 'error').length,
        reasons: evs.flatMap((e) => (e.type === 'relisting' ? [e.reason] : [])).join(','),
      },
    ]),
  );
  process.stdout.write(`chaos: ${injected} faults injected; ${JSON.stringify(summary)}\n`);
  // The chaos did reach the watchers: streams were resumed and collections relisted.
  const count = (name: string, pred: (e: InformerLifecycleEvent) => boolean) =>
    (lifecycles.get(name) ?? []).filter(pred).length;
  for (const name of ['list', 'watch-list', 'deferred']) {
    expect(count(name, (e) => e.type === 'reconnecting')).toBeGreaterThan(0);
    expect(count(name, (e) => e.type === 'relisting' && e.reason !== 'initial')).toBeGreaterThan(0);
  }
  expect(count('watch-list', (e) => e.type === 'error')).toBeGreaterThan(0);

  // Stopping leaves nothing behind: no sockets, no timers.
  await Promise.all([...observed.map((o) => o.informer.stop()), unhandled.stop()]);
  await Promise.all(clients.map((c) => c.close()));
  await eventually(
    () => {
      const now = activeResources();
      return [...now].every(([kind, n]) => n <= (before.get(kind) ?? 0));
    },
    10_000,
    'handles and timers to return to what they were before the informers',
  ).catch((err: unknown) => {
    throw new Error(
      `${(err as Error).message}: before ${JSON.stringify([...before])}, after ${JSON.stringify([...activeResources()])}`,
    );
  });
}, 120_000);
