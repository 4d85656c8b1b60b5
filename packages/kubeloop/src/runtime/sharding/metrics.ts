/**
 * Metrics of sharding, per controller and shard, on the manager's registry.
 */
import { Counter, Gauge, Histogram, type Registry } from '../prom-client.js';

/** The sharding metrics of one manager. */
export class ShardingMetrics {
  /** Objects of the primary kind this replica's shard watches (its informer's size). */
  readonly assigned: Gauge<'controller' | 'shard'>;
  /** Objects per shard as the sharder sees them (reported by the sharder's leader only). */
  readonly ringObjects: Gauge<'controller' | 'shard'>;
  /** Live shards of the ring as this replica sees them. */
  readonly liveShards: Gauge<'ring'>;
  /** Reconciles this replica ran as a shard. */
  readonly reconciles: Counter<'controller' | 'shard'>;
  /** Objects handed over: `drained` by their old owner, `expired` (the old owner's Lease had expired). */
  readonly handovers: Counter<'controller' | 'shard' | 'reason'>;
  /** From the drain label set to the new shard assigned (observed by the sharder). */
  readonly handoverSeconds: Histogram<'controller'>;

  /** `assigned`: the objects each sharded controller of this replica watches, read at every scrape. */
  constructor(registry: Registry, assigned: () => { controller: string; shard: string; objects: number }[]) {
    const registers = [registry];
    this.assigned = new Gauge({
      collect() {
        this.reset();
        for (const a of assigned()) this.set({ controller: a.controller, shard: a.shard }, a.objects);
      },
      name: 'kubeloop_sharding_assigned_objects',
      help: 'Objects of the primary kind assigned to this replica’s shard (watched by it).',
      labelNames: ['controller', 'shard'],
      registers,
    });
    this.ringObjects = new Gauge({
      name: 'kubeloop_sharding_ring_objects',
      help: 'Objects per shard as the sharder sees them (sharder leader only).',
      labelNames: ['controller', 'shard'],
      registers,
    });
    this.liveShards = new Gauge({
      name: 'kubeloop_sharding_live_shards',
      help: 'Shards whose Lease is held and unexpired.',
      labelNames: ['ring'],
      registers,
    });
    this.reconciles = new Counter({
      name: 'kubeloop_sharding_reconciles_total',
      help: 'Reconciles this replica ran for the objects of its shard.',
      labelNames: ['controller', 'shard'],
      registers,
    });
    this.handovers = new Counter({
      name: 'kubeloop_sharding_handovers_total',
      help: 'Objects handed over from a shard: drained (acknowledged by the old owner) or expired (its Lease expired).',
      labelNames: ['controller', 'shard', 'reason'],
      registers,
    });
    this.handoverSeconds = new Histogram({
      name: 'kubeloop_sharding_handover_duration_seconds',
      help: 'Seconds from the drain label set to the new shard assigned.',
      labelNames: ['controller'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
  }
}
