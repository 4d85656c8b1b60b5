/**
 * The garbage collector of kube-controller-manager: deletes objects whose owners are gone, and
 * carries out the `foregroundDeletion` and `orphan` finalizers the API server adds on delete.
 *
 * Written on `kubeloop/runtime` like any operator: one shared metadata-only informer per
 * resource, a deduplicating rate-limited {@link WorkQueue}, and a `reconcile(key)` per object.
 */
import { setMaxListeners } from 'node:events';
import type { Client, KubeObject, ResourceDescriptor } from 'kubeloop/client';
import { isConflict, isNotFound } from 'kubeloop/client';
import {
  defaultControllerRateLimiter,
  Informer,
  type PartialObjectMetadata,
  WorkQueue,
} from 'kubeloop/runtime';
import type { Registry } from '../registry/registry.js';
import type { ResourceType } from '../registry/types.js';
import type { ControllerLog } from './log.js';
import { runWorker } from './worker.js';

type OwnerReference = NonNullable<PartialObjectMetadata['metadata']['ownerReferences']>[number];

/** Options of {@link GarbageCollector}. */
export interface GarbageCollectorOptions {
  log?: ControllerLog;
  /** Concurrent reconciles (default 4). */
  workers?: number;
}

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';
const OWNER_INDEX = 'gc:owner-uid';
const ownerUids = (o: PartialObjectMetadata): string[] =>
  (o.metadata.ownerReferences ?? []).map((r) => r.uid);

/** One watched resource: a group and resource at the version the collector reads it. */
interface Watched {
  type: ResourceType;
  descriptor: ResourceDescriptor;
  informer: Informer<PartialObjectMetadata>;
}

/** An object found by an owner reference or an index: which resource it is of, and its metadata. */
interface Found {
  watched: Watched;
  obj: PartialObjectMetadata;
}

/** Queue keys: `group|resource|namespace|name` (namespace empty for cluster-scoped objects). */
const keyOf = (type: ResourceType, obj: PartialObjectMetadata): string =>
  [type.group, type.resource, obj.metadata.namespace ?? '', obj.metadata.name ?? ''].join('|');

const groupOf = (apiVersion: string): string => {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
};

/**
 * The garbage collector (Kubernetes' `garbagecollector` controller):
 * - an object all of whose owners are gone (no object of that kind and name, or one with another
 *   UID) is deleted — in the background, or in the foreground/orphan way its own finalizers say;
 *   owner references to owners that are gone are removed while another owner remains;
 * - an owner being deleted with the `foregroundDeletion` finalizer has its dependents deleted,
 *   and keeps the finalizer until no dependent with `blockOwnerDeletion: true` is left;
 * - an owner being deleted with the `orphan` finalizer has its references removed from its
 *   dependents, then loses the finalizer.
 *
 * A namespaced owner only owns dependents of its own namespace; a cluster-scoped owner owns
 * dependents anywhere.
 */
export class GarbageCollector {
  private readonly queue = new WorkQueue<string>({
    name: 'garbage-collector',
    rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
  });
  /** By `group|resource`. */
  private readonly watched = new Map<string, Watched>();
  private readonly abort = new AbortController();
  private unsubscribe: (() => void) | undefined;
  private workers: Promise<void>[] = [];
  private readonly log: ControllerLog;

  constructor(
    private readonly client: Client,
    private readonly registry: Registry,
    private readonly options: GarbageCollectorOptions = {},
  ) {
    this.log = options.log ?? (() => undefined);
    // One listener per informer, one informer per resource: dozens, by design.
    setMaxListeners(0, this.abort.signal);
  }

  /** Starts watching every resource (and every custom resource defined later) and reconciling. */
  start(): void {
    this.syncResources();
    this.unsubscribe = this.registry.onChange(() => {
      // Never let a failure here break whoever changed the registry (the CRD controller).
      try {
        this.syncResources();
      } catch (err) {
        this.log('error', 'garbage collector could not follow the resource table', { error: String(err) });
      }
    });
    const n = this.options.workers ?? 4;
    for (let i = 0; i < n; i++) this.workers.push(this.work());
  }

