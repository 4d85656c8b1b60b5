/**
 * The garbage collector of kube-controller-manager: deletes objects whose owners are gone, and
 * carries out the `foregroundDeletion` and `orphan` finalizers the API server adds on delete.
 *
 * A runnable of the built-in controllers' `Manager`, written on `kubeloop` like any operator: it
 * learns the resource types from the API's discovery (as Kubernetes' collector does), watches the
 * metadata of each through the manager's shared cache, and reconciles one object per queue key.
 */
import type { Client, DiscoveredResource, KubeObject, ResourceDescriptor } from 'kubeloop/client';
import { CustomResourceDefinition, isConflict, isNotFound } from 'kubeloop/client';
import {
  defaultControllerRateLimiter,
  type Informer,
  type ManagerCache,
  type PartialObjectMetadata,
  type Runnable,
  untilAborted,
  WorkQueue,
} from 'kubeloop/runtime';
import {
  descriptorOf,
  groupOf,
  keyOf,
  type OwnerReference,
  ownerUids,
  sameOwners,
} from './garbage-collector-refs.js';
import type { ControllerLog } from './log.js';

/** Options of {@link GarbageCollector}. */
export interface GarbageCollectorOptions {
  log?: ControllerLog;
  /** Concurrent reconciles (default 4). */
  workers?: number;
  /**
   * How often the resource types are discovered again besides on CRD changes (default 30 s, as
   * kube-controller-manager's collector), for kinds served otherwise (aggregated APIs).
   */
  resyncMs?: number;
  /** How long it waits for its first lists before deleting anything (default 30 s, as kube's). */
  initialSyncTimeoutMs?: number;
}

const FOREGROUND = 'foregroundDeletion';
/** The least time between two discoveries in a row. */
const DISCOVERY_SPACING_MS = 50;
const ORPHAN = 'orphan';
const OWNER_INDEX = 'gc:owner-uid';
/**
 * Resources the collector never watches, as kube-controller-manager's `DefaultIgnoredResources`:
 * Events (core and events.k8s.io) are written by every component all the time and owned by none.
 */
const IGNORED = new Set(['|events', 'events.k8s.io|events']);

/** One watched resource: a group and resource at the version the collector reads it. */
interface Watched {
  type: DiscoveredResource;
  descriptor: ResourceDescriptor;
  informer: Informer<PartialObjectMetadata>;
  /** Whether the informer is a controller's (whole objects), not the collector's own metadata one. */
  shared: boolean;
  /** Removes the collector's event handler from the informer. */
  unsubscribe: () => void;
}

