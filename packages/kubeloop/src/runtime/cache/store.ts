/**
 * The cache of an informer (client-go's `Indexer`, kube-rs's `Store`): objects keyed by
 * `namespace/name`, secondary indexes, and listers that read them.
 *
 * Cached objects are shared by every reader, so they are **frozen** (deeply, once, when they
 * enter the store) rather than copied on every read: a change attempt throws a `TypeError`
 * at the faulty line instead of silently corrupting what other controllers see, and reads
 * cost nothing. Freezing costs one walk of each object when it arrives and no memory (frozen
 * objects share their hidden classes): 0.3–0.7 µs per small custom object once managedFields
 * are gone (3–7 ms for 10,000, against 30–40 ms to decode them; measured on a loaded 2-core
 * machine; `bench/informer`'s `kubeloop (no freeze)` variant shows the whole-sync difference,
 * within its noise). Cheaper options were weighed and rejected: freezing only the top level
 * and `metadata` (1–1.5 ms for 10,000) leaves `spec` and `status` — what controllers read and
 * are tempted to change — open to silent corruption; freezing lazily, on the first read,
 * would hand handlers unfrozen objects; copies on every read would cost a deep walk per read
 * instead of one per change. To change a cached object, copy it first
 * (`structuredClone(obj)`).
 *
 * **Deferred decoding.** An informer with no handler and no index keeps each object it
 * receives as the bytes of its JSON (without managedFields, by default) and decodes it — then
 * freezes and keeps it — the first time anything reads it (`get`, `list`, `byIndex`, a handler
 * added later, an index added later). A controller-runtime-style cache holds far more objects
 * than anyone reads; reading a received object costs about what decoding it on arrival would
 * have (one `JSON.parse`), and the kept text takes about the memory the object would. The
 * objects received together (up to 64 KiB of text) share one buffer, freed when all of them
 * are read, replaced or deleted.
 * Handlers and indexes need every object at once, so informers that have them decode eagerly.
 */
import { type FieldSelector, parseFieldSelector } from '../../api/fields.js';
import { matchesLabels, parseLabelSelector } from '../../api/labels.js';
import { type DeferredObject, isDeferred } from '../../client/deferred.js';
import {
  type FieldSelectorInput,
  fieldSelectorString,
  type LabelSelectorInput,
  labelSelectorString,
} from '../../client/options.js';
import type { KubeObject } from '../../client/types.js';
import type { WatcherMemory } from '../watcher/watcher.js';
import { deepFreeze } from './transform.js';

/**
 * An index function: the values under which an object is found in an index (none: not in it).
 *
 * @example
 * ```ts
 * const byOwner: IndexFunc<Pod> = (pod) => pod.metadata?.ownerReferences?.map((o) => o.uid) ?? [];
 * ```
 */
export type IndexFunc<T> = (obj: T) => string | readonly string[] | undefined;

/**
 * The built-in index of every store: objects by namespace (`''` for cluster-scoped ones).
 *
 * @example
 * ```ts
 * store.byIndex(NAMESPACE_INDEX, 'default');
 * ```
 */
export const NAMESPACE_INDEX = 'namespace';

/**
 * Filters of {@link Lister.list}.
 *
 * @example
 * ```ts
 * lister.list({ namespace: 'default', labelSelector: 'app=web', fieldSelector: { 'spec.nodeName': 'n1' } });
 * ```
 */
export interface ListFilter {
  /** Only this namespace (default: all). */
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  /**
   * `metadata.name`, `metadata.namespace`, and fields given an index with
   * {@link Store.addFieldIndex} (controller-runtime's `IndexField`); `=`, `==` and `!=`.
   */
  fieldSelector?: FieldSelectorInput;
}

/**
 * Read access to a cache of one kind (client-go's lister).
 *
 * @example
 * ```ts
 * const lister: Lister<Pod> = informer.store;
 * const web = lister.get('web', 'default');
 * const mine = lister.namespace('default').list({ labelSelector: { app: 'web' } });
 * ```
 */
export interface Lister<T> {
  /** One object: `get(name)` for cluster-scoped kinds, `get(name, namespace)` for namespaced ones. */
  get(name: string, namespace?: string): T | undefined;
  /** One object by its `namespace/name` key. */
  getByKey(key: string): T | undefined;
  /** Objects matching every filter given. */
  list(filter?: ListFilter): T[];
  /** Objects found under `value` in the index `index`. */
  byIndex(index: string, value: string): T[];
  /** The same lister restricted to one namespace. */
  namespace(namespace: string): NamespaceLister<T>;
  /** Number of objects. */
  readonly size: number;
}

