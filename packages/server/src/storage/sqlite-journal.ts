/**
 * The durable journal: the objects and their history in one SQLite file (WAL), appended in
 * batched transactions and acknowledged only after commit, compacted in chunks.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import {
  assertMetaName,
  checkEntries,
  closedError,
  type Journal,
  type JournalEntry,
  JournalError,
  type JournalHistoryEntry,
  type JournalSnapshot,
} from './journal.js';
import {
  COMPACT_CHUNK,
  COMPACTED_META,
  DATA_FILE,
  initialise,
  messageOf,
  REVISION_META,
  removePidFile,
  restamp,
  wrapError,
  wrapOpenError,
  writePidFile,
} from './sqlite-files.js';

/** Options of {@link openSqliteJournal}. */
export interface SqliteJournalOptions {
  /** Truncate the write-ahead log every this many commits (default 1000); it is also truncated on close. */
  compactEvery?: number;
}

/** Counters of a {@link SqliteJournal}, for tests and diagnostics. */
export interface SqliteJournalStats {
  /** Transactions committed by `append` (group commits: one per batch, not per call). */
  commits: number;
  /** Entries written by those transactions. */
  entries: number;
  /** `wal_checkpoint(TRUNCATE)` runs that completed. */
  checkpoints: number;
  /** History rows deleted by compactions. */
  compactedRows: number;
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface HistoryRow {
  revision: number;
  key: string;
  value: string | null;
  deleted: number;
  prev_revision: number | null;
  prev_value: string | null;
}

interface ObjectRow {
  key: string;
  value: string;
  mod_revision: number;
  create_revision: number;
}

/**
 * Opens (creating it if needed) the SQLite journal of the data directory `dir`, file
 * `<dir>/kubeloop.db`. Throws a {@link JournalError}: `in-use` when another server holds the
 * directory, `corrupt`/`incompatible` when the file is not a kubeloop database, `io` otherwise.
 *
 * @example
 * ```ts
 * const journal = openSqliteJournal('.kubeloop/data');
 * const store = Store.open({ journal });
 * // ...
 * await store.close(); // closes the journal
 * ```
 */
export function openSqliteJournal(dir: string, opts: SqliteJournalOptions = {}): SqliteJournal {
  return SqliteJournal.open(dir, opts);
}

/**
 * A {@link Journal} in one SQLite database: an `objects` table with the latest value of every
 * live key, a `history` table with every change since the compacted revision (etcd's MVCC
 * history: what lets a watch resume after a restart), and a `meta` table with the current and
 * compacted revisions and the caller's small values.
 *
 * Each history row links to the row of the state it replaced (`prev_revision`), so that a change
 * read back carries its previous state (a watch with a selector needs it). A compaction to
 * revision C therefore keeps, as etcd does, the latest state at or before C of every key that was
 * not deleted by then: the next change of that key, or a list at C, reads it.
 *
 * The process holds the database with `locking_mode=EXCLUSIVE` for its whole life: the operating
 * system releases that lock when the process dies, however it dies, so a second server is refused
 * while a `kill -9`'d one never blocks a restart. Commits use WAL with `synchronous=FULL`: an
 * acknowledged append is on disk.
 */
export class SqliteJournal implements Journal {
  /** The data file. */
  readonly file: string;
  private readonly dir: string;
  private readonly db: Database.Database;
  private readonly compactEvery: number;
  private readonly commitBatch: (entries: readonly JournalEntry[]) => void;
  private readonly getMetaStmt: Database.Statement<[string], { value: string }>;
  private readonly setMetaStmt: Database.Statement<[string, string]>;
  private readonly historyStmt: Database.Statement<[number, number, string, string], HistoryRow>;
  /** Everything after this revision can be read back; readers see a compaction at once. */
  private compacted: number;
  /** Compactions run one after another. */
  private compacting: Promise<void> = Promise.resolve();
  /** The revision the database holds. */
  private committed: number;
  /** The revision of the last entry accepted by `append`, committed or queued. */
  private accepted: number;
  private queue: JournalEntry[] = [];
  private waiters: Waiter[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private closing: Promise<void> | undefined;
  private sinceCheckpoint = 0;
  private readonly counters: SqliteJournalStats = {
    commits: 0,
    entries: 0,
    checkpoints: 0,
    compactedRows: 0,
  };

  private constructor(dir: string, file: string, db: Database.Database, compactEvery: number) {
    this.dir = dir;
    this.file = file;
    this.db = db;
    this.compactEvery = compactEvery;

    const upsert = db.prepare<[string, string, number, number]>(
      `INSERT INTO objects (key, value, mod_revision, create_revision) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, mod_revision = excluded.mod_revision`,
    );
    const remove = db.prepare<[string]>('DELETE FROM objects WHERE key = ?');
    const record = db.prepare<[number, string, string | null, number, number | null]>(
      'INSERT INTO history (revision, key, value, deleted, prev_revision) VALUES (?, ?, ?, ?, ?)',
    );
    this.historyStmt = db.prepare<[number, number, string, string], HistoryRow>(
      `SELECT h.revision, h.key, h.value, h.deleted, h.prev_revision, p.value AS prev_value
       FROM history h LEFT JOIN history p ON p.revision = h.prev_revision
       WHERE h.revision > ? AND h.revision <= ? AND h.key >= ? AND h.key < ?
       ORDER BY h.revision`,
    );
    this.getMetaStmt = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?');
    this.setMetaStmt = db.prepare<[string, string]>(
      'INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
    );
    const setMeta = this.setMetaStmt;
    this.commitBatch = db.transaction((entries: readonly JournalEntry[]) => {
      for (const e of entries) {
        // create_revision is only taken from the insert: an update keeps the row's original one.
        if (e.type === 'put') upsert.run(e.key, e.value as string, e.revision, e.revision);
        else remove.run(e.key);
        record.run(e.revision, e.key, e.value ?? null, e.type === 'delete' ? 1 : 0, e.prevRevision ?? null);
      }
      // Stored even when the batch is only deletes, so revisions never go back after a restart.
      const last = entries[entries.length - 1];
      if (last) setMeta.run(REVISION_META, String(last.revision));
    });

    this.committed = this.readRevision();
    this.accepted = this.committed;
    this.compacted = this.readCompacted();
  }

  /** @internal Use {@link openSqliteJournal}. */
  static open(dir: string, opts: SqliteJournalOptions): SqliteJournal {
    const compactEvery = opts.compactEvery ?? 1000;
    if (!Number.isSafeInteger(compactEvery) || compactEvery < 1) {
      throw new RangeError(`compactEvery must be a positive integer, got ${compactEvery}`);
    }
    const absDir = resolve(dir);
    const file = join(absDir, DATA_FILE);
    try {
      mkdirSync(absDir, { recursive: true });
    } catch (err) {
      throw new JournalError('io', `cannot create data directory ${absDir}: ${messageOf(err)}`, {
        path: absDir,
        cause: err,
      });
    }

    let db: Database.Database;
    try {
      // timeout 0: a locked database must fail the open at once, not after a busy wait.
      db = new Database(file, { timeout: 0 });
    } catch (err) {
      throw wrapOpenError(err, absDir, file);
    }
    try {
      initialise(db, file);
      const journal = new SqliteJournal(absDir, file, db, compactEvery);
      writePidFile(absDir);
      return journal;
    } catch (err) {
      try {
        db.close();
      } catch {
        // Reporting why the open failed matters more.
      }
      throw wrapOpenError(err, absDir, file);
    }
  }

  load(): JournalSnapshot {
    this.assertOpen();
    try {
      const rows = this.db
        .prepare<[], ObjectRow>('SELECT key, value, mod_revision, create_revision FROM objects ORDER BY key')
        .all();
      const objects = rows.map((r) => ({
        key: r.key,
        value: r.value,
        revision: r.mod_revision,
        createRevision: r.create_revision,
      }));
      return { revision: this.committed, objects, compactedRevision: this.compacted };
    } catch (err) {
      throw wrapError(err, this.file, 'read');
    }
  }

  append(entries: JournalEntry[]): Promise<void> {
    if (this.closing) return Promise.reject(closedError(this.file));
    try {
      this.accepted = checkEntries(entries, this.accepted);
    } catch (err) {
      return Promise.reject(err);
    }
    // Copied: the caller may reuse its array, and the batch is written later.
    for (const e of entries) this.queue.push({ ...e });
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      // better-sqlite3 is synchronous: waiting for the next macrotask lets every append of this
      // tick join the batch, and nothing can interleave with the commit itself.
      this.scheduled ??= setImmediate(() => {
        this.scheduled = undefined;
        this.flush();
      });
    });
  }

