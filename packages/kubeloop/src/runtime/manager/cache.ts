/**
 * The manager's cache: shared informers, read with read-your-writes (see read-your-writes.ts).
 */
import { isNotFound } from '../../api/status.js';
import type { Client } from '../../client/client.js';
import type { ResourceDescriptor } from '../../client/descriptor.js';
import type { FieldSelectorInput, LabelSelectorInput } from '../../client/options.js';
import type { KubeObject } from '../../client/types.js';
import type { InformerFactory } from '../cache/factory.js';
import type { Informer } from '../cache/informer.js';
import type { IndexFunc } from '../cache/store.js';
import type { PartialObjectMetadata } from '../cache/transform.js';
import type { CacheLister, CacheReader } from '../controller/types.js';
import { objectKey } from '../keys.js';
import type { ObjectRef, WriteTracker } from './read-your-writes.js';

/**
 * Reads of the shared informers that always reflect the manager's own writes.
 *
 * @example
 * ```ts
 * const dep = await manager.cache.get(Deployment, 'web', 'apps');
 * ```
 */
export class ManagerCache implements CacheReader {
  private readonly watched = new WeakSet<object>();
  /** Unfiltered informers by kind, so reads use the informer whose events triggered them. */
  private readonly byKind = new Map<string, { namespace: string; informer: Informer<KubeObject> }[]>();
  /** Unfiltered metadata-only informers by kind, for `getMetadata`. */
  private readonly metadataByKind = new Map<
    string,
    { namespace: string; informer: Informer<PartialObjectMetadata> }[]
  >();
  /** Unfiltered informers by `group/version/kind|namespace`, for {@link existingInformer}. */
  private readonly unfiltered = new Map<string, Informer<KubeObject>>();
  /** Field indexes by kind, added to every unfiltered informer of the kind. */
  private readonly fieldIndexes = new Map<string, Map<string, IndexFunc<KubeObject>>>();

  constructor(
    private readonly informers: InformerFactory,
    private readonly tracker: WriteTracker,
    /** A client whose reads are not tracked: the fallback when the cache lags. */
    private readonly client: Client,
    private readonly options: { namespace: string; readYourWritesTimeoutMs: number },
  ) {}

  /** The shared informer of a kind in a scope; wakes read-your-writes waiters on its events. */
  informer<T extends KubeObject>(
    kind: ResourceDescriptor<T>,
    scope: { namespace?: string; labelSelector?: LabelSelectorInput } = {},
  ): Informer<T> {
    const informer = this.informers.informer(kind, {
      namespace: scope.namespace ?? this.options.namespace,
      ...(scope.labelSelector !== undefined && { labelSelector: scope.labelSelector }),
    });
    if (!this.watched.has(informer)) {
      this.watched.add(informer);
      const changed = (obj: KubeObject, deleted = false) =>
        this.tracker.changed(
          obj,
          {
            group: kind.group,
            kind: kind.kind,
            namespace: obj.metadata?.namespace ?? '',
            name: obj.metadata?.name ?? '',
          },
          deleted,
        );
      informer.addEventHandler({
        onAdd: (o) => changed(o),
        onUpdate: (_o, n) => changed(n),
        onDelete: (o) => changed(o, true),
      });
      if (scope.labelSelector === undefined) {
        const k = `${kind.group}/${kind.kind}`;
        const list = this.byKind.get(k) ?? [];
        const namespace = scope.namespace ?? this.options.namespace;
        list.push({ namespace, informer: informer as unknown as Informer<KubeObject> });
        this.unfiltered.set(
          `${kind.group}/${kind.version}/${kind.kind}|${namespace}`,
          informer as unknown as Informer<KubeObject>,
        );
        this.byKind.set(k, list);
        for (const [field, extract] of this.fieldIndexes.get(k) ?? []) {
          addFieldIndex(informer as unknown as Informer<KubeObject>, field, extract);
        }
      }
    }
    return informer;
  }

  /**
   * The shared informer of every object of a kind at that version (in `namespace`; default: all
   * namespaces, or the manager's), if someone already asked for it — without making one. For a
   * runnable that reads any kind as metadata (as the garbage collector) but would rather share a
   * controller's informer of the kind than open a second watch of it: one list, one watch and
   * one copy of each object. Its objects are whole objects; their metadata is what a metadata
   * informer holds.
   *
   * @example
   * ```ts
   * const pods = cache.existingInformer(Pod) ?? cache.metadataInformer(Pod);
   * pods.store.get('web-0', 'default')?.metadata?.ownerReferences;
   * ```
   */
  existingInformer<T extends KubeObject>(
    kind: ResourceDescriptor<T>,
    namespace?: string,
  ): Informer<T> | undefined {
    const ns = namespace ?? this.options.namespace;
    return this.unfiltered.get(`${kind.group}/${kind.version}/${kind.kind}|${ns}`) as Informer<T> | undefined;
  }

