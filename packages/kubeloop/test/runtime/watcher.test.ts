import { type ApiError, Client, isGone, type RequestRecord } from 'kubeloop/client';
import { type ListMode, type WatcherEvent, type WatcherLifecycleEvent, watcher } from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type RuntimeEnv, record, startRuntimeEnv, Widget } from './helpers.js';

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv({ bookmarkIntervalMs: 100, watchHistorySize: 40 });
});
afterAll(() => t.stop());

const names = (events: WatcherEvent<Widget>[], type: WatcherEvent<Widget>['type']) =>
  events.flatMap((e) => (e.type === type && e.type !== 'SYNCED' ? [e.object.metadata?.name] : [])).sort();

/** Fast backoff for tests; no jitter, so delays are exact. */
const fast = { initialMs: 10, maxMs: 80, resetAfterMs: 60_000 };

describe.each(['list', 'watch-list'] as const satisfies readonly ListMode[])('watcher (%s)', (mode) => {
  it('delivers the initial state, SYNCED, then every change in order', async () => {
    const ns = `w-basic-${mode}`;
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    for (const name of ['a', 'b', 'c']) await widgets.create({ metadata: { name }, spec: { size: 1 } });

    const ac = new AbortController();
    const lifecycle: WatcherLifecycleEvent[] = [];
    const rec = record(
      watcher(widgets, {
        signal: ac.signal,
        watchList: mode === 'watch-list',
        pageSize: 2,
        onLifecycle: (e) => lifecycle.push(e),
      }),
    );
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the initial sync');
    const initial = rec.events.splice(0);
    expect(names(initial, 'ADDED')).toEqual(['a', 'b', 'c']);
    expect(initial.every((e) => e.type !== 'ADDED' || e.initialList)).toBe(true);
    expect(initial.at(-1)).toMatchObject({ type: 'SYNCED', initial: true });
    expect(lifecycle[0]).toMatchObject({ type: 'relisting', reason: 'initial', mode });

    const d = await widgets.create({ metadata: { name: 'd' }, spec: { size: 4 } });
    const b2 = await widgets.patch('b', { spec: { size: 2 } });
    await widgets.delete('a');
    await rec.until((evs) => evs.length >= 3, 'three changes');
    const [added, modified, deleted] = rec.events;
    expect(added).toMatchObject({ type: 'ADDED', initialList: false, object: { metadata: { name: 'd' } } });
    expect(added?.type === 'ADDED' && added.object.metadata?.resourceVersion).toBe(
      d.metadata?.resourceVersion,
    );
    expect(modified?.type === 'MODIFIED' && modified.object.spec).toEqual({ size: 2 });
    expect(modified?.type === 'MODIFIED' && modified.old.spec).toEqual({ size: 1 });
    expect(modified?.type === 'MODIFIED' && modified.object.metadata?.resourceVersion).toBe(
      b2.metadata?.resourceVersion,
    );
    expect(deleted).toMatchObject({
      type: 'DELETED',
      finalStateUnknown: false,
      object: { metadata: { name: 'a' } },
    });
    expect(lifecycle.some((e) => e.type === 'connected')).toBe(true);

    ac.abort();
    await rec.done;
  });

  it('keeps its memory without delivering changes while the consumer wants none', async () => {
    const ns = `w-quiet-${mode}`;
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    for (const name of ['a', 'b']) await widgets.create({ metadata: { name }, spec: { size: 1 } });
    const remembered = new Map<string, Widget>();
    const memory = {
      get size() {
        return remembered.size;
      },
      get: (key: string) => remembered.get(key),
      set: (key: string, obj: Widget) => {
        remembered.set(key, obj);
        return obj;
      },
      delete: (key: string) => {
        remembered.delete(key);
      },
      keys: () => remembered.keys(),
    };
    let wanted = false;
    const ac = new AbortController();
    const rec = record(
      watcher(widgets, {
        signal: ac.signal,
        watchList: mode === 'watch-list',
        memory,
        delivering: () => wanted,
      }),
    );
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the initial sync');
    // SYNCED only, and the memory holds the collection.
    expect(rec.events.splice(0).map((e) => e.type)).toEqual(['SYNCED']);
    expect([...remembered.keys()].sort()).toEqual([`${ns}/a`, `${ns}/b`]);
    await widgets.delete('a');
    await eventually(() => !remembered.has(`${ns}/a`), 5000, 'the deletion to reach the memory');
    expect(rec.events).toEqual([]);
    // Wanted again: changes are delivered as before.
    wanted = true;
    await widgets.create({ metadata: { name: 'c' }, spec: { size: 3 } });
    await rec.until((evs) => evs.length >= 1, 'the next change');
    expect(rec.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'c' } } });
    ac.abort();
    await rec.done;
  });

  it('relists after 410 Gone and delivers only the differences, deletions included', async () => {
    const ns = `w-gone-${mode}`;
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    for (const name of ['keep', 'change', 'remove'])
      await widgets.create({ metadata: { name }, spec: { size: 1 } });

    // A client without transport retries, so that every injected failure reaches the watcher.
    const client = t.newClient({ retry: false });
    const ac = new AbortController();
    const lifecycle: WatcherLifecycleEvent[] = [];
    const rec = record(
      watcher(client.api(Widget, ns), {
        signal: ac.signal,
        watchList: mode === 'watch-list',
        backoff: fast,
        random: () => 0,
        onLifecycle: (e) => lifecycle.push(e),
      }),
    );
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the initial sync');
    rec.events.splice(0);

    // Keep the watcher away while the collection changes and its resourceVersion falls out of
    // the server's history (40 events).
    const unblock = t.env.faults.inject({
      match: { verb: 'watch', resource: 'widgets', namespace: ns },
      action: { status: 503 },
    });
    t.env.faults.dropWatches({ resource: 'widgets', namespace: ns });
    await eventually(() => lifecycle.some((e) => e.type === 'backoff'), 5000, 'a failed watch');
    await widgets.patch('change', { spec: { size: 2 } });
    await widgets.delete('remove');
    await widgets.create({ metadata: { name: 'new' }, spec: { size: 3 } });
    const filler = t.client.api(Widget, 'default');
    for (let i = 0; i < 45; i++) {
      await filler.create({ metadata: { name: `filler-${mode}-${i}` } });
      await filler.delete(`filler-${mode}-${i}`);
    }
    unblock();

    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the relist');
    const relist = rec.events;
    expect(names(relist, 'ADDED')).toEqual(['new']);
    expect(names(relist, 'MODIFIED')).toEqual(['change']);
    expect(names(relist, 'DELETED')).toEqual(['remove']);
    const del = relist.find((e) => e.type === 'DELETED');
    expect(del?.type === 'DELETED' && del.finalStateUnknown).toBe(true);
    expect(relist.at(-1)).toMatchObject({ type: 'SYNCED', initial: false });
    // The resume from the old resourceVersion was refused with 410, which triggered the relist.
    expect(lifecycle).toContainEqual(expect.objectContaining({ type: 'relisting', reason: 'expired', mode }));

    ac.abort();
    await rec.done;
  });
});

