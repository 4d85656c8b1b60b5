import type { Journal, JournalEntry, JournalHistoryEntry } from './journal.js';
import type {
  KubeObject,
  ListOptions,
  ListResult,
  StoredObject,
  StoreEvent,
  StoreEventType,
  Unsubscribe,
} from './types.js';

/** Why a storage operation failed; the registry turns these into Kubernetes `Status` errors. */
export class StorageError extends Error {
  constructor(
    readonly code: 'NotFound' | 'AlreadyExists' | 'Conflict' | 'TooOld' | 'TooLarge' | 'Unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

/** The storage key of an object: `/<group or core>/<resource>/[<namespace>/]<name>`. */
export function objectKey(
  group: string,
  resource: string,
  namespace: string | undefined,
  name: string,
): string {
  return namespace
    ? `/${group || 'core'}/${resource}/${namespace}/${name}`
    : `/${group || 'core'}/${resource}/${name}`;
}

/** The key prefix of a collection: every object of a resource, or of a resource in one namespace. */
export function collectionPrefix(group: string, resource: string, namespace?: string): string {
  return namespace ? `/${group || 'core'}/${resource}/${namespace}/` : `/${group || 'core'}/${resource}/`;
}

/** Index bucket of a key: its `/<group>/<resource>/` part. */
function bucketOf(key: string): string {
  const second = key.indexOf('/', 1);
  const third = key.indexOf('/', second + 1);
  return key.slice(0, third + 1);
}

/**
 * Freezes a value and everything it holds. Shared subtrees that are frozen already (the empty
 * objects of managedFields) are not entered again; `for…in` and index loops keep the walk free
 * of per-object arrays (stored objects are plain JSON data, without enumerable inherited keys).
 */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) freezeTree(value);
  return value;
}

function freezeTree(o: object): void {
  Object.freeze(o);
  if (Array.isArray(o)) {
    for (let i = 0; i < o.length; i++) {
      const v: unknown = o[i];
      if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) freezeTree(v);
    }
    return;
  }
  const r = o as Record<string, unknown>;
  for (const k in r) {
    const v = r[k];
    if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) freezeTree(v);
  }
}

interface Watcher {
  readonly prefix: string;
  readonly from: number;
  readonly listener: (event: StoreEvent) => void;
}

class Bucket {
  readonly objects = new Map<string, StoredObject>();
  /** Writes to the bucket so far (buckets are never dropped, so it only grows). */
  changes = 0;
  private sorted: string[] | undefined;
  /** The objects in the order of `sorted`: a large list reads them without a lookup per key. */
  private sortedValues: StoredObject[] | undefined;

  sortedKeys(): string[] {
    if (!this.sorted) this.sorted = [...this.objects.keys()].sort();
    return this.sorted;
  }
  /** The objects, parallel to {@link sortedKeys}. Callers copy what they keep. */
  sortedObjects(): StoredObject[] {
    if (!this.sortedValues) {
      const objects = this.objects;
      this.sortedValues = this.sortedKeys().map((k) => objects.get(k)!);
    }
    return this.sortedValues;
  }
  set(key: string, obj: StoredObject): void {
    this.changes++;
    if (!this.objects.has(key)) {
      this.sorted = undefined;
      this.sortedValues = undefined;
    } else if (this.sortedValues) {
      // An update keeps the order: the new state takes the old one's place.
      this.sortedValues[lowerBound(this.sorted!, key, false)] = obj;
    }
    this.objects.set(key, obj);
  }
  delete(key: string): void {
    if (this.objects.delete(key)) {
      this.changes++;
      this.sorted = undefined;
      this.sortedValues = undefined;
    }
  }
}

