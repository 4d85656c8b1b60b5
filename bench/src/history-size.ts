/**
 * Disk cost of the durable watch history: the size of the data file (`kubeloop.db` plus its
 * write-ahead log) after each round of 10,000 updates, with the compaction policy of
 * `kubeloop server` (a compaction per round, to the revision of the previous one, as
 * `--compaction-interval` does per interval) and without compaction.
 *
 * The store is driven in process, so that a round ends exactly where the compaction tick falls, and
 * the size is taken after a checkpoint (on close), without the write-ahead log's passing pages:
 *
 *   npm run build && node bench/dist/history-size.js
 *   node bench/dist/history-size.js --objects=1000 --rounds=5 --updates=10000
 *   node bench/dist/history-size.js --storage=/path/to/other/storage/dist   # another build's storage, e.g. main's
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { storedConfigMap } from './lib/objects.js';

/** The part of the server's storage this bench uses (loaded from a build's dist at run time). */
interface StoreLike {
  readonly committedRevision: number;
  create(key: string, object: object): Promise<unknown>;
  update(key: string, object: object): Promise<unknown>;
  compact?(revision: number): Promise<void>;
  close(): Promise<void>;
}
interface StorageModules {
  Store: { open(opts: { journal: unknown }): StoreLike };
  openSqliteJournal(dir: string): unknown;
}

const here = dirname(fileURLToPath(import.meta.url));

async function loadStorage(dir: string): Promise<StorageModules> {
  const store = (await import(pathToFileURL(join(dir, 'store.js')).href)) as Pick<StorageModules, 'Store'>;
  const journal = (await import(pathToFileURL(join(dir, 'sqlite-journal.js')).href)) as Pick<
    StorageModules,
    'openSqliteJournal'
  >;
  return { Store: store.Store, openSqliteJournal: journal.openSqliteJournal };
}

function fileBytes(dir: string): number {
  let n = 0;
  for (const f of ['kubeloop.db', 'kubeloop.db-wal']) {
    try {
      n += statSync(join(dir, f)).size;
    } catch {
      // No log right after a checkpoint.
    }
  }
  return n;
}

/** Runs `rounds` rounds of `updates` updates over `objects` ConfigMaps; returns the size after each. */
async function run(
  storage: StorageModules,
  o: { objects: number; rounds: number; updates: number; compact: boolean },
): Promise<{ start: number; sizes: number[]; perSecond: number[] } | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-history-size-'));
  try {
    let store = storage.Store.open({ journal: storage.openSqliteJournal(dir) });
    if (o.compact && !store.compact) {
      await store.close();
      return undefined;
    }
    const key = (i: number) => `/core/configmaps/default/cm-${String(i).padStart(6, '0')}`;
    const value = JSON.parse(storedConfigMap('default', 'cm')) as { metadata: Record<string, unknown> };
    const objectOf = (i: number, step: number) => ({
      ...value,
      metadata: { ...value.metadata, name: key(i).slice(26) },
      data: { payload: `${step}`.padEnd(220, 'x') },
    });
    /** 64 concurrent writers (group commit makes the run shorter; the sizes do not depend on it). */
    const writers = async (count: number, write: (n: number) => Promise<unknown>) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          for (let n = next++; n < count; n = next++) await write(n);
        }),
      );
    };
    await writers(o.objects, (i) => store.create(key(i), objectOf(i, 0)));
    await store.close();
    const start = fileBytes(dir);
    store = storage.Store.open({ journal: storage.openSqliteJournal(dir) });
    const sizes: number[] = [];
    const perSecond: number[] = [];
    let noted: number | undefined;
    for (let r = 1; r <= o.rounds; r++) {
      const t0 = performance.now();
      await writers(o.updates, (n) =>
        store.update(key(n % o.objects), objectOf(n % o.objects, r * o.updates + n)),
      );
      perSecond.push((o.updates * 1000) / (performance.now() - t0));
      if (o.compact) {
        // The compactor's tick: compact to what the previous tick noted, note the current revision.
        if (noted !== undefined) await store.compact!(noted);
        noted = store.committedRevision;
      }
      // Closing checkpoints and truncates the log: what remains is the file's lasting size.
      await store.close();
      sizes.push(fileBytes(dir));
      store = storage.Store.open({ journal: storage.openSqliteJournal(dir) });
    }
    await store.close();
    return { start, sizes, perSecond };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '1000' },
      rounds: { type: 'string', default: '5' },
      updates: { type: 'string', default: '10000' },
      storage: { type: 'string', default: resolve(here, '../../packages/server/dist/storage') },
    },
  });
  const o = {
    objects: Number(values.objects),
    rounds: Number(values.rounds),
    updates: Number(values.updates),
  };
  const storage = await loadStorage(values.storage);
  console.log(
    `data file size (kubeloop.db, after a checkpoint) after rounds of ${o.updates} updates of ${o.objects} ConfigMaps (storage: ${values.storage})`,
  );
  for (const compact of [false, true]) {
    const result = await run(storage, { ...o, compact });
    if (!result) {
      console.log('  compaction per round: not supported by this storage');
      continue;
    }
    const { start, sizes, perSecond } = result;
    const growth = sizes.map((s, i) => s - (i === 0 ? start : sizes[i - 1]!));
    console.log(
      `  ${compact ? 'compaction per round' : 'no compaction       '}: after creates ${mb(start)}; after each round ${sizes.map(mb).join(', ')}`,
    );
    console.log(`    growth per round: ${growth.map(mb).join(', ')}`);
    console.log(
      `    updates/s (64 writers, group commit, in process) per round: ${perSecond.map((n) => Math.round(n)).join(', ')}`,
    );
  }
}

await main();