describe('watcher lifetime', () => {
  it('ends its requests when the consumer stops iterating, and when its signal aborts', async () => {
    const ns = 'w-lifetime';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    await widgets.create({ metadata: { name: 'a' } });
    let seen = 0;
    for await (const ev of watcher(widgets, { watchList: false })) {
      seen++;
      if (ev.type === 'SYNCED') {
        // The watch after the list is not open yet: break before and after it opened.
        break;
      }
    }
    expect(seen).toBe(2);
    const it = watcher(widgets)[Symbol.asyncIterator]();
    while (true) {
      const next = await it.next();
      if (next.done || next.value.type === 'SYNCED') break;
    }
    await eventually(() => t.env.faults.openWatches > 0, 5000, 'the watch to be open');
    await it.return(undefined);
    await eventually(() => t.env.faults.openWatches === 0, 5000, 'no watch left open');

    const ac = new AbortController();
    const rec = record(watcher(widgets, { signal: ac.signal }));
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync');
    await eventually(() => t.env.faults.openWatches > 0, 5000, 'the watch to be open');
    ac.abort();
    await rec.done;
    await eventually(() => t.env.faults.openWatches === 0, 5000, 'no watch left open');
  });
});

describe('watcher errors', () => {
  it('falls back from watch-list to lists when the server rejects it', async () => {
    const ns = 'w-fallback';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    await widgets.create({ metadata: { name: 'x' } });
    // What an API server without the WatchList feature answers.
    t.env.faults.inject({
      match: { verb: 'watch', resource: 'widgets', namespace: ns },
      action: {
        status: 422,
        reason: 'Invalid',
        message:
          'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
      },
      times: 1,
    });
    const ac = new AbortController();
    const lifecycle: WatcherLifecycleEvent[] = [];
    const rec = record(
      watcher(t.newClient({ retry: false }).api(Widget, ns), {
        signal: ac.signal,
        onLifecycle: (e) => lifecycle.push(e),
      }),
    );
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync');
    expect(names(rec.events, 'ADDED')).toEqual(['x']);
    expect(lifecycle.map((e) => e.type)).toContain('fallback');
    expect(
      lifecycle.filter((e) => e.type === 'relisting').map((e) => e.type === 'relisting' && e.mode),
    ).toEqual(['watch-list', 'list']);
    ac.abort();
    await rec.done;
  });

  it('backs off exponentially on server errors, then recovers', async () => {
    const ns = 'w-backoff';
    await t.namespace(ns);
    await t.client.api(Widget, ns).create({ metadata: { name: 'x' } });
    t.env.faults.inject({
      match: { verb: 'list', resource: 'widgets', namespace: ns },
      action: { status: 500 },
      times: 4,
    });
    const ac = new AbortController();
    const lifecycle: WatcherLifecycleEvent[] = [];
    const rec = record(
      watcher(t.newClient({ retry: false }).api(Widget, ns), {
        signal: ac.signal,
        watchList: false,
        backoff: { initialMs: 5, maxMs: 30 },
        random: () => 0,
        onLifecycle: (e) => lifecycle.push(e),
      }),
    );
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync after the errors');
    const errors = lifecycle.filter((e) => e.type === 'error');
    expect(errors).toHaveLength(4);
    expect(errors.every((e) => e.type === 'error' && e.verb === 'list' && !e.auth)).toBe(true);
    const delays = lifecycle.flatMap((e) => (e.type === 'backoff' ? [e.delayMs] : []));
    expect(delays).toEqual([5, 10, 20, 30]);
    expect(names(rec.events, 'ADDED')).toEqual(['x']);
    ac.abort();
    await rec.done;
  });

  it('reports 403 at once and loudly, naming the resource and the verb', async () => {
    const ns = 'w-forbidden';
    await t.namespace(ns);
    const remove = t.env.faults.inject({
      match: { verb: 'list', resource: 'widgets', namespace: ns },
      action: {
        status: 403,
        reason: 'Forbidden',
        message: `widgets.runtime.kubeloop.dev is forbidden: User "robot" cannot list resource "widgets" in API group "runtime.kubeloop.dev" in the namespace "${ns}"`,
      },
    });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const ac = new AbortController();
    try {
      // No lifecycle listener: the default one must make the failure visible.
      const rec = record(
        watcher(t.newClient({ retry: false }).api(Widget, ns), {
          signal: ac.signal,
          watchList: false,
          backoff: fast,
        }),
      );
      await eventually(() => warnings.length > 0, 5000, 'a process warning');
      const w = warnings[0]!;
      expect(w.name).toBe('KubeloopWatcherError');
      expect(w.message).toContain('widgets.runtime.kubeloop.dev');
      expect(w.message).toContain(`namespace "${ns}"`);
      expect(w.message).toContain('cannot list');
      expect(w.message).toContain('403 Forbidden');
      expect(w.message).toContain('User "robot" cannot list resource "widgets"');
      expect(rec.events).toEqual([]);

      // It keeps trying: once allowed, it syncs.
      remove();
      await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync once allowed');
      ac.abort();
      await rec.done;
    } finally {
      ac.abort();
      process.off('warning', onWarning);
    }
  });

  it('reports 401 when the credentials are refused', async () => {
    const lifecycle: WatcherLifecycleEvent[] = [];
    const ac = new AbortController();
    const intruder = new Client({ ...t.env.clientConfig, token: 'not-a-token' }, { retry: false });
    try {
      const rec = record(
        watcher(intruder.api(Widget, 'default'), {
          signal: ac.signal,
          backoff: fast,
          onLifecycle: (e) => lifecycle.push(e),
        }),
      );
      await eventually(() => lifecycle.find((e) => e.type === 'error'), 5000, 'an error');
      const err = lifecycle.find((e) => e.type === 'error');
      expect(err?.type === 'error' && err.auth).toBe(true);
      expect(err?.type === 'error' && (err.error as ApiError).code).toBe(401);
      expect(err?.type === 'error' && err.message).toMatch(/cannot (list|watch).*401 Unauthorized/);
      ac.abort();
      await rec.done;
      expect(rec.events).toEqual([]);
    } finally {
      ac.abort();
      await intruder.close();
    }
  });

  it('resumes dropped streams from the last resourceVersion without relisting', async () => {
    const ns = 'w-drop';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    await widgets.create({ metadata: { name: 'a' } });
    const ac = new AbortController();
    const lifecycle: WatcherLifecycleEvent[] = [];
    const rec = record(
      watcher(widgets, { signal: ac.signal, backoff: fast, onLifecycle: (e) => lifecycle.push(e) }),
    );
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync');
    for (let i = 0; i < 3; i++) {
      await eventually(
        () => t.env.faults.dropWatches({ resource: 'widgets', namespace: ns }) > 0,
        5000,
        'a stream',
      );
      await widgets.create({ metadata: { name: `after-drop-${i}` } });
    }
    await rec.until((evs) => names(evs, 'ADDED').length === 4, 'the objects created between drops');
    expect(names(rec.events, 'ADDED')).toEqual(['a', 'after-drop-0', 'after-drop-1', 'after-drop-2']);
    expect(lifecycle.filter((e) => e.type === 'relisting')).toHaveLength(1);
    expect(lifecycle.some((e) => e.type === 'reconnecting' && e.reason === 'closed')).toBe(true);
    ac.abort();
    await rec.done;
  });

  it('uses bookmarks: a quiet collection resumes after much traffic elsewhere without a relist', async () => {
    const ns = 'w-bookmarks';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    await widgets.create({ metadata: { name: 'quiet' } });
    const ac = new AbortController();
    const lifecycle: WatcherLifecycleEvent[] = [];
    const rec = record(watcher(widgets, { signal: ac.signal, onLifecycle: (e) => lifecycle.push(e) }));
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync');
    // More changes elsewhere than the server's history holds (40).
    const other = t.client.api(Widget, 'default');
    let last = '';
    for (let i = 0; i < 50; i++) {
      const w = await other.create({ metadata: { name: `elsewhere-${i}` } });
      last = w.metadata?.resourceVersion ?? last;
      await other.delete(`elsewhere-${i}`);
    }
    await eventually(
      () => lifecycle.some((e) => e.type === 'bookmark' && Number(e.resourceVersion) >= Number(last)),
      5000,
      'a bookmark past the traffic',
    );
    t.env.faults.dropWatches({ resource: 'widgets', namespace: ns });
    await widgets.create({ metadata: { name: 'after' } });
    await rec.until((evs) => names(evs, 'ADDED').includes('after'), 'the new object');
    // Resumed from the bookmark: no 410, no second list.
    expect(lifecycle.filter((e) => e.type === 'relisting')).toHaveLength(1);
    ac.abort();
    await rec.done;
  });

  it('relists when a list continuation expires, then lists in one request', async () => {
    const ns = 'w-continue';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    for (let i = 0; i < 6; i++) await widgets.create({ metadata: { name: `c${i}` } });
    const client = t.newClient({ retry: false });
    // Continuations belong to lists from storage: the first list (at resourceVersion 0) is
    // answered as by a server that cannot serve it from a cache, then the second page of the
    // consistent list fails as an expired continue token does.
    t.env.faults.inject({
      match: { verb: 'list', resource: 'widgets', namespace: ns },
      action: { status: 410, reason: 'Expired', message: 'too old resource version: 1 (2)' },
      times: 1,
    });
    t.env.faults.inject({
      match: { verb: 'list', resource: 'widgets', namespace: ns, path: 'widgets' },
      action: { delayMs: 1 },
      times: 1,
    });
    t.env.faults.inject({
      match: { verb: 'list', resource: 'widgets', namespace: ns },
      action: { status: 410, reason: 'Expired', message: 'The provided continue parameter is too old' },
      times: 1,
    });
    const ac = new AbortController();
    const lifecycle: WatcherLifecycleEvent[] = [];
    const rec = record(
      watcher(client.api(Widget, ns), {
        signal: ac.signal,
        watchList: false,
        pageSize: 2,
        backoff: fast,
        onLifecycle: (e) => lifecycle.push(e),
      }),
    );
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync');
    expect(names(rec.events, 'ADDED')).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
    expect(lifecycle.filter((e) => e.type === 'relisting')).toHaveLength(3);
    expect(lifecycle.some((e) => e.type === 'error' && isGone(e.error))).toBe(false);
    ac.abort();
    await rec.done;
  });
});

