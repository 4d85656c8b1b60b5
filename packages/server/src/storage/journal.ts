/**
 * The durability contract of the store: the store keeps the whole state in memory and writes
 * every committed change through a {@link Journal}. A journal never answers reads after
 * {@link Journal.load}; it only has to remember.
 */

/**
 * One committed change. `value` is the object's JSON text (already encoded by the store); for
 * deletes, the last state stamped with the deletion's revision (what a watch's DELETED carries),
 * optional. `prevRevision` is the revision of the key's state before this change (absent when the
 * change creates the key): journals that keep history link each change to the state it replaced.
 */
export interface JournalEntry {
  revision: number;
  key: string;
  type: 'put' | 'delete';
  value?: string;
  prevRevision?: number;
}

/** One change read back from a journal's history, with the state it replaced. */
export interface JournalHistoryEntry {
  revision: number;
  key: string;
  type: 'put' | 'delete';
  /** The new state; for a delete, the last state stamped with the deletion's revision. */
  value: string;
  /** The state before the change (absent when the change created the key). */
  prev?: { revision: number; value: string };
}

/** The state a journal holds when it is opened. */
export interface JournalSnapshot {
  /** Highest revision ever committed (deletes included), 0 for a new journal. Revisions keep increasing after restart. */
  revision: number;
  /**
   * Every live key with its latest value and the revision that wrote it (mod revision), in key
   * order (byte order of the UTF-8 key, which is JavaScript's order for ASCII keys).
   * `createRevision` is the revision at which the key was last created (etcd's create revision);
   * journals that do not track it leave it out.
   */
  objects: Array<{ key: string; value: string; revision: number; createRevision?: number }>;
  /**
   * Set by journals that keep history ({@link Journal.readHistory}): every change after this
   * revision can be read back (etcd's compacted revision). Absent: no history across restarts.
   */
  compactedRevision?: number;
}

/**
 * Where the store makes its writes durable.
 *
 * @example
 * ```ts
 * const journal = dataDir ? openSqliteJournal(dataDir) : new MemoryJournal();
 * const { revision, objects } = journal.load();
 * await journal.append([{ revision: revision + 1, key: '/registry/configmaps/default/a', type: 'put', value: '{}' }]);
 * await journal.close();
 * ```
 */
export interface Journal {
  /** Reads the state at open. Called once. */
  load(): JournalSnapshot;
  /**
   * Durably records entries (strictly increasing revisions). Resolves only after the transaction
   * holding them has COMMITTED; entries appended in the same macrotask/tick (or while a commit is
   * in flight) are group-committed in ONE transaction, so 16 concurrent writers cost about one
   * commit. Rejects (every waiter) if the commit fails — the caller then fails the writes.
   */
  append(entries: JournalEntry[]): Promise<void>;
  /**
   * Reads a small opaque value (e.g. the CA key pair, the admin token) from the key/value meta
   * table. Names starting with `journal.` are reserved for the journal itself.
   */
  getMeta(name: string): string | undefined;
  /** Persists a small opaque value, durably, before returning. */
  setMeta(name: string, value: string): void;
  /**
   * The committed changes with `after < revision <= upTo` whose key starts with `prefix`, in
   * revision order. Only journals that keep history have it; `after` must not be older than the
   * compacted revision.
   */
  readHistory?(after: number, upTo: number, prefix: string): JournalHistoryEntry[];
  /**
   * Forgets the history up to `revision` (etcd's compaction), durably: once it resolves — and
   * already once it is called, for readers — changes at or before `revision` can no longer be
   * read back, and the space they took is reused. The state each key had at `revision` is kept,
   * since the next change of that key replaces it.
   */
  compact?(revision: number): Promise<void>;
  /** Flushes pending appends, then closes. Idempotent. */
  close(): Promise<void>;
}

/** Why a journal refused to open or to write. */
export type JournalErrorCode =
  /** Another process (or another journal in this process) holds the data directory. */
  | 'in-use'
  /** The data file exists but is damaged or is not an SQLite database. */
  | 'corrupt'
  /** The data file is an SQLite database of another program, or of a newer kubeloop. */
  | 'incompatible'
  /** The file system refused: permissions, disk full, I/O error, a closed handle. */
  | 'io'
  /** The journal was closed. */
  | 'closed';

/**
 * A typed journal failure; `path` names the data file or directory concerned.
 *
 * @example
 * ```ts
 * try { openSqliteJournal(dir) } catch (err) {
 *   if (err instanceof JournalError && err.code === 'in-use') console.error(err.message);
 * }
 * ```
 */
export class JournalError extends Error {
  override readonly name = 'JournalError';
  readonly code: JournalErrorCode;
  readonly path: string;
  /** For `in-use`: the process that holds the data directory, when it could be told. */
  readonly pid: number | undefined;

  constructor(
    code: JournalErrorCode,
    message: string,
    opts: { path: string; pid?: number; cause?: unknown },
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.path = opts.path;
    this.pid = opts.pid;
  }
}

/** The prefix of meta names the journals keep for themselves. */
export const RESERVED_META_PREFIX = 'journal.';

/** Throws when a caller tries to use a reserved meta name; shared by every journal so they agree. */
export function assertMetaName(name: string): void {
  if (name.length === 0) throw new TypeError('meta name must not be empty');
  if (name.startsWith(RESERVED_META_PREFIX)) {
    throw new RangeError(`meta name "${name}" is reserved (prefix "${RESERVED_META_PREFIX}")`);
  }
}

/**
 * Checks that `entries` are well formed and continue after `after`; returns the last revision.
 * Shared by every journal so that a wrong caller fails the same way with or without a data dir.
 */
export function checkEntries(entries: readonly JournalEntry[], after: number): number {
  let last = after;
  for (const e of entries) {
    if (!Number.isSafeInteger(e.revision) || e.revision <= last) {
      throw new RangeError(`journal entry revision ${e.revision} must be an integer greater than ${last}`);
    }
    if (typeof e.key !== 'string' || e.key.length === 0) {
      throw new TypeError(`journal entry at revision ${e.revision} has no key`);
    }
    if (e.type === 'put') {
      if (typeof e.value !== 'string') {
        throw new TypeError(`journal put of "${e.key}" at revision ${e.revision} has no value`);
      }
    } else if (e.type !== 'delete') {
      throw new TypeError(`journal entry at revision ${e.revision} has unknown type "${String(e.type)}"`);
    }
    last = e.revision;
  }
  return last;
}

/**
 * The journal of the default in-memory mode: remembers nothing across restarts.
 *
 * @example
 * ```ts
 * const store = Store.open({ journal: new MemoryJournal() });
 * ```
 */
export class MemoryJournal implements Journal {
  private readonly meta = new Map<string, string>();
  private closed = false;

  load(): JournalSnapshot {
    return { revision: 0, objects: [] };
  }

  append(_entries: JournalEntry[]): Promise<void> {
    if (this.closed) return Promise.reject(closedError('memory'));
    return Promise.resolve();
  }

  getMeta(name: string): string | undefined {
    assertMetaName(name);
    return this.meta.get(name);
  }

  setMeta(name: string, value: string): void {
    assertMetaName(name);
    if (this.closed) throw closedError('memory');
    this.meta.set(name, value);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** The error every journal gives for use after close. */
export function closedError(path: string): JournalError {
  return new JournalError('closed', `the journal ${path} is closed`, { path });
}