/**
 * A {@link Lister} restricted to one namespace.
 *
 * @example
 * ```ts
 * informer.store.namespace('default').get('web');
 * ```
 */
export interface NamespaceLister<T> {
  get(name: string): T | undefined;
  list(filter?: Omit<ListFilter, 'namespace'>): T[];
}

/**
 * Options of a {@link Store}.
 *
 * @example
 * ```ts
 * new Store<Pod>({ indexers: { node: (p) => p.spec?.nodeName } });
 * ```
 */
export interface StoreOptions<T> {
  /** Indexes from the start (more can be added later with {@link Store.addIndex}). */
  indexers?: Record<string, IndexFunc<T>>;
  /** Freeze objects as they enter (default true; see the module comment). */
  freeze?: boolean;
}

const FIELD_INDEX_PREFIX = 'field:';

const valuesOf = (v: string | readonly string[] | undefined): readonly string[] =>
  v === undefined ? [] : typeof v === 'string' ? [v] : v;

/**
 * Objects of one kind keyed by `namespace/name`, with indexes. An informer writes it; everyone
 * else reads it through the {@link Lister} methods.
 *
 * @example
 * ```ts
 * const store = new Store<Pod>({ indexers: { node: (p) => p.spec?.nodeName } });
 * store.set('default/web', pod);
 * store.byIndex('node', 'node-1');            // pods on node-1
 * store.list({ namespace: 'default', labelSelector: 'app=web' });
 * ```
 */
export class Store<T extends KubeObject> implements Lister<T> {
  /**
   * namespace → name → object: namespace listing needs no extra index. An object an informer
   * received with deferred decoding stays a `DeferredObject` until it is first read (or
   * indexed); then it is decoded, frozen and kept.
   */
  private readonly items = new Map<string, Map<string, T | DeferredObject>>();
  private count = 0;
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index → value → keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  private readonly freeze: boolean;

  constructor(options: StoreOptions<T> = {}) {
    this.freeze = options.freeze ?? true;
    for (const [name, fn] of Object.entries(options.indexers ?? {})) this.addIndex(name, fn);
  }

  get size(): number {
    return this.count;
  }