describe('watcher lists', () => {
  /** The queries of the list requests a client sends (watches left out). */
  const listQueries = (records: RequestRecord[]) =>
    records
      .map((r) => new URL(r.path, 'http://x').searchParams)
      .filter((q) => q.get('watch') === null)
      .map((q) => Object.fromEntries([...q].filter(([k]) => k !== 'continue' || q.get(k) !== '')));

  it('lists first at resourceVersion 0, whole in one answer, and relists after 410 page by page from storage', async () => {
    const ns = 'w-rv0';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    for (let i = 0; i < 5; i++) await widgets.create({ metadata: { name: `r${i}` } });
    const records: RequestRecord[] = [];
    const client = t.newClient({ retry: false, onRequest: (r) => records.push(r) });
    const ac = new AbortController();
    const lifecycle: WatcherLifecycleEvent[] = [];
    const rec = record(
      watcher(client.api(Widget, ns), {
        signal: ac.signal,
        watchList: false,
        pageSize: 2,
        backoff: fast,
        onLifecycle: (e) => lifecycle.push(e),
      }),
    );
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync');
    expect(names(rec.events, 'ADDED')).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    // As client-go's reflector asks it: the server's cache answers it whole, whatever the limit.
    expect(listQueries(records)).toEqual([{ resourceVersion: '0', limit: '2' }]);
    const synced = lifecycle.find((e) => e.type === 'synced');
    expect(synced?.type === 'synced' && synced.resourceVersion).toMatch(/^\d+$/);

    // The watch's resourceVersion expires: a relist must not go back in time, so it is a
    // consistent list from storage, paged.
    await eventually(() => lifecycle.some((e) => e.type === 'connected'), 5000, 'the watch');
    records.splice(0);
    rec.events.splice(0);
    t.env.faults.inject({
      match: { verb: 'watch', resource: 'widgets', namespace: ns },
      action: { status: 410, reason: 'Expired', message: 'too old resource version' },
      times: 1,
    });
    t.env.faults.dropWatches({ resource: 'widgets', namespace: ns });
    await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the relist');
    expect(lifecycle).toContainEqual(expect.objectContaining({ type: 'relisting', reason: 'expired' }));
    const queries = listQueries(records);
    expect(queries).toHaveLength(3);
    expect(queries[0]).toEqual({ limit: '2' });
    expect(queries[2]).toMatchObject({ limit: '2', continue: expect.any(String) });
    // Nothing changed meanwhile: nothing but the end of the relist is delivered.
    expect(rec.events.map((e) => e.type)).toEqual(['SYNCED']);
    ac.abort();
    await rec.done;
  });

  it('falls back at once to a list from storage when resourceVersion 0 cannot be served', async () => {
    const ns = 'w-rv0-fallback';
    await t.namespace(ns);
    const widgets = t.client.api(Widget, ns);
    for (let i = 0; i < 3; i++) await widgets.create({ metadata: { name: `f${i}` } });
    const records: RequestRecord[] = [];
    const client = t.newClient({ retry: false, onRequest: (r) => records.push(r) });
    // What a kube-apiserver answers when its cache is behind the asked version (504) or a
    // storage without history cannot serve it (410).
    for (const action of [{ status: 410, reason: 'Expired', message: 'too old resource version' }]) {
      records.splice(0);
      t.env.faults.inject({ match: { verb: 'list', resource: 'widgets', namespace: ns }, action, times: 1 });
      const ac = new AbortController();
      const lifecycle: WatcherLifecycleEvent[] = [];
      // A backoff far longer than the test: the fallback must not wait for it.
      const slow = { initialMs: 600_000, maxMs: 600_000, resetAfterMs: 600_000 };
      const rec = record(
        watcher(client.api(Widget, ns), {
          signal: ac.signal,
          watchList: false,
          backoff: slow,
          onLifecycle: (e) => lifecycle.push(e),
        }),
      );
      await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync');
      expect(names(rec.events, 'ADDED')).toEqual(['f0', 'f1', 'f2']);
      expect(listQueries(records)).toEqual([{ resourceVersion: '0', limit: '500' }, { limit: '500' }]);
      expect(lifecycle.filter((e) => e.type === 'error' || e.type === 'backoff')).toEqual([]);
      ac.abort();
      await rec.done;
    }
  });
});

describe('watcher watchdog', () => {
  it('reopens a stream that went quiet past its bound', async () => {
    // No bookmarks from this server: an idle collection's stream is silent.
    const quiet = await startRuntimeEnv({ bookmarkIntervalMs: 0 });
    try {
      const widgets = quiet.client.api(Widget, 'default');
      const ac = new AbortController();
      const lifecycle: WatcherLifecycleEvent[] = [];
      const rec = record(
        watcher(widgets, { signal: ac.signal, idleTimeoutMs: 200, onLifecycle: (e) => lifecycle.push(e) }),
      );
      await rec.until((evs) => evs.some((e) => e.type === 'SYNCED'), 'the sync');
      await eventually(
        () => lifecycle.filter((e) => e.type === 'reconnecting' && e.reason === 'idle').length >= 2,
        5000,
        'two idle reconnects',
      );
      // The reopened stream works, and the old ones are closed.
      await widgets.create({ metadata: { name: 'after-idle' } });
      await rec.until((evs) => names(evs, 'ADDED').includes('after-idle'), 'the object');
      expect(quiet.env.faults.openWatches).toBeLessThanOrEqual(1);
      ac.abort();
      await rec.done;
    } finally {
      await quiet.stop();
    }
  });
});
