/**
 * Sharded controllers over Leases (`Manager` option `sharding`): every replica holds a shard
 * Lease of its own in a ring; the replica elected sharder assigns each object of the
 * controllers' primary kinds to a live shard by consistent hashing and records it as a label;
 * each replica's primary informers list and watch only their shard's label. Handovers go
 * through the drain handshake (see gate.ts and sharder.ts), so no object is ever reconciled by
 * two replicas at once. Needs nothing but RBAC: Leases (get, list, watch, create, update,
 * delete) in the Leases' namespace, and patch of the primary kinds (for the labels).
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type Lease, Lease as LeaseKind } from '../../client/builtin-kinds.js';
import type { Client } from '../../client/client.js';
import { labelSelectorString } from '../../client/options.js';
import type { KubeObject } from '../../client/types.js';
import type { Informer } from '../cache/informer.js';
import type { ControllerDefinition } from '../controller/builder.js';
import type { ManagerCache } from '../manager/cache.js';
import type { EventRecorder } from '../manager/events.js';
import { LeaderElector } from '../manager/leader-election.js';
import { ShardGate } from './gate.js';
import { defaultShardId, RING_LABEL, sharderLeaseName, validateShardId } from './labels.js';
import { Membership } from './membership.js';
import { ShardingMetrics } from './metrics.js';
import { DEFAULT_VIRTUAL_NODES, type HashRing } from './ring.js';
import { type LeaseTimings, ShardLease } from './shard-lease.js';
import { type ShardedTarget, Sharder } from './sharder.js';

/**
 * Sharding of a manager's controllers.
 *
 * @example
 * ```ts
 * new Manager({ sharding: { name: 'foo-operator', replicas: 3 } }).add(fooController).start();
 * ```
 */
export interface ShardingOptions {
  /** The ring's name: every replica of the operator gives the same. */
  name: string;
  /**
   * Replicas expected (e.g. the Deployment's): a newly elected sharder waits up to a lease
   * duration for that many shards before assigning, so a rollout does not move objects twice.
   */
  replicas?: number;
  /** This replica's shard id, a label value (default: host name plus a random suffix). */
  shardId?: string;
  /** Namespace of the Leases (default: the client's namespace). */
  namespace?: string;
  /** A Lease not renewed for this long counts its shard as dead (default 15 000 ms). */
  leaseDurationMs?: number;
  /** A replica that could not renew its Lease for this long stops (default 10 000 ms). */
  renewDeadlineMs?: number;
  /** Time between renewals (default 2 000 ms). */
  retryPeriodMs?: number;
  /** Points of each shard on the hash ring (default 256). */
  virtualNodes?: number;
  /**
   * Label writes the sharder makes at once, and each replica's acknowledgements of drains
   * (default 16): they set the pace of assigning and moving objects.
   */
  sharderWorkers?: number;
}

/** The replica could not renew its shard Lease: it stopped reconciling; `Manager.start()` rejects with this. */
export class ShardLeaseLostError extends Error {
  constructor(lease: string) {
    super(`shard lease lost: ${lease}`);
    this.name = 'ShardLeaseLostError';
  }
}

/** A manager's sharding: its gates, its shard Lease, the ring, and the sharder when elected. @internal */
export class Sharding {
  readonly shardId: string;
  readonly metrics: ShardingMetrics;
  private readonly timings: LeaseTimings;
  private readonly namespace: string;
  private readonly gates: {
    gate: ShardGate;
    definition: ControllerDefinition<KubeObject>;
    original: ControllerDefinition<KubeObject>;
  }[] = [];
  private membership: Membership | undefined;
  private lease: ShardLease | undefined;
  private elector: LeaderElector | undefined;
  private sharder: Sharder | undefined;
  private campaign: Promise<void> | undefined;
  /** The campaign's client: closed by {@link stop} once the elector released its Lease. */
  private campaignClient: Client | undefined;
  private stopped = false;
  private cache: ManagerCache | undefined;
  private events: EventRecorder | undefined;

