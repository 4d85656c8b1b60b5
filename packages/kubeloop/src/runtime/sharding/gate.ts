/**
 * A shard's side of one sharded controller: its primary informer watches only the objects
 * labeled with the shard, and a gate around the reconcile makes the drain handshake safe. When
 * the sharder sets the drain label on an object, the gate closes for it (queued and requeued
 * runs are skipped), waits for its running reconcile to end, then acknowledges by removing the
 * drain and shard labels. The gate opens again only if the object comes back to this shard —
 * so a new owner never starts while the old one still reconciles. The controller's `owns`
 * informers are narrowed to the shard's label too: the sharder labels children as their parent.
 */
import type { Logger } from 'pino';
import { isConflict, isNotFound } from '../../api/status.js';
import type { Client } from '../../client/client.js';
import type { ResourceDescriptor } from '../../client/descriptor.js';
import { labelSelectorString } from '../../client/options.js';
import type { KubeObject } from '../../client/types.js';
import type { Informer } from '../cache/informer.js';
import type { ControllerDefinition, WatchSpec } from '../controller/builder.js';
import { objectKey } from '../keys.js';
import { labelingChildren } from './child-labels.js';
import { drainLabel, shardLabel } from './labels.js';
import type { ShardingMetrics } from './metrics.js';

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/** The shard's gate for one controller. */
export class ShardGate {
  readonly shardLabel: string;
  readonly drainLabel: string;
  /** Keys this shard must not reconcile now: draining, or handed over and not back. */
  private readonly closed = new Set<string>();
  /** Keys whose acknowledgement is under way. */
  private readonly draining = new Set<string>();
  /** Keys acknowledged: their leaving the informer is a handover, not a deletion. */
  private readonly acked = new Set<string>();
  private readonly running = new Map<string, number>();
  private readonly idleWaiters = new Map<string, (() => void)[]>();
  private informer: Informer<KubeObject> | undefined;
  private kind: ResourceDescriptor | undefined;
  private remove: (() => void) | undefined;
  private stopped = false;
  private readonly acks: Limiter;

  /** `concurrency`: acknowledgements written at once. */
  constructor(
    readonly controller: string,
    readonly shard: string,
    private readonly client: Client,
    private readonly metrics: ShardingMetrics,
    private readonly log: Logger,
    concurrency = 16,
  ) {
    this.acks = new Limiter(concurrency);
    this.shardLabel = shardLabel(controller);
    this.drainLabel = drainLabel(controller);
  }

  /** The definition with its primary informer narrowed to this shard and its reconciles gated. */
  wrap<T extends KubeObject>(d: ControllerDefinition<T>): ControllerDefinition<T> {
    this.kind = d.kind as ResourceDescriptor;
    const own = `${this.shardLabel}=${this.shard}`;
    const existing = d.labelSelector === undefined ? '' : labelSelectorString(d.labelSelector);
    const owns = d.watches.filter((w) => w.relation === 'owns').map((w) => w.kind);
    let plain: Client | undefined;
    let labeling: Client | undefined;
    const reconcileFn: ControllerDefinition<T>['reconcileFn'] = async (obj, ctx) => {
      const key = objectKey(obj);
      // Synchronous up to `begin`: a drain that starts later waits for this run.
      if (!this.admits(key, obj)) return undefined;
      this.begin(key);
      try {
        if (owns.length === 0) return await d.reconcileFn(obj, ctx);
        // Children it creates carry this shard's label from the start (see child-labels.ts).
        if (plain !== ctx.client) {
          plain = ctx.client;
          labeling = labelingChildren(
            ctx.client,
            d.kind as ResourceDescriptor,
            owns,
            this.shardLabel,
            this.shard,
          );
        }
        return await d.reconcileFn(obj, { ...ctx, client: labeling! });
      } finally {
        this.end(key);
      }
    };
    const goneFn: ControllerDefinition<T>['goneFn'] = d.goneFn
      ? async (request, ctx, last) => {
          const key = request.namespace ? `${request.namespace}/${request.name}` : request.name;
          if (this.closed.has(key)) return undefined;
          this.begin(key);
          try {
            return await d.goneFn!(request, ctx, last);
          } finally {
            this.end(key);
          }
        }
      : undefined;
    const narrow = (selector: WatchSpec['labelSelector']) => {
      const s = selector === undefined ? '' : labelSelectorString(selector);
      return s ? `${s},${own}` : own;
    };
    return Object.freeze({
      ...d,
      labelSelector: existing ? `${existing},${own}` : own,
      // Children carry their parent's shard label (the sharder's): each shard caches its own.
      watches: d.watches.map((w) =>
        w.relation === 'owns' ? { ...w, labelSelector: narrow(w.labelSelector) } : w,
      ),
      reconcileFn,
      ...(goneFn && { goneFn }),
    });
  }