/** First index in sorted `keys` whose key is > `after` (or ≥ `prefix` when `after` is unset). */
function lowerBound(keys: readonly string[], bound: string, strict: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid]!;
    if (k < bound || (strict && k === bound)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * etcd's default `--max-request-bytes` (1.5 MiB): the largest write request it takes. A put
 * carries the key twice (the transaction's compare and its put) besides the value.
 */
export const MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;

/** The size of the etcd request that would store `json` under `key`. */
function requestBytes(key: string, json: string): number {
  return Buffer.byteLength(json) + 2 * Buffer.byteLength(key);
}

/** Options of {@link Store.open}. */
export interface StoreOptions {
  /** Where committed changes are made durable; omitted: memory only. */
  journal?: Journal;
  /**
   * How many recent events are kept in memory for watch resume and consistent pagination (default
   * 10,000). With a journal that keeps history, older events are read back from it, down to its
   * compacted revision ({@link Store.compact}).
   */
  historySize?: number;
}

/**
 * The whole state of the control plane, in memory, with one ordered revision log.
 *
 * Reads are synchronous and never copy: objects are frozen and carry their encoded JSON, so a
 * list or a watch fan-out writes the same bytes to every client. Writes are applied in memory
 * at once (so a read-modify-write without `await` in between is atomic), then made durable by the
 * journal; the write's promise — and the watch event — only come after the commit.
 *
 * History has two tiers, like kube-apiserver's watch cache in front of etcd: the last
 * `historySize` events in memory, and — when the journal keeps history (the SQLite journal) —
 * every committed event since the journal's compacted revision, read back on demand. A watch or a
 * list at a revision is served from both, so that after a restart it resumes from any revision
 * after the compaction, not only from the newest.
 */
export class Store {
  private rev = 0;
  private readonly buckets = new Map<string, Bucket>();
  private history: StoreEvent[] = [];
  private readonly historySize: number;
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly journal: Journal | undefined;
  /** Events applied in memory but not yet committed by the journal, in revision order. */
  private unpublished: StoreEvent[] = [];
  private failure: Error | undefined;
  private closed = false;
  /** Set when the journal keeps history: everything after this revision can be read back. */
  private compacted: number | undefined;

  private constructor(opts: StoreOptions) {
    this.journal = opts.journal;
    this.historySize = Math.max(1, opts.historySize ?? 10_000);
  }

  /** Opens a store, loading whatever the journal holds. */
  static open(opts: StoreOptions = {}): Store {
    const store = new Store(opts);
    if (opts.journal) {
      const snapshot = opts.journal.load();
      for (const { key, value, revision } of snapshot.objects) {
        const object = deepFreeze(JSON.parse(value) as KubeObject);
        store.bucket(key).set(key, { key, object, revision, json: value });
      }
      store.rev = snapshot.revision;
      if (opts.journal.readHistory && snapshot.compactedRevision !== undefined) {
        store.compacted = snapshot.compactedRevision;
      }
    }
    return store;
  }

  /** The revision of the latest write. */
  get revision(): number {
    return this.rev;
  }

  /** The revision up to which every change has been committed and delivered to watchers. */
  get committedRevision(): number {
    return this.unpublished.length > 0 ? this.unpublished[0]!.revision - 1 : this.rev;
  }

  /** The oldest revision a watch can start from or a list can be read at. */
  get oldestRevision(): number {
    if (this.compacted !== undefined) return this.compacted;
    return this.history.length > 0 ? this.history[0]!.revision - 1 : this.rev;
  }

  /**
   * Forgets the history up to `revision` (etcd's compaction): a watch or a list at an older
   * revision gets TooOld from now on. With a journal that keeps history, durably, and the disk
   * space is reused; in memory, the events are dropped.
   */
  async compact(revision: number): Promise<void> {
    if (!Number.isSafeInteger(revision) || revision > this.committedRevision) {
      throw new RangeError(
        `cannot compact to revision ${revision}: committed up to ${this.committedRevision}`,
      );
    }
    if (revision <= this.oldestRevision) return;
    this.history = this.history.slice(this.historyIndexAfter(revision));
    if (this.compacted === undefined || !this.journal?.compact) return;
    this.compacted = revision;
    await this.journal.compact(revision);
  }

  /**
   * The committed events after `after` under `prefix` that only the journal still holds (older
   * than the memory history), in revision order.
   */
  private journalEvents(after: number, prefix: string): StoreEvent[] {
    const upTo = this.history.length > 0 ? this.history[0]!.revision - 1 : this.committedRevision;
    if (this.compacted === undefined || after >= upTo || !this.journal?.readHistory) return [];
    return this.journal.readHistory(after, upTo, prefix).map(eventOf);
  }

  get(key: string): StoredObject | undefined {
    return this.buckets.get(bucketOf(key))?.objects.get(key);
  }

  /**
   * A counter of `prefix`'s collection (the resource, in every namespace): it tells a number that
   * changes whenever an object of the collection is written or deleted, so that what a reader
   * derived from the collection holds while it stays the same — learnt without listing, by the
   * admission plugins on every request. The counter keeps the collection's bucket once there is
   * one (buckets are never dropped): a read is then one property read, without a look-up.
   */
  changeCounter(prefix: string): () => number {
    const name = bucketOf(prefix);
    let bucket: Bucket | undefined;
    return () => {
      bucket ??= this.buckets.get(name);
      return bucket ? bucket.changes : 0;
    };
  }

  /** Whether any object lies under `prefix` now: a list's emptiness, without the list. */
  has(prefix: string): boolean {
    const keys = this.buckets.get(bucketOf(prefix))?.sortedKeys();
    if (!keys) return false;
    const i = lowerBound(keys, prefix, false);
    return i < keys.length && keys[i]!.startsWith(prefix);
  }

  /** Lists the objects under `prefix` in key order. */
  list(prefix: string, opts: ListOptions = {}): ListResult {
    const at = opts.atRevision ?? this.rev;
    if (at > this.rev)
      throw new StorageError('TooOld', `Too large resource version: ${at}, current: ${this.rev}`);
    if (at < this.oldestRevision) {
      throw new StorageError('TooOld', `The resourceVersion for the provided list is too old.`);
    }
    const bucket = this.buckets.get(bucketOf(prefix));
    let keys: readonly string[] = bucket ? bucket.sortedKeys() : [];
    let lookup = (key: string): StoredObject | undefined => bucket?.objects.get(key);
    /** The objects parallel to `keys`, when they are the current state. */
    let values: readonly StoredObject[] | undefined = bucket?.sortedObjects();

    if (at < this.rev) {
      // Rewind the changes made after `at`: the state of a key at `at` is the `prev` of the
      // first event that touched it later (absent when that event created it).
      const overlay = new Map<string, StoredObject | undefined>();
      const later = [
        ...this.journalEvents(at, prefix),
        ...this.history.slice(this.historyIndexAfter(at)),
        ...this.unpublished,
      ];
      for (const ev of later) {
        if (ev.key.startsWith(prefix) && !overlay.has(ev.key)) overlay.set(ev.key, ev.prev);
      }
      if (overlay.size > 0) {
        const current = lookup;
        keys = [...new Set([...keys, ...overlay.keys()])].sort();
        lookup = (key) => (overlay.has(key) ? overlay.get(key) : current(key));
        values = undefined;
      }
    }

    const items: StoredObject[] = [];
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Number.POSITIVE_INFINITY;
    const start = opts.after !== undefined && opts.after >= prefix ? opts.after : prefix;
    let i = lowerBound(keys, start, opts.after !== undefined && opts.after >= prefix);
    let lastKey: string | undefined;
    for (; i < keys.length; i++) {
      const key = keys[i]!;
      if (!key.startsWith(prefix)) break;
      const obj = values ? values[i] : lookup(key);
      if (!obj) continue;
      if (opts.filter && !opts.filter(obj)) continue;
      if (items.length >= limit) {
        return { items, revision: at, continueAfter: lastKey! };
      }
      items.push(obj);
      lastKey = key;
    }
    return { items, revision: at };
  }

  /** Index of the first history event with a revision greater than `revision`. */
  private historyIndexAfter(revision: number): number {
    let lo = 0;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.history[mid]!.revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * How many objects lie under `prefix` after key `after`, as of `atRevision`. At the current
   * revision this is two binary searches in the sorted keys (paginated lists report it on every page).
   */
  count(prefix: string, after: string, atRevision = this.rev): number {
    if (atRevision !== this.rev) return this.list(prefix, { after, atRevision }).items.length;
    const keys = this.buckets.get(bucketOf(prefix))?.sortedKeys() ?? [];
    const from = lowerBound(keys, after >= prefix ? after : prefix, after >= prefix);
    // Every key under the prefix sorts before prefix + U+FFFF.
    const to = lowerBound(keys, `${prefix}\uffff`, false);
    return Math.max(0, to - from);
  }

  /** Creates `key`; fails with AlreadyExists when it is present. */
  create(key: string, object: KubeObject): Promise<StoredObject> {
    this.assertWritable();
    if (this.get(key)) return Promise.reject(new StorageError('AlreadyExists', `${key} already exists`));
    return this.write('ADDED', key, object, undefined);
  }

  /**
   * Replaces `key`. With `expectedRevision`, fails with Conflict unless the stored object is at
   * that revision. An object identical to the stored one is not written again (no new revision,
   * no event), as etcd3's GuaranteedUpdate does.
   */
  update(key: string, object: KubeObject, expectedRevision?: number): Promise<StoredObject> {
    this.assertWritable();
    const prev = this.get(key);
    if (!prev) return Promise.reject(new StorageError('NotFound', `${key} not found`));
    if (expectedRevision !== undefined && prev.revision !== expectedRevision) {
      return Promise.reject(new StorageError('Conflict', `${key} is at revision ${prev.revision}`));
    }
    return this.write('MODIFIED', key, object, prev);
  }

  /** Deletes `key`, returning its last state (stamped with the deletion's revision). */
  delete(key: string, expectedRevision?: number): Promise<StoredObject> {
    this.assertWritable();
    const prev = this.get(key);
    if (!prev) return Promise.reject(new StorageError('NotFound', `${key} not found`));
    if (expectedRevision !== undefined && prev.revision !== expectedRevision) {
      return Promise.reject(new StorageError('Conflict', `${key} is at revision ${prev.revision}`));
    }
    return this.write('DELETED', key, prev.object as KubeObject, prev);
  }

  /**
   * Calls `listener` for every change under `prefix` after revision `fromRevision`, first the
   * retained history, then live changes, in revision order, exactly once each.
   * Throws TooOld when `fromRevision` is older than the retained history.
   */
  watch(prefix: string, fromRevision: number, listener: (event: StoreEvent) => void): Unsubscribe {
    if (fromRevision < this.oldestRevision) {
      throw new StorageError(
        'TooOld',
        `too old resource version: ${fromRevision} (${this.oldestRevision + 1})`,
      );
    }
    for (const ev of this.journalEvents(fromRevision, prefix)) listener(ev);
    for (let i = this.historyIndexAfter(fromRevision); i < this.history.length; i++) {
      const ev = this.history[i]!;
      if (ev.key.startsWith(prefix)) listener(ev);
    }
    const watcher: Watcher = { prefix, from: fromRevision, listener };
    const bucket = bucketOf(prefix);
    let set = this.watchers.get(bucket);
    if (!set) {
      set = new Set();
      this.watchers.set(bucket, set);
    }
    set.add(watcher);
    return () => {
      set.delete(watcher);
    };
  }

  /** Number of active watchers (for metrics and tests). */
  get watcherCount(): number {
    let n = 0;
    for (const set of this.watchers.values()) n += set.size;
    return n;
  }

  /** Stops accepting writes and closes the journal after it flushed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.journal?.close();
  }

  private assertWritable(): void {
    if (this.closed) throw new StorageError('Unavailable', 'storage is closed');
    if (this.failure) throw new StorageError('Unavailable', `storage failed: ${this.failure.message}`);
  }

  private bucket(key: string): Bucket {
    const name = bucketOf(key);
    let b = this.buckets.get(name);
    if (!b) {
      b = new Bucket();
      this.buckets.set(name, b);
    }
    return b;
  }

  private write(
    type: StoreEventType,
    key: string,
    input: KubeObject,
    prev: StoredObject | undefined,
  ): Promise<StoredObject> {
    const revision = this.rev + 1;
    const object = withResourceVersion(input, String(revision));
    const json = JSON.stringify(object);
    // A UTF-16 unit is at most 3 UTF-8 bytes: most objects are far below the limit by their length alone.
    if (
      type !== 'DELETED' &&
      (json.length + 2 * key.length) * 3 > MAX_REQUEST_BYTES &&
      requestBytes(key, json) > MAX_REQUEST_BYTES
    ) {
      // etcd refuses the request before anything changes (`ErrRequestTooLarge`).
      return Promise.reject(new StorageError('TooLarge', 'etcdserver: request is too large'));
    }
    this.rev = revision;
    const stored: StoredObject = { key, object: deepFreeze(object), revision, json };
    if (type === 'DELETED') this.bucket(key).delete(key);
    else this.bucket(key).set(key, stored);
    const event: StoreEvent = prev
      ? { type, revision, key, object: stored, prev }
      : { type, revision, key, object: stored };

    if (!this.journal) {
      this.publish(event);
      return Promise.resolve(stored);
    }
    this.unpublished.push(event);
    const entry: JournalEntry = {
      revision,
      key,
      type: type === 'DELETED' ? 'delete' : 'put',
      value: stored.json,
    };
    if (prev) entry.prevRevision = prev.revision;
    return this.journal.append([entry]).then(
      () => {
        this.publishUpTo(revision);
        return stored;
      },
      (err: unknown) => {
        // The in-memory state is now ahead of the durable state; refuse every further write
        // rather than acknowledge anything that might not survive a restart.
        this.failure = err instanceof Error ? err : new Error(String(err));
        throw new StorageError('Unavailable', `storage failed: ${this.failure.message}`);
      },
    );
  }

  private publishUpTo(revision: number): void {
    let n = 0;
    while (n < this.unpublished.length && this.unpublished[n]!.revision <= revision) n++;
    const ready = this.unpublished.slice(0, n);
    this.unpublished = this.unpublished.slice(n);
    for (const ev of ready) this.publish(ev);
  }

  private publish(event: StoreEvent): void {
    this.history.push(event);
    if (this.history.length > this.historySize * 1.25) {
      this.history = this.history.slice(this.history.length - this.historySize);
    }
    const set = this.watchers.get(bucketOf(event.key));
    if (!set) return;
    for (const w of set) {
      if (event.revision <= w.from || !event.key.startsWith(w.prefix)) continue;
      try {
        w.listener(event);
      } catch {
        // A broken watcher must never stop the others; it is the watcher's job to close itself.
      }
    }
  }
}

function storedOf(key: string, json: string, revision: number): StoredObject {
  return { key, object: deepFreeze(JSON.parse(json) as KubeObject), revision, json };
}

/** A change read back from the journal, as the store published it then. */
function eventOf(e: JournalHistoryEntry): StoreEvent {
  const object = storedOf(e.key, e.value, e.revision);
  if (!e.prev) return { type: 'ADDED', revision: e.revision, key: e.key, object };
  const prev = storedOf(e.key, e.prev.value, e.prev.revision);
  return {
    type: e.type === 'delete' ? 'DELETED' : 'MODIFIED',
    revision: e.revision,
    key: e.key,
    object,
    prev,
  };
}

function withResourceVersion(obj: KubeObject, resourceVersion: string): KubeObject {
  const m = obj.metadata ?? {};
  // `{ ...m, resourceVersion }` adds a property after a spread when `m` has none (every create),
  // which costs V8 (Node 20) about a microsecond; Object.assign copies the same own keys in the
  // same order, except an own `__proto__` key (JSON.parse makes one), which it would not copy.
  let metadata: Record<string, unknown>;
  if (Object.hasOwn(m, '__proto__')) metadata = { ...m, resourceVersion };
  else {
    metadata = Object.assign({}, m);
    metadata.resourceVersion = resourceVersion;
  }
  return { ...obj, metadata };
}