/** An object found by an owner reference or an index: which resource it is of, and its metadata. */
interface Found {
  watched: Watched;
  obj: PartialObjectMetadata;
}

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
 * dependents anywhere. It follows every resource discovery lists with the verbs list, watch and
 * delete (the server's preferred version of each), discovered again whenever a
 * CustomResourceDefinition changes and every {@link GarbageCollectorOptions.resyncMs}.
 *
 * Its writes go through `client`, a client whose writes the manager does not track: the collector
 * reads only its own metadata caches, and deletes objects of kinds no controller may ever read.
 */
export function garbageCollector(
  client: Client,
  options: GarbageCollectorOptions = {},
): Runnable & { stop(): void; initialSync(): Promise<void> } {
  const gc = new GarbageCollector(client, options);
  return {
    name: 'garbage-collector',
    needLeaderElection: false,
    // Its informers are its own to wait for, not the manager's: one kind that cannot be listed
    // (a CRD whose conversion webhook is down) must not hold every other controller's start,
    // as in kube-controller-manager, where the collector waits for its monitors alone.
    prepare: ({ cache }) => gc.prepare(cache),
    start: ({ signal }) => gc.run(signal),
    // Beside the manager's stop: a manager stopped before its caches synced never starts the
    // collector, whose discovery (on CRD events) must not ask a server that is going away.
    stop: () => gc.stop(),
    initialSync: () => gc.initialSync,
  };
}

/** The collector's state and reconcile; run by {@link garbageCollector}. */
class GarbageCollector {
  private readonly queue = new WorkQueue<string>({
    name: 'garbage-collector',
    rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
  });
  /** By `group|resource`. */
  private readonly watched = new Map<string, Watched>();
  private readonly log: ControllerLog;
  private cache: ManagerCache | undefined;
  /** The discovery running now, and whether another must follow it (a change seen meanwhile). */
  private discovering: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly client: Client,
    private readonly options: GarbageCollectorOptions,
  ) {
    this.log = options.log ?? (() => undefined);
    this.initialSync = new Promise((resolve) => {
      this.initialSynced = resolve;
    });
  }

  /** Settles when the first lists are done, or the collector stopped waiting for them. */
  readonly initialSync: Promise<void>;
  private initialSynced!: () => void;

  /** Keeps the manager's shared cache; the informers are asked for when the collector runs. */
  prepare(cache: ManagerCache): void {
    this.cache = cache;
  }

  /**
   * Discovers the resource types, asks the shared cache for their metadata informers and waits
   * for their first lists: at most `initialSyncTimeoutMs`, then it goes on with the kinds it
   * could list and says which it could not, as kube's ("not all resource monitors could be synced").
   */
  private async begin(signal: AbortSignal): Promise<void> {
    const cache = this.cache;
    if (!cache || this.stopped) return;
    // A failed discovery does not stop the other controllers: the next CRD change or resync retries.
    await this.syncResources().catch((err: unknown) => {
      if (!this.stopped)
        this.log('error', 'garbage collector could not discover the resource types', { error: String(err) });
    });
    // A CRD created, changed or deleted changes what is served: discover again. The server
    // serves (or stops serving) a CRD's kinds before its watchers hear of the change.
    cache.metadataInformer(CustomResourceDefinition).addEventHandler({
      // The first list too: a CRD created since the discovery above is in it.
      onAdd: () => this.rediscover(),
      // A change of its spec (versions, scope, names), not of its status: the resync covers the
      // rare status-only change of what is served (names freed by another CRD).
      onUpdate: (o, n) => {
        if (o.metadata.generation !== n.metadata.generation) this.rediscover();
      },
      onDelete: () => this.rediscover(),
    });
    const timeoutMs = this.options.initialSyncTimeoutMs ?? 30_000;
    const watched = [...this.watched.values()];
    const results = await Promise.allSettled(
      watched.map((w) => w.informer.waitForSync({ timeoutMs, signal, failOnAuth: false })),
    );
    if (signal.aborted) return;
    const unsynced = watched.filter((_, i) => results[i]?.status === 'rejected');
    if (unsynced.length > 0)
      this.log('warn', 'garbage collector: not all resource monitors could be synced, proceeding anyway', {
        unsynced: unsynced.map(
          (w) => `${w.type.plural}${w.type.group ? `.${w.type.version}.${w.type.group}` : ''}`,
        ),
      });
  }

  /** Reconciles until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      await this.begin(signal);
    } finally {
      this.initialSynced();
    }
    if (signal.aborted) {
      this.stopped = true;
      return;
    }
    const n = this.options.workers ?? 4;
    const workers = Array.from({ length: n }, () => this.work(signal));
    const resync = setInterval(() => this.rediscover(), this.options.resyncMs ?? 30_000);
    resync.unref();
    await untilAborted(signal);
    this.stopped = true;
    clearInterval(resync);
    await this.queue.shutdown();
    await Promise.all(workers);
    await this.discovering?.catch(() => undefined);
  }

  /** No discovery from now on (the workers stop with the manager's signal). */
  stop(): void {
    this.stopped = true;
    this.initialSynced();
  }

  /** Discovers again (once more after the one running, when one runs). */
  private rediscover(): void {
    if (this.stopped) return;
    if (this.discovering) {
      this.again = true;
      return;
    }
    this.discovering = (async () => {
      do {
        this.again = false;
        try {
          await this.syncResources();
        } catch (err) {
          if (!this.stopped)
            this.log('error', 'garbage collector could not discover the resource types', {
              error: String(err),
            });
        }
        // A burst of CRD changes (a chart installing dozens) is one more discovery, not one each.
        if (this.again) await new Promise((resolve) => setTimeout(resolve, DISCOVERY_SPACING_MS).unref());
      } while (this.again && !this.stopped);
      this.discovering = undefined;
    })();
  }

  /** Watches each listable, watchable, deletable resource once (Kubernetes' GC reads discovery the same way). */
  private async syncResources(): Promise<void> {
    const cache = this.cache;
    if (!cache) return;
    const { resources, failed } = await this.client.discovery.preferredResources();
    const wanted = new Map<string, DiscoveredResource>();
    for (const type of resources) {
      if (!['list', 'watch', 'delete'].every((v) => type.verbs.includes(v))) continue;
      const id = `${type.group}|${type.plural}`;
      if (!IGNORED.has(id)) wanted.set(id, type);
    }
    if (this.stopped) return;
    // Resources gone or changed (a CRD deleted, or updated to another version or scope); a group
    // whose discovery failed keeps what it had, as Kubernetes' collector does.
    const failedGroups = new Set([...failed.keys()].map((gv) => (gv.includes('/') ? groupOf(gv) : '')));
    for (const [id, w] of this.watched) {
      const t = wanted.get(id);
      if (!t && failedGroups.has(w.type.group)) continue;
      if (t && t.version === w.type.version && t.kind === w.type.kind && t.namespaced === w.type.namespaced)
        continue;
      this.watched.delete(id);
      w.unsubscribe();
      if (!w.shared) void cache.removeMetadataInformer(w.informer);
    }
    for (const [id, type] of wanted) {
      if (this.watched.has(id)) continue;
      const descriptor = descriptorOf(type);
      // As kube's collector reads through the controllers' shared informers where they have one
      // (informerfactory.ForResource), a kind another controller watches whole is not watched
      // twice: its objects carry the metadata the collector reads.
      const shared = cache.existingInformer(descriptor, '') as Informer<PartialObjectMetadata> | undefined;
      if (shared && !shared.store.hasIndex(OWNER_INDEX)) shared.store.addIndex(OWNER_INDEX, ownerUids);
      const informer =
        shared ?? cache.metadataInformer(descriptor, { indexers: { [OWNER_INDEX]: ownerUids } });
      const w: Watched = {
        type,
        descriptor,
        informer,
        shared: shared !== undefined,
        unsubscribe: () => undefined,
      };
      this.watched.set(id, w);
      w.unsubscribe = informer.addEventHandler({
        onAdd: (o) => this.observe(w, undefined, o),
        onUpdate: (old, o) => this.observe(w, old, o),
        onDelete: (o) => this.enqueueDependents(o),
      });
    }
  }

  /**
   * An object seen (added, or updated from `old`). As Kubernetes' graph builder
   * (`processGraphChanges`), it is looked at only when its owner references are new or changed
   * and an owner is not known present — not on every update (a pod's status, a Deployment's
   * rollout): an owner missing from the cache or being deleted is verified by the reconcile, and
   * owners a changed reference no longer names (or no longer blocks) look at their dependents again.
   */
  private observe(w: Watched, old: PartialObjectMetadata | undefined, o: PartialObjectMetadata): void {
    const m = o.metadata;
    const refs = m.ownerReferences ?? [];
    const oldRefs = old?.metadata.ownerReferences;
    if (!old || !sameOwners(oldRefs, refs)) {
      if (refs.length > 0 && !this.ownersPresent(o)) this.queue.add(keyOf(w.type, o));
      // kube's addUnblockedOwnersToDeleteQueue: a foreground owner may now be free to go.
      for (const ref of oldRefs ?? []) {
        if (!refs.some((r) => sameOwners([r], [ref]))) this.enqueueOwner(o, ref);
      }
    }
    if (m.deletionTimestamp) {
      if (m.finalizers?.includes(FOREGROUND) || m.finalizers?.includes(ORPHAN))
        this.queue.add(keyOf(w.type, o));
      // Whoever waits on this object (a foreground owner) looks again.
      for (const ref of m.ownerReferences ?? []) this.enqueueOwner(o, ref);
    }
  }

  /** Whether every owner an object names is in the cache with that UID and not being deleted. */
  private ownersPresent(o: PartialObjectMetadata): boolean {
    for (const ref of o.metadata.ownerReferences ?? []) {
      const owner = this.cachedOwner(o, ref);
      if (!owner || owner.obj.metadata.deletionTimestamp) return false;
    }
    return true;
  }

  private enqueueDependents(owner: PartialObjectMetadata): void {
    for (const d of this.dependentsOf(owner)) this.queue.add(keyOf(d.watched.type, d.obj));
    for (const ref of owner.metadata.ownerReferences ?? []) this.enqueueOwner(owner, ref);
  }

  private enqueueOwner(dependent: PartialObjectMetadata, ref: OwnerReference): void {
    const owner = this.cachedOwner(dependent, ref);
    if (owner) this.queue.add(keyOf(owner.watched.type, owner.obj));
  }

  /** One worker: keys until the queue shuts down (controller-runtime's `processNextWorkItem`). */
  private async work(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        if (await this.reconcile(key)) this.queue.addRateLimited(key);
        else this.queue.forget(key);
      } catch (err) {
        if (!signal.aborted) {
          if (!isConflict(err))
            this.log('warn', 'garbage collection failed; retrying', { key, error: String(err) });
          this.queue.addRateLimited(key);
        }
      } finally {
        this.queue.done(key);
      }
    }
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
    // An owner of a kind discovery does not know (yet: a CRD just created) is kept, and looked at
    // again later, as Kubernetes' collector requeues an owner it cannot map.
    let unknownKind = false;
    for (const ref of refs) {
      const owner = await this.liveOwner(w, obj, ref);
      if (owner === PRESENT) unknownKind = true;
      if (!owner) dangling.push(ref);
      else if (owner.metadata.deletionTimestamp && owner.metadata.finalizers?.includes(FOREGROUND))
        waiting.push(ref);
      else solid.push(ref);
    }
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return unknownKind;
      const gone = new Set([...dangling, ...waiting].map((r) => r.uid));
      await this.patchOwnerReferences(w, obj, (r) => !gone.has(r.uid));
      return unknownKind;
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
        const key = keyOf(w.type, dependent);
        // Once, not on each of the retries that follow.
        if (this.queue.numRequeues(key) === 0)
          this.log('warn', 'owner reference to an unknown kind', { dependent: key, ref });
        return PRESENT;
      }
      return undefined;
    }
    try {
      const descriptor = await this.descriptorAt(r.watched, ref.apiVersion);
      const live = (await this.client
        .api(descriptor, r.watched.type.namespaced ? r.ns : undefined)
        .get(ref.name)) as KubeObject;
      return live.metadata?.uid === ref.uid ? (live as PartialObjectMetadata) : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * The owner's resource at the version its reference names, as Kubernetes' collector reads an
   * owner (`isDangling` maps the reference's own apiVersion): the same object, without a
   * conversion to the preferred version — a CRD's conversion webhook that is down or slow must
   * not hold up a dependent whose owner it need not convert. A version no longer served (from
   * discovery's cache, which every rediscovery refreshes) is read at the watched version instead.
   */
  private async descriptorAt(w: Watched, apiVersion: string): Promise<ResourceDescriptor> {
    const slash = apiVersion.indexOf('/');
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    if (version === w.type.version) return w.descriptor;
    const served = await this.client.discovery.resources(w.type.group, version).catch(() => undefined);
    const t = served?.find((r) => r.kind === w.type.kind && r.plural === w.type.plural);
    return t ? descriptorOf(t) : w.descriptor;
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