  getMeta(name: string): string | undefined {
    assertMetaName(name);
    this.assertOpen();
    try {
      return this.getMetaStmt.get(name)?.value;
    } catch (err) {
      throw wrapError(err, this.file, 'read');
    }
  }

  setMeta(name: string, value: string): void {
    assertMetaName(name);
    this.assertOpen();
    if (typeof value !== 'string') throw new TypeError(`meta "${name}" must be a string`);
    try {
      this.setMetaStmt.run(name, value);
    } catch (err) {
      throw wrapError(err, this.file, 'write to');
    }
  }

  readHistory(after: number, upTo: number, prefix: string): JournalHistoryEntry[] {
    this.assertOpen();
    if (after < this.compacted) {
      throw new RangeError(`history before revision ${this.compacted} is compacted (asked from ${after})`);
    }
    let rows: HistoryRow[];
    try {
      // Every key under the prefix sorts before prefix + U+FFFF (SQLite compares UTF-8 bytes).
      rows = this.historyStmt.all(after, upTo, prefix, `${prefix}\uffff`);
    } catch (err) {
      throw wrapError(err, this.file, 'read');
    }
    return rows.map((r) => {
      if (r.prev_revision !== null && r.prev_value === null) {
        throw new JournalError(
          'corrupt',
          `data file ${this.file} lost the state before revision ${r.revision}`,
          {
            path: this.file,
          },
        );
      }
      const prev = r.prev_revision === null ? undefined : { revision: r.prev_revision, value: r.prev_value! };
      let value = r.value;
      if (value === null) {
        // A delete appended without its last state: the previous state with the deletion's revision.
        if (!prev)
          throw new JournalError(
            'corrupt',
            `data file ${this.file} has no state for revision ${r.revision}`,
            { path: this.file },
          );
        value = restamp(prev.value, r.revision);
      }
      const entry: JournalHistoryEntry = {
        revision: r.revision,
        key: r.key,
        type: r.deleted ? 'delete' : 'put',
        value,
      };
      if (prev) entry.prev = prev;
      return entry;
    });
  }