  /**
   * Adds an index; existing objects are indexed at once.
   * @throws Error when an index of that name exists (or for the built-in `namespace`).
   */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (name === NAMESPACE_INDEX || this.indexers.has(name)) {
      throw new Error(`the store already has an index named ${JSON.stringify(name)}`);
    }
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    // Indexed stores hold decoded objects only.
    for (const [ns, byName] of this.items) {
      for (const [objName, v] of byName) {
        this.indexOne(index, fn(this.resolve(byName, objName, v)), ns ? `${ns}/${objName}` : objName);
      }
    }
  }

  /** Whether the store has indexes besides the built-in `namespace` one. @internal */
  get indexed(): boolean {
    return this.indexers.size > 0;
  }

  /** Whether an index of that name exists (the built-in `namespace` included). */
  hasIndex(name: string): boolean {
    return name === NAMESPACE_INDEX || this.indexers.has(name);
  }

  /**
   * Makes `field` usable in the `fieldSelector` of {@link list} (controller-runtime's
   * `IndexField`): `extract` gives the field's value(s) of an object.
   *
   * @example
   * ```ts
   * store.addFieldIndex('spec.nodeName', (pod) => pod.spec?.nodeName);
   * store.list({ fieldSelector: { 'spec.nodeName': 'node-1' } });
   * ```
   */
  addFieldIndex(field: string, extract: IndexFunc<T>): void {
    this.addIndex(FIELD_INDEX_PREFIX + field, extract);
  }

  /** Whether {@link addFieldIndex} indexed `field`. */
  hasFieldIndex(field: string): boolean {
    return this.indexers.has(FIELD_INDEX_PREFIX + field);
  }

  /** Stores (or replaces) an object under `key` (its `namespace/name`); returns the stored object. */
  set(key: string, obj: T): T {
    let stored: T | DeferredObject;
    let ns: string;
    let name: string;
    if (isDeferred(obj)) {
      // Kept as received until read, unless an index needs it now.
      stored = this.indexers.size > 0 ? this.decoded(obj) : obj;
      ns = obj.namespace;
      name = obj.name;
    } else {
      stored = this.freeze ? deepFreeze(obj) : obj;
      ns = stored.metadata?.namespace ?? '';
      name = stored.metadata?.name ?? key;
    }
    let byName = this.items.get(ns);
    if (!byName) {
      byName = new Map();
      this.items.set(ns, byName);
    }
    if (this.indexers.size === 0) {
      // One lookup: this is the whole cost of storing a deferred object.
      const size = byName.size;
      byName.set(name, stored);
      if (byName.size !== size) this.count++;
      return stored as T;
    }
    const old = byName.get(name);
    byName.set(name, stored);
    if (old === undefined) this.count++;
    // With indexes, every stored object is decoded (see addIndex).
    for (const [index, fn] of this.indexers) {
      const idx = this.indices.get(index)!;
      if (old !== undefined) this.unindexOne(idx, fn(old as T), key);
      this.indexOne(idx, fn(stored as T), key);
    }
    return stored as T;
  }

  /**
   * The decoded form of an object the store handed out: a deferred object becomes what
   * readers get (kept, when it is still the stored version). Informers call it before their
   * handlers see an object.
   * @internal
   */
  decodedForm(obj: T): T {
    if (!isDeferred(obj)) return obj;
    const byName = this.items.get(obj.namespace);
    if (byName?.get(obj.name) === obj) return this.resolve(byName, obj.name, obj);
    return this.decoded(obj);
  }

  /** Decodes a deferred object into what the store holds. */
  private decoded(d: DeferredObject): T {
    const obj = d.decode<T>();
    return this.freeze ? deepFreeze(obj) : obj;
  }

  /** The object stored under `name` in `byName`, decoding and keeping it if it was deferred. */
  private resolve(byName: Map<string, T | DeferredObject>, name: string, v: T | DeferredObject): T {
    if (!isDeferred(v)) return v;
    const obj = this.decoded(v);
    byName.set(name, obj);
    return obj;
  }

  /** What is stored under `key`, deferred or not (the watcher's view). */
  private peek(key: string): T | undefined {
    const slash = key.indexOf('/');
    const v =
      slash < 0
        ? this.items.get('')?.get(key)
        : this.items.get(key.slice(0, slash))?.get(key.slice(slash + 1));
    return v as T | undefined;
  }

  /** Removes the object stored under `key`, if any. */
  delete(key: string): void {
    const slash = key.indexOf('/');
    const ns = slash < 0 ? '' : key.slice(0, slash);
    const name = slash < 0 ? key : key.slice(slash + 1);
    const byName = this.items.get(ns);
    const old = byName?.get(name);
    if (old === undefined || !byName) return;
    byName.delete(name);
    if (byName.size === 0) this.items.delete(ns);
    this.count--;
    for (const [index, fn] of this.indexers) this.unindexOne(this.indices.get(index)!, fn(old as T), key);
  }

  /** Every key. */
  *keys(): IterableIterator<string> {
    for (const [ns, byName] of this.items) {
      if (ns === '') yield* byName.keys();
      else for (const name of byName.keys()) yield `${ns}/${name}`;
    }
  }

  get(name: string, namespace = ''): T | undefined {
    const byName = this.items.get(namespace);
    const v = byName?.get(name);
    return v === undefined ? undefined : this.resolve(byName!, name, v);
  }

  getByKey(key: string): T | undefined {
    const slash = key.indexOf('/');
    return slash < 0 ? this.get(key) : this.get(key.slice(slash + 1), key.slice(0, slash));
  }

  list(filter: ListFilter = {}): T[] {
    const labels =
      filter.labelSelector === undefined
        ? undefined
        : parseLabelSelector(labelSelectorString(filter.labelSelector));
    const fields =
      filter.fieldSelector === undefined
        ? undefined
        : parseFieldSelector(fieldSelectorString(filter.fieldSelector));
    let namespace = filter.namespace;
    let candidates: Iterable<T> | undefined;
    if (fields) {
      for (const r of fields) {
        if (r.operator === '!=') continue;
        if (r.field === 'metadata.namespace') {
          if (namespace !== undefined && namespace !== r.value) return [];
          namespace = r.value;
        } else if (r.field === 'metadata.name' && candidates === undefined) {
          const name = r.value;
          candidates = [...this.items.values()].flatMap((byName) => {
            const obj = byName.get(name);
            return obj === undefined ? [] : [this.resolve(byName, name, obj)];
          });
        } else if (
          candidates === undefined &&
          r.value !== '' && // objects without the field are in no index
          this.indexers.has(FIELD_INDEX_PREFIX + r.field)
        ) {
          candidates = this.byIndex(FIELD_INDEX_PREFIX + r.field, r.value);
        }
      }
      for (const r of fields) this.fieldGetter(r.field); // fail early on an unindexed field
    }
    const out: T[] = [];
    const consider = (obj: T) => {
      if (namespace !== undefined && (obj.metadata?.namespace ?? '') !== namespace) return;
      if (labels && !matchesLabels(labels, obj.metadata?.labels)) return;
      if (fields && !this.matchesFieldSelector(fields, obj)) return;
      out.push(obj);
    };
    const all = (byName: Map<string, T | DeferredObject>) => {
      for (const [name, v] of byName) consider(this.resolve(byName, name, v));
    };
    if (candidates) for (const obj of candidates) consider(obj);
    else if (namespace !== undefined) {
      const byName = this.items.get(namespace);
      if (byName) all(byName);
    } else for (const byName of this.items.values()) all(byName);
    return out;
  }

  /**
   * Whether `obj` passes `filter`, as {@link list} would judge it (for an object not in the
   * store, e.g. one read from the server).
   */
  matches(obj: T, filter: ListFilter): boolean {
    if (filter.namespace !== undefined && (obj.metadata?.namespace ?? '') !== filter.namespace) return false;
    if (
      filter.labelSelector !== undefined &&
      !matchesLabels(parseLabelSelector(labelSelectorString(filter.labelSelector)), obj.metadata?.labels)
    )
      return false;
    return (
      filter.fieldSelector === undefined ||
      this.matchesFieldSelector(parseFieldSelector(fieldSelectorString(filter.fieldSelector)), obj)
    );
  }

  byIndex(index: string, value: string): T[] {
    if (index === NAMESPACE_INDEX) return this.list({ namespace: value });
    const idx = this.indices.get(index);
    if (!idx) throw new Error(`the store has no index named ${JSON.stringify(index)}`);
    const keys = idx.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.getByKey(key);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  /** The values present in an index (for `namespace`: the namespaces holding objects). */
  indexValues(index: string): string[] {
    if (index === NAMESPACE_INDEX) return [...this.items.keys()];
    const idx = this.indices.get(index);
    if (!idx) throw new Error(`the store has no index named ${JSON.stringify(index)}`);
    return [...idx.keys()];
  }

  namespace(namespace: string): NamespaceLister<T> {
    return {
      get: (name) => this.get(name, namespace),
      list: (filter = {}) => this.list({ ...filter, namespace }),
    };
  }

  /** This store as the memory of a watcher: the watcher keeps it up to date. */
  asWatcherMemory(): WatcherMemory<T> {
    const store = this;
    return {
      get size() {
        return store.size;
      },
      get: (key) => this.peek(key),
      set: (key, obj) => this.set(key, obj),
      delete: (key) => this.delete(key),
      keys: () => this.keys(),
    };
  }

  private fieldGetter(field: string): (obj: T) => readonly string[] {
    if (field === 'metadata.name') return (o) => [o.metadata?.name ?? ''];
    if (field === 'metadata.namespace') return (o) => [o.metadata?.namespace ?? ''];
    const fn = this.indexers.get(FIELD_INDEX_PREFIX + field);
    if (!fn) {
      throw new Error(
        `field selector on ${JSON.stringify(field)} needs a field index: call addFieldIndex(${JSON.stringify(field)}, …) first`,
      );
    }
    return (o) => valuesOf(fn(o));
  }

  private matchesFieldSelector(sel: FieldSelector, obj: T): boolean {
    return sel.every((r) => {
      const values = this.fieldGetter(r.field)(obj);
      const has = values.includes(r.value) || (values.length === 0 && r.value === '');
      return r.operator === '!=' ? !has : has;
    });
  }

  private indexOne(idx: Map<string, Set<string>>, v: string | readonly string[] | undefined, key: string) {
    for (const value of valuesOf(v)) {
      let keys = idx.get(value);
      if (!keys) {
        keys = new Set();
        idx.set(value, keys);
      }
      keys.add(key);
    }
  }

  private unindexOne(idx: Map<string, Set<string>>, v: string | readonly string[] | undefined, key: string) {
    for (const value of valuesOf(v)) {
      const keys = idx.get(value);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) idx.delete(value);
    }
  }
}