  /**
   * Serves reads of `kind` in `namespace` from `informer`, though it has a label selector: a
   * sharded replica's informers narrowed to its shard are its whole view of the kind, and reads
   * through another (unfiltered) informer would cache every shard's objects.
   */
  serveReadsFrom(kind: ResourceDescriptor, namespace: string, informer: Informer<KubeObject>): void {
    const k = `${kind.group}/${kind.kind}`;
    this.byKind.set(k, [{ namespace, informer }, ...(this.byKind.get(k) ?? [])]);
    for (const [field, extract] of this.fieldIndexes.get(k) ?? []) addFieldIndex(informer, field, extract);
  }

  /**
   * The shared metadata-only informer of a kind (`PartialObjectMetadata`: what a controller
   * needs that reads only names, labels and owners of every kind, as the garbage collector).
   */
  metadataInformer(
    kind: ResourceDescriptor,
    scope: {
      namespace?: string;
      labelSelector?: LabelSelectorInput;
      /** Indexes the caller reads by (`store.byIndex`); added to the shared store when missing. */
      indexers?: Record<string, IndexFunc<PartialObjectMetadata>>;
    } = {},
  ): Informer<PartialObjectMetadata> {
    const namespace = scope.namespace ?? this.options.namespace;
    const informer = this.informers.metadataInformer(kind, {
      namespace,
      ...(scope.labelSelector !== undefined && { labelSelector: scope.labelSelector }),
      ...(scope.indexers !== undefined && { indexers: scope.indexers }),
    });
    if (scope.labelSelector === undefined) {
      const k = `${kind.group}/${kind.kind}`;
      const list = this.metadataByKind.get(k) ?? [];
      if (!list.some((e) => e.informer === informer)) list.push({ namespace, informer });
      this.metadataByKind.set(k, list);
    }
    return informer;
  }

  /**
   * Stops and forgets a shared metadata-only informer (controller-runtime's `RemoveInformer`),
   * e.g. of a custom resource whose CRD was deleted: it stops listing and watching a kind the
   * server no longer serves. Asking for it again later makes a new one.
   *
   * @example
   * ```ts
   * const widgets = cache.metadataInformer(Widget);
   * // … the Widget CRD is gone:
   * await cache.removeMetadataInformer(widgets);
   * ```
   */
  removeMetadataInformer(informer: Informer<PartialObjectMetadata>): Promise<void> {
    for (const [k, list] of this.metadataByKind) {
      const rest = list.filter((e) => e.informer !== informer);
      if (rest.length > 0) this.metadataByKind.set(k, rest);
      else this.metadataByKind.delete(k);
    }
    return this.informers.remove(informer);
  }

  /**
   * Indexes `field` of a kind (controller-runtime's `IndexField`): `list(kind, { fieldSelector })`
   * on it reads the index. Indexing a field twice keeps the first extractor.
   */
  indexField<T extends KubeObject>(kind: ResourceDescriptor<T>, field: string, extract: IndexFunc<T>): void {
    const k = `${kind.group}/${kind.kind}`;
    const fields = this.fieldIndexes.get(k) ?? new Map<string, IndexFunc<KubeObject>>();
    this.fieldIndexes.set(k, fields);
    if (fields.has(field)) return;
    fields.set(field, extract as IndexFunc<KubeObject>);
    for (const { informer } of this.byKind.get(k) ?? []) addFieldIndex(informer, field, fields.get(field)!);
  }

  /**
   * Synchronous reads of the cache as it is now, for map functions (see {@link CacheLister});
   * they do not wait for the manager's own writes.
   */
  readonly lister: CacheLister = {
    get: <T extends KubeObject>(kind: ResourceDescriptor<T>, name: string, namespace = '') =>
      this.readerOf(kind, namespace).store.get(name, namespace),
    list: <T extends KubeObject>(
      kind: ResourceDescriptor<T>,
      options: {
        namespace?: string;
        labelSelector?: LabelSelectorInput;
        fieldSelector?: FieldSelectorInput;
      } = {},
    ) => {
      const namespace = options.namespace ?? '';
      return this.readerOf(kind, namespace).store.list({
        ...(namespace !== '' && { namespace }),
        ...(options.labelSelector !== undefined && { labelSelector: options.labelSelector }),
        ...(options.fieldSelector !== undefined && { fieldSelector: options.fieldSelector }),
      });
    },
  };