  /** Resolves when every informer has its first list (for tests). */
  waitForSync(timeoutMs = 30_000): Promise<void> {
    return Promise.all([...this.watched.values()].map((w) => w.informer.waitForSync({ timeoutMs }))).then(
      () => undefined,
    );
  }

  /** Stops reconciling and watching. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.abort.abort();
    await this.queue.shutdown();
    await Promise.all(this.workers);
    await Promise.all([...this.watched.values()].map((w) => w.informer.stop()));
  }

  /** Watches each listable, watchable, deletable resource once (Kubernetes' GC reads discovery the same way). */
  private syncResources(): void {
    const wanted = new Map<string, ResourceType>();
    for (const type of this.registry.all()) {
      if (!['list', 'watch', 'delete'].every((v) => (type.verbs as readonly string[]).includes(v))) continue;
      // Custom resources are read at their storage version, served as long as the CRD is.
      if (type.custom && type.custom.storageVersion !== type.version) continue;
      const id = `${type.group}|${type.resource}`;
      if (!wanted.has(id) || type.custom) wanted.set(id, type);
    }
    // Resources gone or changed (a CRD deleted, or updated to another version or scope).
    for (const [id, w] of this.watched) {
      const t = wanted.get(id);
      if (t && t.version === w.type.version && t.kind === w.type.kind && t.namespaced === w.type.namespaced)
        continue;
      this.watched.delete(id);
      void w.informer.stop();
    }
    for (const [id, type] of wanted) {
      if (this.watched.has(id)) continue;
      const descriptor: ResourceDescriptor = {
        group: type.group,
        version: type.version,
        kind: type.kind,
        plural: type.resource,
        namespaced: type.namespaced,
      };
      const informer = Informer.metadata(this.client.api(descriptor, ''), {
        indexers: { [OWNER_INDEX]: ownerUids },
        onLifecycle: (e) => {
          if (e.type === 'handlerError')
            this.log('error', 'garbage collector handler failed', { resource: id, error: String(e.error) });
        },
      });
      const w: Watched = { type, descriptor, informer };
      this.watched.set(id, w);
      informer.addEventHandler({
        onAdd: (o) => this.observe(w, o),
        onUpdate: (_old, o) => this.observe(w, o),
        onDelete: (o) => this.enqueueDependents(o),
      });
      // On the collector's own signal, whose listener limit is lifted: one informer per resource is dozens.
      informer.start(this.abort.signal);
    }
  }

  private observe(w: Watched, o: PartialObjectMetadata): void {
    const m = o.metadata;
    if ((m.ownerReferences?.length ?? 0) > 0) this.queue.add(keyOf(w.type, o));
    if (m.deletionTimestamp) {
      if (m.finalizers?.includes(FOREGROUND) || m.finalizers?.includes(ORPHAN))
        this.queue.add(keyOf(w.type, o));
      // Whoever waits on this object (a foreground owner) looks again.
      for (const ref of m.ownerReferences ?? []) this.enqueueOwner(o, ref);
    }
  }

  private enqueueDependents(owner: PartialObjectMetadata): void {
    for (const d of this.dependentsOf(owner)) this.queue.add(keyOf(d.watched.type, d.obj));
    for (const ref of owner.metadata.ownerReferences ?? []) this.enqueueOwner(owner, ref);
  }

  private enqueueOwner(dependent: PartialObjectMetadata, ref: OwnerReference): void {
    const owner = this.cachedOwner(dependent, ref);
    if (owner) this.queue.add(keyOf(owner.watched.type, owner.obj));
  }

  private work(): Promise<void> {
    return runWorker(
      this.queue,
      this.abort.signal,
      async (k) => ((await this.reconcile(k)) ? 'retry' : undefined),
      {
        log: this.log,
        message: 'garbage collection failed; retrying',
      },
    );
  }

