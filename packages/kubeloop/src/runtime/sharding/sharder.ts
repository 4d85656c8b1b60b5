/**
 * The sharder (run by the ring's elected leader, as kubernetes-controller-sharding's sharder
 * controller): it watches the metadata of every object of the sharded controllers' primary kinds
 * and labels each with the shard the ring gives it. An unassigned object, or one whose owner's
 * Lease expired, gets its new shard at once; one whose owner is live gets the drain label
 * first, and its new shard only after the owner acknowledged by removing both labels. Every
 * write is conditional on the resourceVersion the sharder decided on, so a stale cache can never
 * move an object without the handshake.
 *
 * Children (objects of an owned kind whose controller ownerReference is a primary object) get
 * the shard label of their parent, so the shards' `owns` informers watch only their share too.
 * A child follows its parent's current label — it stays with the old owner while the parent
 * drains, so the old owner's last reconciles still see it — and a parent moving to a new shard
 * has its children relabeled first, so the new owner's cache holds them when it first sees the
 * parent. No handshake of their own: the parent's handshake already decides who reconciles.
 */

import { setMaxListeners } from 'node:events';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { Logger } from 'pino';
import { isConflict, isNotFound } from '../../api/status.js';
import type { Client } from '../../client/client.js';
import type { ResourceDescriptor } from '../../client/descriptor.js';
import type { LabelSelectorInput } from '../../client/options.js';
import type { KubeObject } from '../../client/types.js';
import type { Informer } from '../cache/informer.js';
import type { PartialObjectMetadata } from '../cache/transform.js';
import type { ManagerCache } from '../manager/cache.js';
import { WorkQueue } from '../workqueue/queue.js';
import { ItemExponentialFailureRateLimiter } from '../workqueue/rate-limiter.js';
import { drainLabel, shardLabel } from './labels.js';
import type { Membership } from './membership.js';
import type { ShardingMetrics } from './metrics.js';

/** A sharded controller as the sharder sees it. */
export interface ShardedTarget {
  readonly controller: string;
  readonly kind: ResourceDescriptor;
  readonly namespace: string;
  /** The controller's own selector of primary objects: others are not assigned at all. */
  readonly labelSelector?: LabelSelectorInput;
  /** The kinds the controller `owns`: their children are labeled with their parent's shard. */
  readonly owns?: readonly ResourceDescriptor[];
}

/**
 * The key an object is hashed by: its controller owner's namespace/name when it has one (so that
 * children land on their parent's shard), else its own.
 */
export function shardingKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace ?? '';
  const owner = obj.metadata?.ownerReferences?.find((r) => r.controller);
  const name = owner ? owner.name : (obj.metadata?.name ?? '');
  return ns ? `${ns}/${name}` : name;
}

/** The controller ownerReference of `child` to an object of `kind`, if any. */
export function controllerRefTo(child: KubeObject, kind: ResourceDescriptor): OwnerReference | undefined {
  return child.metadata?.ownerReferences?.find((r) => {
    if (!r.controller || r.kind !== kind.kind) return false;
    const slash = r.apiVersion.indexOf('/');
    return (slash < 0 ? '' : r.apiVersion.slice(0, slash)) === kind.group;
  });
}

/** Index of the sharder's child informers: the uid of the child's controller owner (a primary). */
const PARENT_INDEX = 'sharding.kubeloop.dev/parent';

interface Children {
  kind: ResourceDescriptor;
  informer: Informer<PartialObjectMetadata>;
  remove?: () => void;
}

interface Watched {
  target: ShardedTarget;
  informer: Informer<PartialObjectMetadata>;
  children: Children[];
  shardLabel: string;
  drainLabel: string;
  remove?: () => void;
}

