import { eventually } from '@kubeloop/server/testing';
import {
  type ApiError,
  Client,
  ConfigMap,
  isBadRequest,
  isGone,
  isNetworkError,
  Namespace,
  WatchDecodeError,
  type WatchEvent,
} from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientEnv, captureServer, rejection, startClientEnv } from './helpers.js';

let t: ClientEnv;
beforeAll(async () => {
  t = await startClientEnv({ bookmarkIntervalMs: 50, watchHistorySize: 50 });
  await t.client.api(Namespace).create({ metadata: { name: 'w' } });
});
afterAll(() => t.stop());

/** Pulls events until `until` says stop (or the stream ends). */
async function take<T>(
  it: AsyncIterator<WatchEvent<T>>,
  until: (seen: WatchEvent<T>[]) => boolean,
): Promise<WatchEvent<T>[]> {
  const seen: WatchEvent<T>[] = [];
  while (!until(seen)) {
    const next = await it.next();
    if (next.done) break;
    seen.push(next.value);
  }
  return seen;
}

describe('watch', () => {
  it('streams typed ADDED, MODIFIED and DELETED events from a list resourceVersion', async () => {
    const cms = t.client.api(ConfigMap, 'w');
    const list = await cms.list();
    const watch = cms.watch({
      resourceVersion: list.metadata.resourceVersion,
      labelSelector: { watched: 'yes' },
    });
    const it = watch[Symbol.asyncIterator]();
    const first = it.next(); // the request starts with the first next()
    await eventually(() => t.env.faults.openWatches > 0, 5000, 'watch open');
    const created = await cms.create({
      metadata: { name: 'w1', labels: { watched: 'yes' } },
      data: { v: '1' },
    });
    await cms.create({ metadata: { name: 'ignored' } });
    await cms.patch('w1', { data: { v: '2' } });
    await cms.delete('w1');
    const ev1 = (await first).value as WatchEvent<ConfigMap>;
    const rest = await take(it, (s) => s.length >= 2);
    const events = [ev1, ...rest];
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    const added = events[0]!;
    expect(added.type === 'ADDED' && added.object.data).toEqual({ v: '1' });
    expect(added.type === 'ADDED' && added.resourceVersion).toBe(created.metadata?.resourceVersion);
    const modified = events[1]!;
    expect(modified.type === 'MODIFIED' && modified.object.data).toEqual({ v: '2' });
    await it.return?.();
    await eventually(() => t.env.faults.openWatches === 0, 5000, 'watch closed after return()');
  });

  it('delivers bookmarks and the end of the initial events of a watch-list', async () => {
    const cms = t.client.api(ConfigMap, 'w');
    await cms.create({ metadata: { name: 'initial-a', labels: { wl: 'yes' } } });
    await cms.create({ metadata: { name: 'initial-b', labels: { wl: 'yes' } } });
    const it = cms.watch({ sendInitialEvents: true, labelSelector: 'wl=yes' })[Symbol.asyncIterator]();
    const events = await take(it, (s) => s.some((e) => e.type === 'BOOKMARK' && e.initialEventsEnd));
    await it.return?.();
    const names = events.flatMap((e) => (e.type === 'ADDED' ? [e.object.metadata?.name] : []));
    expect(names.sort()).toEqual(['initial-a', 'initial-b']);
    const end = events.at(-1)!;
    expect(end.type === 'BOOKMARK' && Number(end.resourceVersion)).toBeGreaterThan(0);

    // Periodic bookmarks carry the latest resourceVersion.
    const list = await cms.list();
    const bm = cms
      .watch({ resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true })
      [Symbol.asyncIterator]();
    const withBookmark = await take(bm, (s) => s.some((e) => e.type === 'BOOKMARK'));
    await bm.return?.();
    const bookmark = withBookmark.find((e) => e.type === 'BOOKMARK')!;
    expect(bookmark.type === 'BOOKMARK' && bookmark.initialEventsEnd).toBe(false);
    expect(Number(bookmark.type === 'BOOKMARK' && bookmark.resourceVersion)).toBeGreaterThanOrEqual(
      Number(list.metadata.resourceVersion),
    );
  });

  it('ends when the server ends the watch (timeoutSeconds, dropped stream)', async () => {
    const cms = t.client.api(ConfigMap, 'w');
    const events: string[] = [];
    for await (const ev of cms.watch({ timeoutSeconds: 1, labelSelector: 'none=none' })) events.push(ev.type);
    expect(events).toEqual([]);

    const done = (async () => {
      const seen: string[] = [];
      for await (const ev of cms.watch({ labelSelector: 'none=none' })) seen.push(ev.type);
      return seen;
    })();
    await eventually(() => t.env.faults.openWatches > 0, 5000, 'watch open');
    t.env.faults.dropWatches();
    expect(await done).toEqual([]);
  });

  it('throws a typed 410 when the resourceVersion is too old', async () => {
    const cms = t.client.api(ConfigMap, 'w');
    const old = (await cms.list()).metadata.resourceVersion!;
    // More changes than the server keeps in its watch history (50, trimmed once it reaches 1.25 times that).
    for (let i = 0; i < 70; i++) await cms.create({ metadata: { name: `churn-${i}` } });
    const err = await rejection<ApiError>(
      (async () => {
        for await (const _ of cms.watch({ resourceVersion: old })) {
          // nothing arrives before the error
        }
      })(),
    );
    expect(isGone(err)).toBe(true);
    expect(err.code).toBe(410);
  });

  it('throws the server answer when the watch request itself is refused', async () => {
    const err = await rejection<ApiError>(
      (async () => {
        for await (const _ of t.client.api(ConfigMap, 'w').watch({ fieldSelector: 'spec.nope=x' })) {
          // no events
        }
      })(),
    );
    expect(isBadRequest(err)).toBe(true);
  });

  it('ends quietly when its signal aborts, and closes the stream', async () => {
    const ac = new AbortController();
    const done = (async () => {
      const seen: string[] = [];
      for await (const ev of t.client
        .api(ConfigMap, 'w')
        .watch({ signal: ac.signal, labelSelector: 'none=none' })) {
        seen.push(ev.type);
      }
      return seen;
    })();
    await eventually(() => t.env.faults.openWatches > 0, 5000, 'watch open');
    ac.abort();
    expect(await done).toEqual([]);
    await eventually(() => t.env.faults.openWatches === 0, 5000, 'watch closed after abort');
  });

  it('watches across all namespaces', async () => {
    const all = t.client.api(ConfigMap, '');
    const list = await all.list();
    const it = all
      .watch({ resourceVersion: list.metadata.resourceVersion, labelSelector: 'everywhere' })
      [Symbol.asyncIterator]();
    const first = it.next();
    await eventually(() => t.env.faults.openWatches > 0, 5000, 'watch open');
    await t.client
      .api(ConfigMap, 'default')
      .create({ metadata: { name: 'e1', labels: { everywhere: '1' } } });
    await t.client.api(ConfigMap, 'w').create({ metadata: { name: 'e2', labels: { everywhere: '1' } } });
    const events = [(await first).value as WatchEvent<ConfigMap>, ...(await take(it, (s) => s.length >= 1))];
    await it.return?.();
    expect(events.map((e) => (e.type === 'ADDED' ? e.object.metadata?.namespace : e.type))).toEqual([
      'default',
      'w',
    ]);
  });
});

