import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteJournal } from './sqlite-journal.js';
import { collectionPrefix, objectKey, StorageError, Store } from './store.js';
import type { StoreEvent } from './types.js';

const cm = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data,
});
const key = (name: string, ns = 'default') => objectKey('', 'configmaps', ns, name);
const prefix = collectionPrefix('', 'configmaps', 'default');

describe('Store (memory)', () => {
  it('assigns one increasing revision to every write and stamps resourceVersion', async () => {
    const s = Store.open();
    const a = await s.create(key('a'), cm('a'));
    const b = await s.create(key('b'), cm('b'));
    const a2 = await s.update(key('a'), cm('a', { x: '1' }));
    const gone = await s.delete(key('b'));
    expect([a.revision, b.revision, a2.revision, gone.revision]).toEqual([1, 2, 3, 4]);
    expect(a2.object.metadata?.resourceVersion).toBe('3');
    expect(gone.object.metadata?.resourceVersion).toBe('4');
    expect(s.revision).toBe(4);
    expect(JSON.parse(a2.json)).toEqual(a2.object);
    expect(Object.isFrozen(a2.object.metadata)).toBe(true);
  });

  it('stamps resourceVersion after the metadata it was given, in its order, an own __proto__ key too', async () => {
    const s = Store.open();
    const given = JSON.parse(
      '{"metadata":{"name":"p","namespace":"default","__proto__":{"x":"1"},"labels":{"a":"b"}}}',
    ) as Parameters<Store['create']>[1];
    const stored = await s.create(key('p'), given);
    expect(stored.json).toBe(
      '{"metadata":{"name":"p","namespace":"default","__proto__":{"x":"1"},"labels":{"a":"b"},"resourceVersion":"1"}}',
    );
    const updated = await s.update(key('p'), stored.object);
    expect(Object.keys(updated.object.metadata ?? {})).toEqual([
      'name',
      'namespace',
      '__proto__',
      'labels',
      'resourceVersion',
    ]);
    expect(updated.object.metadata?.resourceVersion).toBe('2');
  });

  it('has: whether a list under a prefix would have items', async () => {
    const s = Store.open();
    expect(s.has(prefix)).toBe(false);
    await s.create(key('a', 'other'), cm('a'));
    await s.create(key('b', 'zz'), cm('b'));
    expect(s.has(prefix)).toBe(false);
    expect(s.has(collectionPrefix('', 'configmaps', 'other'))).toBe(true);
    await s.create(key('c'), cm('c'));
    expect(s.has(prefix)).toBe(true);
    expect(s.has(collectionPrefix('', 'configmaps'))).toBe(true);
    await s.delete(key('c'));
    expect(s.has(prefix)).toBe(false);
    expect(s.has(collectionPrefix('', 'secrets'))).toBe(false);
  });

  it('changeCounter: changes with every write to the collection, in any namespace, and with nothing else', async () => {
    const s = Store.open();
    const count = s.changeCounter(collectionPrefix('', 'configmaps'));
    // Made before the collection has its first object, and for a namespace's prefix.
    const inNamespace = s.changeCounter(prefix);
    const seen = [count()];
    await s.create(key('a', 'other'), cm('a'));
    seen.push(count());
    await s.create(objectKey('', 'secrets', 'default', 'x'), cm('x'));
    expect(count()).toBe(seen[1]);
    await s.update(key('a', 'other'), cm('a'));
    seen.push(count());
    await s.delete(key('a', 'other'));
    seen.push(count());
    expect(inNamespace()).toBe(count());
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('refuses duplicate creates, missing updates and stale revisions', async () => {
    const s = Store.open();
    const a = await s.create(key('a'), cm('a'));
    await expect(s.create(key('a'), cm('a'))).rejects.toMatchObject({ code: 'AlreadyExists' });
    await expect(s.update(key('zz'), cm('zz'))).rejects.toMatchObject({ code: 'NotFound' });
    await s.update(key('a'), cm('a', { v: '2' }), a.revision);
    await expect(s.update(key('a'), cm('a', { v: '3' }), a.revision)).rejects.toBeInstanceOf(StorageError);
    await expect(s.delete(key('a'), a.revision)).rejects.toMatchObject({ code: 'Conflict' });
  });

  it('lists in key order with pagination and filters, and only under the prefix', async () => {
    const s = Store.open();
    for (const n of ['c', 'a', 'b', 'd']) await s.create(key(n), cm(n, { n }));
    await s.create(key('a', 'other'), cm('a'));
    const all = s.list(prefix);
    expect(all.items.map((i) => i.object.metadata?.name)).toEqual(['a', 'b', 'c', 'd']);
    const page1 = s.list(prefix, { limit: 3 });
    expect(page1.items).toHaveLength(3);
    expect(page1.continueAfter).toBe(key('c'));
    const page2 = s.list(prefix, { after: page1.continueAfter!, limit: 3 });
    expect(page2.items.map((i) => i.object.metadata?.name)).toEqual(['d']);
    expect(page2.continueAfter).toBeUndefined();
    expect(s.list(collectionPrefix('', 'configmaps')).items).toHaveLength(5);
    expect(s.count(prefix, page1.continueAfter!)).toBe(1);
    expect(s.count(prefix, key('a'))).toBe(3);
    expect(s.count(collectionPrefix('', 'configmaps'), key('a'))).toBe(4);
    const filtered = s.list(prefix, { filter: (o) => o.object.metadata?.name !== 'b', limit: 2 });
    expect(filtered.items.map((i) => i.object.metadata?.name)).toEqual(['a', 'c']);
  });

  it('lists the current state after every kind of write (its key-ordered view follows them)', async () => {
    const s = Store.open();
    const names = ['d', 'b', 'e', 'a', 'c'];
    for (const n of names) await s.create(key(n), cm(n, { v: '0' }));
    const v = (o: { object: object }) => (o.object as { data?: { v?: string } }).data?.v;
    const state = () => s.list(prefix).items.map((o) => `${o.object.metadata?.name}=${v(o) ?? '-'}`);
    expect(state()).toEqual(['a=0', 'b=0', 'c=0', 'd=0', 'e=0']);
    const before = s.list(prefix).items;
    await s.update(key('c'), cm('c', { v: '1' }));
    await s.update(key('a'), cm('a', { v: '2' }));
    expect(state()).toEqual(['a=2', 'b=0', 'c=1', 'd=0', 'e=0']);
    // A list already returned is a snapshot: later writes do not change it.
    expect(before.map(v)).toEqual(['0', '0', '0', '0', '0']);
    await s.delete(key('b'));
    await s.create(key('bb'), cm('bb', { v: '3' }));
    await s.update(key('e'), cm('e', { v: '4' }));
    expect(state()).toEqual(['a=2', 'bb=3', 'c=1', 'd=0', 'e=4']);
    expect(s.list(prefix, { limit: 2, after: key('bb') }).items.map((o) => o.object.metadata?.name)).toEqual([
      'c',
      'd',
    ]);
    expect(s.list(prefix, { atRevision: 5 }).items.map(v)).toEqual(['0', '0', '0', '0', '0']);
  });

  it('lists the state as of an older revision within the history', async () => {
    const s = Store.open();
    await s.create(key('a'), cm('a', { v: '1' }));
    await s.create(key('b'), cm('b'));
    const at = s.revision;
    await s.update(key('a'), cm('a', { v: '2' }));
    await s.delete(key('b'));
    await s.create(key('c'), cm('c'));
    const past = s.list(prefix, { atRevision: at });
    expect(past.revision).toBe(at);
    expect(
      past.items.map((i) => [i.object.metadata?.name, (i.object.data as Record<string, string>)?.v]),
    ).toEqual([
      ['a', '1'],
      ['b', undefined],
    ]);
  });

  it('answers TooOld for revisions older than the bounded history', async () => {
    const s = Store.open({ historySize: 4 });
    for (let i = 0; i < 20; i++) await s.create(key(`o${i}`), cm(`o${i}`));
    expect(s.oldestRevision).toBeGreaterThan(1);
    expect(() => s.watch(prefix, 1, () => undefined)).toThrow(/too old resource version/);
    expect(() => s.list(prefix, { atRevision: 1 })).toThrow(StorageError);
    const events: StoreEvent[] = [];
    s.watch(prefix, s.oldestRevision, (e) => events.push(e));
    expect(events.length).toBeGreaterThan(0);
    expect(events[events.length - 1]!.revision).toBe(20);
  });

  it('delivers every change after the start revision exactly once, in order', async () => {
    const s = Store.open();
    await s.create(key('a'), cm('a'));
    const from = s.revision;
    await s.create(key('b'), cm('b'));
    const events: StoreEvent[] = [];
    const stop = s.watch(prefix, from, (e) => events.push(e));
    await s.update(key('a'), cm('a', { x: 'y' }));
    await s.create(key('z', 'other'), cm('z'));
    await s.delete(key('b'));
    stop();
    await s.create(key('late'), cm('late'));
    expect(events.map((e) => [e.type, e.object.object.metadata?.name, e.revision])).toEqual([
      ['ADDED', 'b', 2],
      ['MODIFIED', 'a', 3],
      ['DELETED', 'b', 5],
    ]);
    expect(events[1]!.prev?.revision).toBe(1);
  });
});

describe('Store (durable)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('reloads objects and keeps revisions increasing after reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-store-'));
    dirs.push(dir);
    const s1 = Store.open({ journal: openSqliteJournal(dir) });
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => s1.create(key(`o${i}`), cm(`o${i}`, { i: String(i) }))),
    );
    await s1.delete(key('o7'));
    const rev = s1.revision;
    await s1.close();

    const s2 = Store.open({ journal: openSqliteJournal(dir) });
    expect(s2.revision).toBe(rev);
    const items = s2.list(prefix).items;
    expect(items).toHaveLength(49);
    expect(items.find((i) => i.object.metadata?.name === 'o3')?.object.data).toEqual({ i: '3' });
    const next = await s2.create(key('new'), cm('new'));
    expect(next.revision).toBe(rev + 1);
    await s2.close();
  });

  it('publishes watch events only after commit, in revision order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-store-'));
    dirs.push(dir);
    const s = Store.open({ journal: openSqliteJournal(dir) });
    const seen: number[] = [];
    s.watch(prefix, 0, (e) => seen.push(e.revision));
    const writes = Array.from({ length: 30 }, (_, i) => s.create(key(`o${i}`), cm(`o${i}`)));
    expect(seen).toEqual([]);
    await Promise.all(writes);
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    await s.close();
  });

  /** A store on `dir` whose memory history holds `historySize` events. */
  const durable = (dir: string, historySize?: number) =>
    Store.open({ journal: openSqliteJournal(dir), ...(historySize && { historySize }) });
  const seenOf = (events: StoreEvent[]) =>
    events.map((e) => [e.type, e.object.object.metadata?.name, e.revision, e.prev?.revision]);

  it('replays the history after a reopen, with previous states, for watches and lists at a revision', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-store-'));
    dirs.push(dir);
    const s1 = durable(dir);
    await s1.create(key('a'), cm('a', { v: '1' }));
    await s1.create(key('b'), cm('b'));
    const noted = s1.revision;
    await s1.update(key('a'), cm('a', { v: '2' }));
    await s1.create(key('z', 'other'), cm('z'));
    await s1.delete(key('b'));
    await s1.create(key('c'), cm('c'));
    await s1.close();

    const s2 = durable(dir);
    expect(s2.oldestRevision).toBe(0);
    const events: StoreEvent[] = [];
    const stop = s2.watch(prefix, noted, (e) => events.push(e));
    await s2.update(key('c'), cm('c', { v: '2' }));
    stop();
    expect(seenOf(events)).toEqual([
      ['MODIFIED', 'a', 3, 1],
      ['DELETED', 'b', 5, 2],
      ['ADDED', 'c', 6, undefined],
      ['MODIFIED', 'c', 7, 6],
    ]);
    // DELETED carries the last state, stamped with the deletion's revision.
    expect(events[1]!.object.object.metadata?.resourceVersion).toBe('5');
    expect(events[0]!.object.object.data).toEqual({ v: '2' });
    expect(events[0]!.prev?.object.data).toEqual({ v: '1' });
    const then = s2.list(prefix, { atRevision: noted });
    expect(then.items.map((i) => [i.object.metadata?.name, i.revision, i.object.data])).toEqual([
      ['a', 1, { v: '1' }],
      ['b', 2, {}],
    ]);
    await s2.close();
  });

  it('serves the events older than the memory history from the journal, without a gap or a repeat', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-store-'));
    dirs.push(dir);
    const s = durable(dir, 4);
    for (let i = 0; i < 20; i++) await s.create(key(`o${i}`), cm(`o${i}`));
    const revisions: number[] = [];
    s.watch(prefix, 3, (e) => revisions.push(e.revision));
    await s.create(key('last'), cm('last'));
    expect(revisions).toEqual(Array.from({ length: 18 }, (_, i) => i + 4));
    expect(s.list(prefix, { atRevision: 2 }).items.map((i) => i.revision)).toEqual([1, 2]);
    await s.close();
  });

  it('answers TooOld only before the compacted revision, also after a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-store-'));
    dirs.push(dir);
    const s1 = durable(dir);
    await s1.create(key('keep'), cm('keep', { v: '0' }));
    for (let i = 1; i <= 5; i++) await s1.update(key('keep'), cm('keep', { v: String(i) }));
    await s1.create(key('gone'), cm('gone'));
    await s1.delete(key('gone'));
    const compactTo = s1.revision; // 8: keep at 6, gone deleted
    await s1.update(key('keep'), cm('keep', { v: 'after' }));
    await s1.compact(compactTo);
    expect(() => s1.watch(prefix, compactTo - 1, () => {})).toThrow(
      `too old resource version: ${compactTo - 1} (${compactTo + 1})`,
    );
    await s1.close();

    const s2 = durable(dir);
    expect(s2.oldestRevision).toBe(compactTo);
    expect(() => s2.watch(prefix, compactTo - 1, () => {})).toThrow(StorageError);
    expect(() => s2.list(prefix, { atRevision: compactTo - 1 })).toThrow(StorageError);
    const events: StoreEvent[] = [];
    s2.watch(prefix, compactTo, (e) => events.push(e)); // the previous state of keep survived compaction
    expect(seenOf(events)).toEqual([['MODIFIED', 'keep', 9, 6]]);
    expect(s2.list(prefix, { atRevision: compactTo }).items.map((i) => i.object.data)).toEqual([{ v: '5' }]);
    await s2.close();
  });
});