  /** Follows the shard's primary informer for drain requests (before it starts, so its initial list counts). */
  attach(informer: Informer<KubeObject>): void {
    this.informer = informer;
    this.remove = informer.addEventHandler({
      onAdd: (o) => this.seen(o, true),
      onUpdate: (_old, o) => this.seen(o, false),
      onDelete: (o) => {
        const key = objectKey(o);
        if (this.acked.has(key)) return;
        // A real deletion while ours: nothing will be handed over, the gone handler may run.
        this.closed.delete(key);
      },
    });
  }

  /** Objects this shard watches now. */
  get size(): number {
    return this.informer?.store.list().length ?? 0;
  }

  detach(): void {
    this.stopped = true;
    this.remove?.();
  }

  private admits(key: string, obj: KubeObject): boolean {
    const labels = obj.metadata?.labels ?? {};
    return (
      !this.closed.has(key) && labels[this.shardLabel] === this.shard && labels[this.drainLabel] === undefined
    );
  }

  private begin(key: string): void {
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    this.metrics.reconciles.inc({ controller: this.controller, shard: this.shard });
  }

  private end(key: string): void {
    const n = (this.running.get(key) ?? 1) - 1;
    if (n > 0) {
      this.running.set(key, n);
      return;
    }
    this.running.delete(key);
    for (const w of this.idleWaiters.get(key) ?? []) w();
    this.idleWaiters.delete(key);
  }

  private idle(key: string): Promise<void> {
    if (!this.running.has(key)) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.idleWaiters.get(key) ?? [];
      list.push(resolve);
      this.idleWaiters.set(key, list);
    });
  }

  private seen(o: KubeObject, added: boolean): void {
    const key = objectKey(o);
    const labels = o.metadata?.labels ?? {};
    if (labels[this.shardLabel] !== this.shard) return;
    if (labels[this.drainLabel] !== undefined) {
      void this.drain(key);
      return;
    }
    // Back on this shard after a handover: the object left the informer since, so no run of
    // the previous stay can still be queued against it.
    if (added && !this.draining.has(key)) {
      this.closed.delete(key);
      this.acked.delete(key);
    }
  }

  /** Closes the gate for `key`, waits for its reconcile, and acknowledges the drain. */
  private async drain(key: string): Promise<void> {
    if (this.draining.has(key)) return;
    this.closed.add(key);
    this.draining.add(key);
    try {
      await this.idle(key);
      for (let attempt = 0; !this.stopped; attempt++) {
        // A few at once: the drain of a thousand objects must not open a thousand connections
        // (each a TLS handshake the server and this replica make while everything else waits).
        if (await this.acks.run(() => this.acknowledge(key))) return;
        await pause(Math.min(1_000, 20 * 2 ** attempt));
      }
    } finally {
      this.draining.delete(key);
    }
  }

  /** One attempt to acknowledge `key`'s drain; true once nothing is left to do. */
  private async acknowledge(key: string): Promise<boolean> {
    if (this.stopped) return true;
    // The newest state the shard has: the acknowledgement is conditional on it.
    const current = this.informer?.store.getByKey(key);
    const labels = current?.metadata?.labels ?? {};
    if (!current || labels[this.shardLabel] !== this.shard || labels[this.drainLabel] === undefined)
      return true;
    const { namespace = '', name = '', resourceVersion } = current.metadata ?? {};
    try {
      await this.client.api(this.kind!, namespace).patch(name, {
        metadata: { resourceVersion, labels: { [this.shardLabel]: null, [this.drainLabel]: null } },
      } as never);
      this.acked.add(key);
      this.metrics.handovers.inc({ controller: this.controller, shard: this.shard, reason: 'drained' });
      return true;
    } catch (err) {
      if (isNotFound(err)) return true;
      if (!isConflict(err))
        this.log.warn({ err, namespace, name }, 'could not acknowledge a drain; retrying');
      return false;
    }
  }
}

/** Runs at most `limit` tasks at once; the others wait in order. */
class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot passes to the next waiter, or frees.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