  /**
   * `leaseClient`: the shard Lease and the sharder's election renew through it — a client on
   * connections of its own (`Client.withOwnConnections`), so that no renewal waits behind the
   * label writes of the sharder and the gates on `client`'s.
   */
  constructor(
    private readonly client: Client,
    private readonly leaseClient: Client,
    private readonly options: ShardingOptions,
    registry: Registry,
    private readonly log: Logger,
    private readonly onLost: (err: Error) => void,
  ) {
    this.shardId = options.shardId ?? defaultShardId();
    validateShardId(this.shardId);
    this.namespace = options.namespace ?? client.namespace;
    this.timings = {
      leaseDurationMs: options.leaseDurationMs ?? 15_000,
      renewDeadlineMs: options.renewDeadlineMs ?? 10_000,
      retryPeriodMs: options.retryPeriodMs ?? 2_000,
    };
    this.metrics = new ShardingMetrics(registry, () =>
      this.gates.map(({ gate }) => ({
        controller: gate.controller,
        shard: this.shardId,
        objects: gate.size,
      })),
    );
  }

  /** The controller as a shard runs it: watching its shard's label only, reconciles gated. */
  wrap<T extends KubeObject>(definition: ControllerDefinition<T>): ControllerDefinition<T> {
    const gate = new ShardGate(
      definition.name,
      this.shardId,
      this.client,
      this.metrics,
      this.log,
      this.options.sharderWorkers ?? 16,
    );
    const wrapped = gate.wrap(definition);
    this.gates.push({
      gate,
      definition: wrapped as unknown as ControllerDefinition<KubeObject>,
      original: definition as unknown as ControllerDefinition<KubeObject>,
    });
    return wrapped;
  }

  /** Before the caches start: the ring's Lease informer, and the gates on the shard's informers. */
  prepare(cache: ManagerCache, events: EventRecorder): void {
    this.cache = cache;
    this.events = events;
    const leases = cache.informer(LeaseKind, {
      namespace: this.namespace,
      labelSelector: { [RING_LABEL]: this.options.name },
    });
    this.membership = new Membership(leases, this.options.virtualNodes ?? DEFAULT_VIRTUAL_NODES);
    for (const { gate, definition } of this.gates) {
      const informer = cache.informer(definition.kind, {
        namespace: definition.namespace,
        ...(definition.labelSelector !== undefined && { labelSelector: definition.labelSelector }),
      });
      gate.attach(informer as Informer<KubeObject>);
      // Reads in reconciles (`ctx.cache`) go to the shard's informers, not to new unfiltered ones.
      cache.serveReadsFrom(definition.kind, definition.namespace, informer as Informer<KubeObject>);
      for (const w of definition.watches) {
        if (w.relation !== 'owns' || w.metadataOnly) continue;
        const owned = cache.informer(w.kind, {
          namespace: definition.namespace,
          ...(w.labelSelector !== undefined && { labelSelector: w.labelSelector }),
        });
        cache.serveReadsFrom(w.kind, definition.namespace, owned);
      }
    }
  }

  /** Once the caches synced: joins the ring and campaigns to be its sharder. */
  async start(): Promise<void> {
    const membership = this.membership;
    if (!membership) throw new Error('sharding: prepare() first');
    membership.onChange((ring, previous) => this.ringChanged(ring, previous));
    membership.start();
    this.lease = new ShardLease(
      this.leaseClient,
      this.options.name,
      this.shardId,
      this.namespace,
      this.timings,
      () => this.onLost(new ShardLeaseLostError(this.lease?.name ?? '')),
      this.log,
      this.gates.map(({ original }) => ({
        controller: original.name,
        group: original.kind.group,
        version: original.kind.version,
        kind: original.kind.kind,
        namespace: original.namespace,
        ...(original.labelSelector !== undefined && {
          labelSelector: labelSelectorString(original.labelSelector),
        }),
      })),
    );
    await this.lease.start();
    this.campaign = this.runCampaign();
  }