  compact(revision: number): Promise<void> {
    if (this.closing) return Promise.reject(closedError(this.file));
    if (!Number.isSafeInteger(revision) || revision < 0) {
      return Promise.reject(
        new RangeError(`compaction revision must be a non-negative integer, got ${revision}`),
      );
    }
    if (revision > this.committed) {
      return Promise.reject(
        new RangeError(
          `cannot compact to revision ${revision}: the journal holds revision ${this.committed}`,
        ),
      );
    }
    if (revision <= this.compacted) return this.compacting;
    // The marker first, durably and at once: from here no reader asks for what is deleted next.
    try {
      this.setMetaStmt.run(COMPACTED_META, String(revision));
    } catch (err) {
      return Promise.reject(wrapError(err, this.file, 'write to'));
    }
    this.compacted = revision;
    this.compacting = this.compacting.catch(() => undefined).then(() => this.deleteCompacted(revision));
    return this.compacting;
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Counters since open. */
  stats(): SqliteJournalStats {
    return { ...this.counters };
  }

  /**
   * Deletes the history rows at or before `revision` except the state each key had there, in
   * chunks with a macrotask between them so that commits go on meanwhile. The rows to keep are
   * found once, before any chunk: they are the rows at or before `revision` that are either a
   * live key's current state or the previous state of a later change, and since rows at or before
   * `revision` never change again, neither does that set. A compaction that a crash interrupts
   * leaves rows the next one deletes.
   */
  private async deleteCompacted(revision: number): Promise<void> {
    const db = this.db;
    try {
      db.exec('CREATE TEMP TABLE IF NOT EXISTS compact_keep (revision INTEGER PRIMARY KEY)');
      db.transaction(() => {
        db.exec('DELETE FROM temp.compact_keep');
        db.prepare<[number, number, number]>(
          `INSERT OR IGNORE INTO temp.compact_keep (revision)
           SELECT mod_revision FROM objects WHERE mod_revision <= ?
           UNION SELECT prev_revision FROM history WHERE revision > ? AND prev_revision <= ?`,
        ).run(revision, revision, revision);
      })();
      await new Promise<void>((resolve) => setImmediate(resolve));
      const chunk = db.prepare<[number, number]>(
        `DELETE FROM history WHERE revision IN (
           SELECT revision FROM history WHERE revision <= ?
           AND revision NOT IN (SELECT revision FROM temp.compact_keep) ORDER BY revision LIMIT ?)`,
      );
      for (;;) {
        if (this.closing || !db.open) return;
        const { changes } = chunk.run(revision, COMPACT_CHUNK);
        this.counters.compactedRows += changes;
        if (changes < COMPACT_CHUNK) break;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      db.exec('DELETE FROM temp.compact_keep');
    } catch (err) {
      // Rows left behind are deleted by the next compaction; the marker already hides them.
      if (this.closing || !db.open) return;
      throw wrapError(err, this.file, 'compact');
    }
  }

  private async shutdown(): Promise<void> {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    this.flush();
    // A compaction in progress stops at its next chunk; what it left is deleted next time.
    await this.compacting.catch(() => undefined);
    try {
      if (this.db.open) {
        try {
          this.checkpoint();
        } catch {
          // The next open replays the log; a failed truncation loses nothing.
        }
        this.db.close();
      }
    } finally {
      removePidFile(this.dir);
    }
  }

  private flush(): void {
    if (this.waiters.length === 0) return;
    const entries = this.queue;
    const waiters = this.waiters;
    this.queue = [];
    this.waiters = [];
    try {
      this.commitBatch(entries);
    } catch (err) {
      // The transaction rolled back: nothing queued is on disk, so the next revision continues
      // from what is.
      this.accepted = this.committed;
      const error = wrapError(err, this.file, 'write to');
      for (const w of waiters) w.reject(error);
      return;
    }
    const last = entries[entries.length - 1];
    if (last) this.committed = last.revision;
    this.counters.commits++;
    this.counters.entries += entries.length;
    for (const w of waiters) w.resolve();

    if (++this.sinceCheckpoint >= this.compactEvery) {
      try {
        this.checkpoint();
      } catch {
        // Already committed; SQLite's own checkpoints still bound the log, retry next time.
      }
    }
  }

  private checkpoint(): void {
    this.sinceCheckpoint = 0;
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.counters.checkpoints++;
  }

  private readRevision(): number {
    const stored = this.getMetaStmt.get(REVISION_META)?.value;
    const fromMeta = stored === undefined ? 0 : Number(stored);
    if (!Number.isSafeInteger(fromMeta) || fromMeta < 0) {
      throw new JournalError('corrupt', `data file ${this.file} holds an invalid revision "${stored}"`, {
        path: this.file,
      });
    }
    const row = this.db.prepare<[], { m: number | null }>('SELECT max(mod_revision) AS m FROM objects').get();
    return Math.max(fromMeta, row?.m ?? 0);
  }

  private readCompacted(): number {
    const stored = this.getMetaStmt.get(COMPACTED_META)?.value;
    const compacted = stored === undefined ? 0 : Number(stored);
    if (!Number.isSafeInteger(compacted) || compacted < 0 || compacted > this.committed) {
      throw new JournalError(
        'corrupt',
        `data file ${this.file} holds an invalid compacted revision "${stored}"`,
        {
          path: this.file,
        },
      );
    }
    return compacted;
  }

  private assertOpen(): void {
    if (this.closing || !this.db.open) throw closedError(this.file);
  }
}
export { DATA_FILE, PID_FILE } from './sqlite-files.js';