  /** The informer to read a namespace from: one of that namespace, else one of all, else a new one. */
  private readerOf<T extends KubeObject>(kind: ResourceDescriptor<T>, namespace: string): Informer<T> {
    const list = this.byKind.get(`${kind.group}/${kind.kind}`) ?? [];
    const found =
      (namespace !== '' ? list.find((e) => e.namespace === namespace) : undefined) ??
      list.find((e) => e.namespace === '');
    return found ? (found.informer as unknown as Informer<T>) : this.informer(kind);
  }

  async get<T extends KubeObject>(
    kind: ResourceDescriptor<T>,
    name: string,
    namespace = '',
  ): Promise<T | undefined> {
    const informer = this.readerOf(kind, namespace);
    await informer.waitForSync();
    return this.read(informer, kind, namespace, name);
  }

  async list<T extends KubeObject>(
    kind: ResourceDescriptor<T>,
    options: {
      namespace?: string;
      labelSelector?: LabelSelectorInput;
      fieldSelector?: FieldSelectorInput;
    } = {},
  ): Promise<T[]> {
    const namespace = options.namespace ?? '';
    const informer = this.readerOf(kind, namespace);
    await informer.waitForSync();
    const refs = this.tracker.refsOf(kind.group, kind.kind, namespace);
    const fresh = await Promise.all(
      refs.map((ref) => this.readFresh(informer, kind, ref.namespace, ref.name)),
    );
    const filter = {
      ...(namespace !== '' && { namespace }),
      ...(options.labelSelector !== undefined && { labelSelector: options.labelSelector }),
      ...(options.fieldSelector !== undefined && { fieldSelector: options.fieldSelector }),
    };
    const listed = informer.store.list(filter);
    // Writes the cache had not shown within the timeout were read from the server: the list
    // shows them as the server has them, as a read of one of them would.
    const fromServer = new Map<string, T | undefined>();
    refs.forEach((ref, i) => {
      const read = fresh[i];
      if (read?.fromServer)
        fromServer.set(ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name, read.obj);
    });
    if (fromServer.size === 0) return listed;
    const out = listed.filter((o) => !fromServer.has(objectKey(o)));
    for (const obj of fromServer.values()) if (obj && informer.store.matches(obj, filter)) out.push(obj);
    return out;
  }

  async getMetadata(
    kind: ResourceDescriptor,
    name: string,
    namespace = '',
  ): Promise<PartialObjectMetadata | undefined> {
    // The metadata informer of that namespace, else one of all namespaces, else a new one.
    const list = this.metadataByKind.get(`${kind.group}/${kind.kind}`) ?? [];
    const informer =
      (namespace !== '' ? list.find((e) => e.namespace === namespace) : undefined)?.informer ??
      list.find((e) => e.namespace === '')?.informer ??
      this.metadataInformer(kind);
    await informer.waitForSync();
    return informer.store.get(name, namespace);
  }

  /**
   * Reads one object of `informer`, waiting for the manager's writes to reach it; past the
   * timeout, reads the server. `signal` ends the wait; given as a function, it is asked for
   * only when there is a wait (a reconcile makes its signal only when something needs it).
   */
  async read<T extends KubeObject>(
    informer: Informer<T>,
    kind: ResourceDescriptor<T>,
    namespace: string,
    name: string,
    signal?: AbortSignal | (() => AbortSignal),
  ): Promise<T | undefined> {
    return (await this.readFresh(informer, kind, namespace, name, signal)).obj;
  }

  /** {@link read}, saying whether the object came from the server (the cache lagged). */
  private async readFresh<T extends KubeObject>(
    informer: Informer<T>,
    kind: ResourceDescriptor<T>,
    namespace: string,
    name: string,
    lazySignal?: AbortSignal | (() => AbortSignal),
  ): Promise<{ obj: T | undefined; fromServer: boolean }> {
    const ref: ObjectRef = { group: kind.group, kind: kind.kind, namespace, name };
    const read = () => informer.store.get(name, namespace);
    // The cache is up to date (nearly always): no signal is needed, nor made when given lazily.
    const cached = read();
    if (this.tracker.met(ref, cached)) return { obj: cached, fromServer: false };
    const signal = typeof lazySignal === 'function' ? lazySignal() : lazySignal;
    if (await this.tracker.wait(ref, read, this.options.readYourWritesTimeoutMs, signal))
      return { obj: read(), fromServer: false };
    signal?.throwIfAborted();
    this.tracker.forget(ref);
    try {
      return {
        obj: await this.client.api(kind, namespace).get(name, { ...(signal && { signal }) }),
        fromServer: true,
      };
    } catch (err) {
      if (isNotFound(err)) return { obj: undefined, fromServer: true };
      throw err;
    }
  }
}

function addFieldIndex(informer: Informer<KubeObject>, field: string, extract: IndexFunc<KubeObject>): void {
  if (!informer.store.hasFieldIndex(field)) informer.store.addFieldIndex(field, extract);
}
