/**
 * The files of the durable store's data directory: the SQLite file's identity and schema, the
 * lock and pid file that keep a second server out, fsync of the directory, and the errors a
 * user sees when the directory cannot be used.
 */
import { closeSync, fsyncSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { JournalError, type JournalErrorCode } from './journal.js';

/** The data file inside the data directory. */
export const DATA_FILE = 'kubeloop.db';
/** Holds the pid of the server that has the data directory open; informative only (the lock is SQLite's). */
export const PID_FILE = 'kubeloop.pid';

/** `PRAGMA application_id` of a kubeloop data file: "klop". */
const APPLICATION_ID = 0x6b6c6f70;
/**
 * `PRAGMA user_version`: the schema this code writes; a newer file is refused rather than misread.
 * 1: objects and meta; 2: also the history of changes since the compacted revision.
 */
const SCHEMA_VERSION = 2;
export const REVISION_META = 'journal.revision';
export const COMPACTED_META = 'journal.compacted';
/** Rows a compaction deletes per transaction: writes are not held up for long between them. */
export const COMPACT_CHUNK = 1000;
/** Takes the lock, checks the file is ours (or empty), and creates the schema. */
export function initialise(db: Database.Database, file: string): void {
  // Before anything reads the file: the first read then takes the lock and keeps it until close.
  db.pragma('locking_mode = EXCLUSIVE');
  const appId = db.pragma('application_id', { simple: true });
  const version = db.pragma('user_version', { simple: true });
  if (appId !== APPLICATION_ID) {
    const tables = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM sqlite_schema').get();
    if ((tables?.n ?? 0) > 0) {
      throw new JournalError('incompatible', `data file ${file} is an SQLite database of another program`, {
        path: file,
      });
    }
  } else if (typeof version !== 'number' || version > SCHEMA_VERSION) {
    throw new JournalError(
      'incompatible',
      `data file ${file} was written by a newer kubeloop (schema ${String(version)}, this one reads ${SCHEMA_VERSION})`,
      { path: file },
    );
  }
  const mode = db.pragma('journal_mode = WAL', { simple: true });
  if (mode !== 'wal') {
    throw new JournalError(
      'io',
      `data file ${file} cannot use write-ahead logging (journal mode ${String(mode)})`,
      {
        path: file,
      },
    );
  }
  db.pragma('synchronous = FULL');
  // macOS only: a plain fsync there does not reach the platter; elsewhere these are no-ops.
  db.pragma('fullfsync = ON');
  db.pragma('checkpoint_fullfsync = ON');
  const before = appId === APPLICATION_ID && typeof version === 'number' ? version : 0;
  db.exec(`BEGIN EXCLUSIVE;
    CREATE TABLE IF NOT EXISTS objects (
      key TEXT PRIMARY KEY NOT NULL,
      value TEXT NOT NULL,
      mod_revision INTEGER NOT NULL,
      create_revision INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
    -- value: NULL for a delete appended without its last state; prev_revision: NULL for a create.
    CREATE TABLE IF NOT EXISTS history (
      revision INTEGER PRIMARY KEY NOT NULL,
      key TEXT NOT NULL,
      value TEXT,
      deleted INTEGER NOT NULL,
      prev_revision INTEGER
    );
    ${
      before === 1
        ? // A schema-1 file has no history: its current states become the first rows (each key's
          // next change links to them), and nothing before now can be read back.
          `INSERT INTO history (revision, key, value, deleted, prev_revision)
             SELECT mod_revision, key, value, 0, NULL FROM objects;
           INSERT OR REPLACE INTO meta (name, value)
             SELECT '${COMPACTED_META}', value FROM meta WHERE name = '${REVISION_META}';`
        : ''
    }
    PRAGMA application_id = ${APPLICATION_ID};
    PRAGMA user_version = ${SCHEMA_VERSION};
    COMMIT;`);
  syncDirectory(file);
}

/** A new data file is only durable once its directory entry is: sync the directory (not possible on Windows). */
function syncDirectory(file: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(join(file, '..'), 'r');
    fsyncSync(fd);
  } catch {
    // Best effort.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** `json` (an object) with `metadata.resourceVersion` set to `revision`, as the store stamps a deletion. */
export function restamp(json: string, revision: number): string {
  const obj = JSON.parse(json) as { metadata?: Record<string, unknown> };
  return JSON.stringify({ ...obj, metadata: { ...(obj.metadata ?? {}), resourceVersion: String(revision) } });
}

export function writePidFile(dir: string): void {
  try {
    writeFileSync(join(dir, PID_FILE), `${process.pid}\n`);
  } catch {
    // Only used to name the holder in an error message.
  }
}

export function removePidFile(dir: string): void {
  try {
    unlinkSync(join(dir, PID_FILE));
  } catch {
    // Already gone, or never written.
  }
}

function readPidFile(dir: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(join(dir, PID_FILE), 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function sqliteCode(err: unknown): string | undefined {
  if (err instanceof Database.SqliteError) return err.code;
  const code: unknown = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function wrapOpenError(err: unknown, dir: string, file: string): JournalError {
  if (err instanceof JournalError) return err;
  const code = sqliteCode(err);
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    const pid = readPidFile(dir);
    return new JournalError(
      'in-use',
      `data directory ${dir} is in use by another kubeloop server (pid ${pid ?? 'unknown'})`,
      pid === undefined ? { path: dir, cause: err } : { path: dir, pid, cause: err },
    );
  }
  return wrapError(err, file, 'open');
}

export function wrapError(err: unknown, file: string, doing: string): JournalError {
  if (err instanceof JournalError) return err;
  const code = sqliteCode(err);
  const kind: JournalErrorCode =
    code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT') ? 'corrupt' : 'io';
  const message =
    kind === 'corrupt'
      ? `data file ${file} is corrupt or not a kubeloop database: ${messageOf(err)}`
      : `cannot ${doing} data file ${file}: ${messageOf(err)}`;
  return new JournalError(kind, message, { path: file, cause: err });
}
