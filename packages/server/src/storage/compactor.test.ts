import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Compactor } from './compactor.js';
import { openSqliteJournal } from './sqlite-journal.js';
import { collectionPrefix, objectKey, StorageError, Store } from './store.js';

const key = (name: string) => objectKey('', 'configmaps', 'default', name);
const prefix = collectionPrefix('', 'configmaps', 'default');
const cm = (name: string, v: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { v },
});

describe('Compactor', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const openStore = (dir: string) => Store.open({ journal: openSqliteJournal(dir) });

  it('compacts at each tick to the revision noted at the previous one, durably', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-compactor-'));
    dirs.push(dir);
    const store = openStore(dir);
    const compactor = new Compactor(store, { intervalMs: 60_000 });
    await store.create(key('a'), cm('a', '1'));
    // The first tick only takes note: what was written before a (re)start keeps a full interval.
    expect(await compactor.tick()).toBeUndefined();
    expect(store.oldestRevision).toBe(0);
    const noted = store.revision;
    await store.update(key('a'), cm('a', '2'));
    expect(await compactor.tick()).toBe(noted);
    expect(store.oldestRevision).toBe(noted);
    expect(() => store.watch(prefix, noted - 1, () => {})).toThrow(StorageError);
    const seen: string[] = [];
    store.watch(prefix, noted, (e) => seen.push(String((e.object.object.data as { v?: string }).v)))();
    expect(seen).toEqual(['2']);
    // Nothing written since the last tick: the next one compacts to it, and one more does nothing.
    expect(await compactor.tick()).toBe(noted + 1);
    expect(await compactor.tick()).toBeUndefined();
    await store.close();

    const reopened = openStore(dir);
    expect(reopened.oldestRevision).toBe(noted + 1);
    await reopened.close();
  });

  it('never compacts with an interval of 0', async () => {
    const store = Store.open();
    const compactor = new Compactor(store, { intervalMs: 0 });
    compactor.start();
    await compactor.stop();
    expect(() => new Compactor(store, { intervalMs: -1 })).toThrow(RangeError);
  });
});