  /** One object: returns true to look again later (while waiting for dependents to go). */
  async reconcile(key: string): Promise<boolean> {
    const [group = '', resource = '', namespace = '', name = ''] = key.split('|');
    const w = this.watched.get(`${group}|${resource}`);
    if (!w) return false;
    const obj = w.informer.store.get(name, namespace);
    if (!obj) return false;
    const m = obj.metadata;
    if (m.deletionTimestamp) {
      if (m.finalizers?.includes(ORPHAN)) return this.orphanDependents(w, obj);
      if (m.finalizers?.includes(FOREGROUND)) return this.deleteDependents(w, obj);
      return false;
    }
    return this.collectIfOrphaned(w, obj);
  }

  /** Deletes an object whose owners are all gone; drops references to owners that are gone. */
  private async collectIfOrphaned(w: Watched, obj: PartialObjectMetadata): Promise<boolean> {
    const refs = obj.metadata.ownerReferences ?? [];
    if (refs.length === 0) return false;
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const owner = await this.liveOwner(w, obj, ref);
      if (!owner) dangling.push(ref);
      else if (owner.metadata.deletionTimestamp && owner.metadata.finalizers?.includes(FOREGROUND))
        waiting.push(ref);
      else solid.push(ref);
    }
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return false;
      const gone = new Set([...dangling, ...waiting].map((r) => r.uid));
      await this.patchOwnerReferences(w, obj, (r) => !gone.has(r.uid));
      return false;
    }
    const hasDependents = this.dependentsOf(obj).length > 0;
    const finalizers = obj.metadata.finalizers ?? [];
    const policy =
      waiting.length > 0 && hasDependents
        ? 'Foreground'
        : finalizers.includes(ORPHAN)
          ? 'Orphan'
          : finalizers.includes(FOREGROUND)
            ? 'Foreground'
            : 'Background';
    await this.deleteObject(w, obj, policy);
    return false;
  }

  /** Foreground deletion of an owner: delete its dependents, then let it go once none blocks it. */
  private async deleteDependents(w: Watched, owner: PartialObjectMetadata): Promise<boolean> {
    const dependents = this.dependentsOf(owner);
    let blocked = false;
    for (const d of dependents) {
      const ref = d.obj.metadata.ownerReferences?.find((r) => r.uid === owner.metadata.uid);
      if (ref?.blockOwnerDeletion) blocked = true;
      if (d.obj.metadata.deletionTimestamp) continue;
      const policy = this.dependentsOf(d.obj).length > 0 ? 'Foreground' : 'Background';
      await this.deleteObject(d.watched, d.obj, policy);
    }
    if (blocked) return true;
    await this.removeFinalizer(w, owner, FOREGROUND);
    return false;
  }

  /** Orphan deletion of an owner: its dependents lose their reference to it, then it goes. */
  private async orphanDependents(w: Watched, owner: PartialObjectMetadata): Promise<boolean> {
    for (const d of this.dependentsOf(owner)) {
      await this.patchOwnerReferences(d.watched, d.obj, (r) => r.uid !== owner.metadata.uid);
    }
    await this.removeFinalizer(w, owner, ORPHAN);
    return false;
  }

  /** Cached objects whose owner references name this object's UID (in its namespace when it has one). */
  private dependentsOf(owner: PartialObjectMetadata): Found[] {
    const uid = owner.metadata.uid;
    if (!uid) return [];
    const ns = owner.metadata.namespace;
    const out: Found[] = [];
    for (const watched of this.watched.values()) {
      for (const obj of watched.informer.store.byIndex(OWNER_INDEX, uid)) {
        // Owner references do not cross namespaces: a namespaced owner owns nothing elsewhere.
        if (ns && obj.metadata.namespace !== ns) continue;
        out.push({ watched, obj });
      }
    }
    return out;
  }

  /** The watched resource of an owner reference's kind, and the namespace its owner would live in. */
  private ownerResource(
    dependent: PartialObjectMetadata,
    ref: OwnerReference,
  ): { watched: Watched; ns: string } | undefined {
    const group = groupOf(ref.apiVersion);
    for (const watched of this.watched.values()) {
      if (watched.type.group !== group || watched.type.kind !== ref.kind) continue;
      if (watched.type.namespaced) {
        // A cluster-scoped dependent cannot have a namespaced owner: the reference resolves to nothing.
        if (!dependent.metadata.namespace) return undefined;
        return { watched, ns: dependent.metadata.namespace };
      }
      return { watched, ns: '' };
    }
    return undefined;
  }

  private cachedOwner(dependent: PartialObjectMetadata, ref: OwnerReference): Found | undefined {
    const r = this.ownerResource(dependent, ref);
    if (!r) return undefined;
    const obj = r.watched.informer.store.get(ref.name, r.ns);
    return obj && obj.metadata.uid === ref.uid ? { watched: r.watched, obj } : undefined;
  }

  /**
   * The owner a reference names, when it exists with that UID. The cache says "present" reliably
   * enough, but "absent" is confirmed with a live read: an owner created a moment ago may not be
   * in the cache yet, and deleting its new dependent would be wrong.
   */
  private async liveOwner(
    w: Watched,
    dependent: PartialObjectMetadata,
    ref: OwnerReference,
  ): Promise<PartialObjectMetadata | undefined> {
    const cached = this.cachedOwner(dependent, ref);
    if (cached) return cached.obj;
    const r = this.ownerResource(dependent, ref);
    if (!r) {
      // An unknown kind: Kubernetes keeps the dependent rather than guess.
      if (!this.ownerKindKnown(ref)) {
        this.log('warn', 'owner reference to an unknown kind', { dependent: keyOf(w.type, dependent), ref });
        return PRESENT;
      }
      return undefined;
    }
    try {
      const live = (await this.client
        .api(r.watched.descriptor, r.watched.type.namespaced ? r.ns : undefined)
        .get(ref.name)) as KubeObject;
      return live.metadata?.uid === ref.uid ? (live as PartialObjectMetadata) : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private ownerKindKnown(ref: OwnerReference): boolean {
    const group = groupOf(ref.apiVersion);
    for (const watched of this.watched.values())
      if (watched.type.group === group && watched.type.kind === ref.kind) return true;
    return false;
  }

  private async deleteObject(
    w: Watched,
    obj: PartialObjectMetadata,
    policy: 'Foreground' | 'Background' | 'Orphan',
  ): Promise<void> {
    const m = obj.metadata;
    try {
      await this.client
        .api(w.descriptor, w.type.namespaced ? m.namespace : undefined)
        .delete(m.name ?? '', { propagationPolicy: policy, preconditions: { uid: m.uid ?? '' } });
    } catch (err) {
      if (isNotFound(err)) return;
      // A precondition failed: the name now belongs to another object, which is not ours to delete.
      if (isConflict(err)) return;
      throw err;
    }
  }

  private async patchOwnerReferences(
    w: Watched,
    obj: PartialObjectMetadata,
    keep: (r: OwnerReference) => boolean,
  ): Promise<void> {
    const m = obj.metadata;
    const refs = (m.ownerReferences ?? []).filter(keep);
    try {
      await this.client
        .api(w.descriptor, w.type.namespaced ? m.namespace : undefined)
        .patch(
          m.name ?? '',
          [
            { op: 'test', path: '/metadata/uid', value: m.uid },
            refs.length > 0
              ? { op: 'replace', path: '/metadata/ownerReferences', value: refs }
              : { op: 'remove', path: '/metadata/ownerReferences' },
          ],
          { type: 'json' },
        );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  private async removeFinalizer(w: Watched, obj: PartialObjectMetadata, finalizer: string): Promise<void> {
    const m = obj.metadata;
    const finalizers = (m.finalizers ?? []).filter((f) => f !== finalizer);
    try {
      // The resourceVersion makes this conditional: finalizers added meanwhile are not lost.
      await this.client.api(w.descriptor, w.type.namespaced ? m.namespace : undefined).patch(
        m.name ?? '',
        {
          metadata: {
            finalizers: finalizers.length > 0 ? finalizers : null,
            resourceVersion: m.resourceVersion,
          },
        },
        { type: 'merge' },
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}

/** Stands for an owner that is taken to exist without being read. */
const PRESENT: PartialObjectMetadata = { apiVersion: 'v1', kind: 'Unknown', metadata: {} };
