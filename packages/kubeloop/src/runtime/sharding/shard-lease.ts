/**
 * A shard's own Lease: the replica announces itself to the ring by holding it (renewed every
 * retry period, as leader election's), and stops reconciling when it cannot renew within the
 * renew deadline — before the sharder, which waits a whole lease duration, moves its objects.
 * The manager gives it a client on connections of its own (`Client.withOwnConnections`): a
 * renewal must not wait for a connection behind the replica's bulk writes.
 */
import type { Logger } from 'pino';
import { isConflict, isNotFound } from '../../api/status.js';
import { type Lease, Lease as LeaseKind } from '../../client/builtin-kinds.js';
import type { Client } from '../../client/client.js';
import { microTime } from '../manager/events.js';
import { abortable, keepRenewing, timeLeft } from '../manager/leader-election.js';
import { CONTROLLERS_ANNOTATION, RING_LABEL, type ShardedControllerInfo, shardLeaseName } from './labels.js';

/** Timings of the shard Leases (leader election's ratios). */
export interface LeaseTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/**
 * Holds one shard's Lease until stopped; `onLost` when renewing failed for the renew deadline.
 *
 * The deadline counts from the start of the last renewal that succeeded — the `renewTime` it
 * wrote, from which the sharder counts the lease duration — and bounds each request of a
 * renewal, so the replica stops before its Lease can expire even when an answer is slow. The
 * holder renews by updating the Lease it last wrote, without reading it first (client-go's
 * fast path); a conflict falls back to reading it.
 */
export class ShardLease {
  readonly name: string;
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;
  private held = false;
  /** The Lease as this replica last wrote it. */
  private lease: Lease | undefined;
  /** `performance.now()` at the start of the last successful renewal. */
  private renewedAt = 0;

  constructor(
    private readonly client: Client,
    private readonly ring: string,
    readonly shard: string,
    private readonly namespace: string,
    private readonly timings: LeaseTimings,
    private readonly onLost: () => void,
    private readonly log: Logger,
    private readonly controllers: readonly ShardedControllerInfo[] = [],
  ) {
    this.name = shardLeaseName(ring, shard);
  }

  /** Acquires the Lease (resolves once held) and keeps renewing it in the background. */
  async start(): Promise<void> {
    const signal = this.stopper.signal;
    while (!signal.aborted && !(await this.renew(performance.now() + this.timings.renewDeadlineMs)))
      await abortable(this.timings.retryPeriodMs, signal);
    this.held = !signal.aborted;
    this.loop = this.keep();
  }

  /** Stops renewing; `release`: delete the Lease so that the sharder moves the objects at once. */
  async stop(release: boolean): Promise<void> {
    this.stopper.abort();
    await this.loop;
    if (!release || !this.held) return;
    this.held = false;
    try {
      await this.client
        .api(LeaseKind, this.namespace)
        .delete(this.name, { timeoutMs: this.timings.renewDeadlineMs });
    } catch (err) {
      if (!isNotFound(err)) this.log.warn({ err, lease: this.name }, 'could not release the shard lease');
    }
  }

  private async keep(): Promise<void> {
    const end = await keepRenewing(
      this.timings,
      this.stopper.signal,
      () => this.renewedAt,
      (deadline) => this.renew(deadline),
    );
    if (end === 'lost') {
      this.held = false;
      this.log.error({ lease: this.name }, 'shard lease lost: stopping');
      this.onLost();
    }
  }

  /**
   * Creates or renews the Lease, each request bounded by `deadline` (a `performance.now()`
   * time); false when the server could not be reached in time or refused.
   */
  private async renew(deadline: number): Promise<boolean> {
    const api = this.client.api(LeaseKind, this.namespace);
    const started = performance.now();
    const now = microTime();
    const timeoutMs = () => timeLeft(deadline, this.timings.renewDeadlineMs);
    const seconds = Math.max(1, Math.ceil(this.timings.leaseDurationMs / 1000));
    const spec = { holderIdentity: this.shard, leaseDurationSeconds: seconds, renewTime: now };
    try {
      if (this.lease) {
        try {
          this.lease = await api.update(
            { ...this.lease, spec: { ...this.lease.spec, ...spec } },
            { timeoutMs: timeoutMs() },
          );
          this.renewedAt = started;
          return true;
        } catch (err) {
          // Someone else wrote it (or an update of ours that timed out landed): read it.
          if (!isConflict(err) && !isNotFound(err)) throw err;
          this.lease = undefined;
        }
      }
      let current: Lease | undefined;
      try {
        current = await api.get(this.name, { timeoutMs: timeoutMs() });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      if (!current) {
        this.lease = await api.create(
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: {
              name: this.name,
              namespace: this.namespace,
              labels: { [RING_LABEL]: this.ring },
              annotations: { [CONTROLLERS_ANNOTATION]: JSON.stringify(this.controllers) },
            },
            spec: { ...spec, acquireTime: now, leaseTransitions: 0 },
          },
          { timeoutMs: timeoutMs() },
        );
        this.renewedAt = started;
        return true;
      }
      const mine = current.spec?.holderIdentity === this.shard;
      this.lease = await api.update(
        {
          ...current,
          metadata: {
            ...current.metadata,
            labels: { ...current.metadata?.labels, [RING_LABEL]: this.ring },
            annotations: {
              ...current.metadata?.annotations,
              [CONTROLLERS_ANNOTATION]: JSON.stringify(this.controllers),
            },
          },
          spec: {
            ...current.spec,
            ...spec,
            ...(!mine && { acquireTime: now, leaseTransitions: (current.spec?.leaseTransitions ?? 0) + 1 }),
          },
        },
        { timeoutMs: timeoutMs() },
      );
      this.renewedAt = started;
      return true;
    } catch (err) {
      this.log.warn({ err, lease: this.name }, 'could not acquire or renew the shard lease');
      return false;
    }
  }
}