  /** Leaves: stops the sharder and the campaign; `release` deletes the shard Lease (a clean stop). */
  async stop(release: boolean): Promise<void> {
    this.stopped = true;
    await this.elector?.stop(release);
    await this.campaign;
    // Only now: the elector's release (a PUT of the sharder Lease) may outlive its run().
    await this.campaignClient?.close();
    await this.sharder?.stop();
    for (const { gate } of this.gates) gate.detach();
    this.membership?.stop();
    await this.lease?.stop(release);
    this.metrics.liveShards.reset();
  }

  /** Objects watched by this shard, per controller (for the metric and tests). */
  assigned(): Record<string, number> {
    return Object.fromEntries(this.gates.map(({ gate }) => [gate.controller, gate.size]));
  }

  /** Whether this replica is the ring's sharder now. */
  get isSharder(): boolean {
    return this.elector?.isLeader ?? false;
  }

  private async runCampaign(): Promise<void> {
    const targets: ShardedTarget[] = this.gates.map(({ original }) => ({
      controller: original.name,
      kind: original.kind,
      namespace: original.namespace,
      ...(original.labelSelector !== undefined && { labelSelector: original.labelSelector }),
      owns: original.watches.filter((w) => w.relation === 'owns').map((w) => w.kind),
    }));
    // A connection of its own again: a campaign's request that times out closes its connection
    // (HTTP/1.1 cannot cancel one otherwise), and the shard Lease's next renewal must not need a
    // new one — a TLS handshake takes several turns of both event loops, seconds under load.
    const client = this.leaseClient.withOwnConnections();
    this.campaignClient = client;
    // Leadership lost (the sharder could not renew): stop assigning and campaign again.
    while (!this.stopped) {
      const elector = new LeaderElector(
        client,
        {
          id: sharderLeaseName(this.options.name),
          namespace: this.namespace,
          identity: this.shardId,
          ...this.timings,
        },
        {
          onStartedLeading: () => {
            if (!this.cache || !this.membership) return;
            this.sharder = new Sharder(
              this.client,
              this.cache,
              this.membership,
              targets,
              this.metrics,
              this.log,
              {
                ...(this.options.replicas !== undefined && { replicas: this.options.replicas }),
                waitForReplicasMs: this.timings.leaseDurationMs,
                workers: this.options.sharderWorkers ?? 16,
              },
            );
            this.sharder.start().catch((err: unknown) => this.log.error({ err }, 'sharder failed to start'));
          },
          onStoppedLeading: () => {
            void this.sharder?.stop();
            this.sharder = undefined;
          },
        },
        this.log,
      );
      this.elector = elector;
      await elector.run();
    }
  }

  private ringChanged(ring: HashRing, previous: HashRing): void {
    this.metrics.liveShards.set({ ring: this.options.name }, ring.shards.length);
    const joined = ring.shards.filter((s) => !previous.shards.includes(s));
    const left = previous.shards.filter((s) => !ring.shards.includes(s));
    this.log.info({ ring: this.options.name, shards: ring.shards, joined, left }, 'shard ring changed');
    // Only the sharder records Events, so that one change is one Event, not one per replica.
    if (!this.isSharder || !this.events || !this.membership) return;
    for (const [shards, reason, verb] of [
      [joined, 'ShardJoined', 'joined'],
      [left, 'ShardLeft', 'left'],
    ] as const) {
      for (const shard of shards) {
        const lease: Lease | undefined = this.membership.leaseOf(shard);
        if (!lease) continue;
        this.events.event(
          lease,
          reason === 'ShardLeft' ? 'Warning' : 'Normal',
          reason,
          `shard ${shard} ${verb} ring ${this.options.name}: ${ring.shards.length} live`,
        );
      }
    }
  }
}