/** Assigns the objects of the sharded controllers while its replica leads the ring. */
export class Sharder {
  private readonly watched: Watched[];
  private queue: WorkQueue<string> | undefined;
  private workers: Promise<void>[] = [];
  private readonly stopper = new AbortController();
  private readonly drainStarted = new Map<string, number>();
  private active = false;
  private ready: boolean;
  private waitTimer: NodeJS.Timeout | undefined;
  private countTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Client,
    cache: ManagerCache,
    private readonly membership: Membership,
    targets: readonly ShardedTarget[],
    private readonly metrics: ShardingMetrics,
    private readonly log: Logger,
    private readonly options: { replicas?: number; waitForReplicasMs: number; workers: number },
  ) {
    this.watched = targets.map((target) => ({
      target,
      informer: cache.metadataInformer(target.kind, {
        namespace: target.namespace,
        ...(target.labelSelector !== undefined && { labelSelector: target.labelSelector }),
      }),
      children: (target.owns ?? []).map((kind) => ({
        kind,
        informer: cache.metadataInformer(kind, {
          namespace: target.namespace,
          indexers: { [PARENT_INDEX]: (c) => controllerRefTo(c, target.kind)?.uid },
        }),
      })),
      shardLabel: shardLabel(target.controller),
      drainLabel: drainLabel(target.controller),
    }));
    // Every worker waits on the queue with this signal.
    setMaxListeners(0, this.stopper.signal);
    // With an expected replica count, wait (up to a lease duration) for that many shards, so a
    // rollout does not assign everything to the first replica up and then move two thirds.
    this.ready = options.replicas === undefined;
  }

  /** Starts assigning: syncs the metadata informers, then follows them and the ring. */
  async start(): Promise<void> {
    this.active = true;
    try {
      const informers = this.watched.flatMap((w) => [w.informer, ...w.children.map((c) => c.informer)]);
      await Promise.all(informers.map((i) => i.waitForSync({ signal: this.stopper.signal })));
    } catch (err) {
      if (!this.active) return;
      throw err;
    }
    if (!this.active) return;
    // Retries are conflicts (a stale cache), not an overloaded server: a per-key backoff only,
    // without the controllers' overall 10 qps bucket, which would hold a crashed shard's objects
    // back for seconds once churn had used up its burst.
    const queue = new WorkQueue<string>({
      name: 'sharder',
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(5, 1_000),
    });
    this.queue = queue;
    this.watched.forEach((w, i) => {
      const add = (o: PartialObjectMetadata) => queue.add(`${i}|${keyOf(o)}`);
      w.remove = w.informer.addEventHandler({
        onAdd: add,
        onUpdate: (old, o) => {
          add(o);
          // Children follow their parent's label.
          if (old.metadata.labels?.[w.shardLabel] !== o.metadata.labels?.[w.shardLabel])
            this.enqueueChildren(i, o);
        },
      });
      w.children.forEach((c, j) => {
        const addChild = (o: PartialObjectMetadata) => queue.add(`${i}:${j}|${keyOf(o)}`);
        c.remove = c.informer.addEventHandler({ onAdd: addChild, onUpdate: (_o, n) => addChild(n) });
      });
    });
    this.membership.onChange(() => {
      if (this.active) this.enqueueAll();
    });
    if (!this.ready) {
      this.waitTimer = setTimeout(() => this.markReady(), this.options.waitForReplicasMs);
    }
    this.countTimer = setInterval(() => this.count(), 1_000);
    this.countTimer.unref?.();
    this.enqueueAll();
    this.workers = Array.from({ length: this.options.workers }, () => this.work(queue));
  }

  async stop(): Promise<void> {
    this.active = false;
    this.stopper.abort();
    clearTimeout(this.waitTimer);
    clearInterval(this.countTimer);
    for (const w of this.watched) {
      w.remove?.();
      for (const c of w.children) c.remove?.();
    }
    void this.queue?.shutdown();
    await Promise.all(this.workers);
    this.metrics.ringObjects.reset();
  }

  private markReady(): void {
    if (this.ready) return;
    this.ready = true;
    clearTimeout(this.waitTimer);
    this.enqueueAll();
  }

  private enqueueAll(): void {
    if (!this.ready && this.membership.ring.shards.length >= (this.options.replicas ?? 0)) this.ready = true;
    // Objects already assigned: the ring is running and this sharder took over from another
    // (which crashed, perhaps with a shard). Waiting for the expected replicas would hold a dead
    // shard's objects back a lease duration more; nothing is assigned twice by not waiting.
    if (
      !this.ready &&
      this.watched.some((w) => w.informer.store.list().some((o) => o.metadata.labels?.[w.shardLabel]))
    )
      this.ready = true;
    if (!this.ready) return;
    this.watched.forEach((w, i) => {
      for (const o of w.informer.store.list()) this.queue?.add(`${i}|${keyOf(o)}`);
      w.children.forEach((c, j) => {
        for (const o of c.informer.store.list()) this.queue?.add(`${i}:${j}|${keyOf(o)}`);
      });
    });
  }

  private enqueueChildren(i: number, parent: PartialObjectMetadata): void {
    const uid = parent.metadata.uid;
    if (!uid) return;
    this.watched[i]!.children.forEach((c, j) => {
      for (const o of c.informer.store.byIndex(PARENT_INDEX, uid)) this.queue?.add(`${i}:${j}|${keyOf(o)}`);
    });
  }

  private count(): void {
    this.metrics.ringObjects.reset();
    for (const w of this.watched) {
      const counts = new Map<string, number>();
      for (const o of w.informer.store.list()) {
        const s = o.metadata.labels?.[w.shardLabel];
        if (s !== undefined) counts.set(s, (counts.get(s) ?? 0) + 1);
      }
      for (const [shard, n] of counts)
        this.metrics.ringObjects.set({ controller: w.target.controller, shard }, n);
    }
  }

  private async work(queue: WorkQueue<string>): Promise<void> {
    for (;;) {
      const item = await queue.get(this.stopper.signal);
      if (item === undefined) return;
      try {
        if (await this.assign(item)) queue.forget(item);
        else queue.addRateLimited(item);
      } catch (err) {
        if (!this.active) return;
        this.log.warn({ err, item }, 'sharder: could not assign; retrying');
        queue.addRateLimited(item);
      } finally {
        queue.done(item);
      }
    }
  }

  /** One object's step towards its shard; false to retry (a conflict). */
  private async assign(item: string): Promise<boolean> {
    if (!this.ready) return true;
    const bar = item.indexOf('|');
    const [i, j] = item.slice(0, bar).split(':');
    const w = this.watched[Number(i)]!;
    const key = item.slice(bar + 1);
    if (j !== undefined) return this.assignChild(w, w.children[Number(j)]!, key);
    const obj = w.informer.store.getByKey(key);
    const desired = this.membership.ring.shardFor(shardingKey(obj ?? ({} as KubeObject)));
    if (!obj || desired === undefined) return true;
    const labels = obj.metadata.labels ?? {};
    const current = labels[w.shardLabel];
    const draining = labels[w.drainLabel] !== undefined;
    const controller = w.target.controller;
    const patch = (set: Record<string, string | null>) =>
      this.client.api(w.target.kind, obj.metadata.namespace ?? '').patch(obj.metadata.name ?? '', {
        metadata: { resourceVersion: obj.metadata.resourceVersion, labels: set },
      } as never);
    try {
      if (current === undefined) {
        await this.moveChildren(w, obj, desired);
        await patch({ [w.shardLabel]: desired, [w.drainLabel]: null });
        const since = this.drainStarted.get(item);
        if (since !== undefined) {
          this.drainStarted.delete(item);
          this.metrics.handoverSeconds.observe({ controller }, (performance.now() - since) / 1000);
        }
        return true;
      }
      if (current === desired) return true;
      if (!this.membership.isLive(current)) {
        // The owner's Lease expired: it stopped reconciling before (its renew deadline is
        // shorter), so the object moves without waiting for an acknowledgement.
        await this.moveChildren(w, obj, desired);
        await patch({ [w.shardLabel]: desired, [w.drainLabel]: null });
        this.drainStarted.delete(item);
        this.metrics.handovers.inc({ controller, shard: current, reason: 'expired' });
        return true;
      }
      if (!draining) {
        await patch({ [w.drainLabel]: 'true' });
        this.drainStarted.set(item, performance.now());
      }
      return true;
    } catch (err) {
      if (isNotFound(err)) return true;
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /**
   * Labels the children of a parent about to be assigned to `shard` first, so that the new
   * owner's `owns` informers hold them when its primary informer first shows the parent. A
   * child that cannot be written now (a conflict) is queued and follows on its own.
   */
  private async moveChildren(w: Watched, parent: PartialObjectMetadata, shard: string): Promise<void> {
    const uid = parent.metadata.uid;
    if (!uid || w.children.length === 0) return;
    const i = this.watched.indexOf(w);
    await Promise.all(
      w.children.map(async (c, j) => {
        for (const child of c.informer.store.byIndex(PARENT_INDEX, uid)) {
          if (child.metadata.labels?.[w.shardLabel] === shard) continue;
          try {
            await this.label(c.kind, child, { [w.shardLabel]: shard });
          } catch (err) {
            if (isNotFound(err)) continue;
            this.queue?.add(`${i}:${j}|${keyOf(child)}`);
            if (!isConflict(err)) throw err;
          }
        }
      }),
    );
  }

  /**
   * One child's step: the shard label of its parent (as the sharder's cache has it, draining or
   * not), or, while the parent has none (new, or between acknowledgement and new shard), the
   * shard the ring gives the parent.
   */
  private async assignChild(w: Watched, c: Children, key: string): Promise<boolean> {
    const child = c.informer.store.getByKey(key);
    const ref = child && controllerRefTo(child, w.target.kind);
    if (!child || !ref) return true;
    const ns = child.metadata.namespace;
    const parent =
      (ns ? w.informer.store.getByKey(`${ns}/${ref.name}`) : undefined) ??
      w.informer.store.getByKey(ref.name);
    const same = parent !== undefined && parent.metadata.uid === ref.uid;
    const shard =
      (same ? parent.metadata.labels?.[w.shardLabel] : undefined) ??
      this.membership.ring.shardFor(shardingKey(same ? parent : child));
    if (shard === undefined || child.metadata.labels?.[w.shardLabel] === shard) return true;
    try {
      await this.label(c.kind, child, { [w.shardLabel]: shard });
      return true;
    } catch (err) {
      if (isNotFound(err)) return true;
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /** A label patch conditional on the resourceVersion it was decided on. */
  private label(kind: ResourceDescriptor, obj: KubeObject, labels: Record<string, string | null>) {
    return this.client.api(kind, obj.metadata?.namespace ?? '').patch(obj.metadata?.name ?? '', {
      metadata: { resourceVersion: obj.metadata?.resourceVersion, labels },
    } as never);
  }
}

const keyOf = (o: KubeObject) => {
  const ns = o.metadata?.namespace ?? '';
  const name = o.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
};