describe('watch streams that are not well-formed', () => {
  it('turns each unparseable line into an ERROR event and goes on', async () => {
    const cm = (name: string) =>
      JSON.stringify({
        type: 'ADDED',
        object: { kind: 'ConfigMap', metadata: { name, resourceVersion: '3' } },
      });
    const server = await captureServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${cm('a')}\n`);
      res.write('this is not json\n');
      res.write('{"type":"ADDED"}\n');
      res.write(`${cm('b')}\n`);
      res.end('{"type":"MODIF');
    });
    const client = new Client({ server: server.url });
    try {
      const events: WatchEvent<ConfigMap>[] = [];
      for await (const ev of client.api(ConfigMap, 'default').watch()) events.push(ev);
      expect(events.map((e) => e.type)).toEqual(['ADDED', 'ERROR', 'ERROR', 'ADDED', 'ERROR']);
      const bad = events[1]!;
      expect(bad.type === 'ERROR' && bad.error).toBeInstanceOf(WatchDecodeError);
      expect(bad.type === 'ERROR' && bad.error.line).toBe('this is not json');
      expect(server.requests[0]!.url).toBe('/api/v1/namespaces/default/configmaps?watch=true');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('raises a connection cut mid-stream as a NetworkError', async () => {
    const server = await captureServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
      // Destroy the socket after the first event is flushed, as a crashing server would.
      res.socket?.end(() => res.socket?.destroy());
    });
    const client = new Client({ server: server.url });
    try {
      const seen: string[] = [];
      const err = await rejection(
        (async () => {
          for await (const ev of client.api(ConfigMap, 'default').watch()) seen.push(ev.type);
        })(),
      );
      expect(isNetworkError(err)).toBe(true);
      expect(seen).toEqual(['ADDED']);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
