/**
 * A shard's own Lease: the replica announces itself to the ring by holding it (renewed every
 * retry period, as leader election's), and stops reconciling when it cannot renew within the
 * renew deadline — before the sharder, which waits a whole lease duration, moves its objects.
 */
import type { Logger } from 'pino';
import { isNotFound } from '../../api/status.js';
import { type Lease, Lease as LeaseKind } from '../../client/builtin-kinds.js';
import type { Client } from '../../client/client.js';
import { microTime } from '../manager/events.js';
import { abortable } from '../manager/leader-election.js';
import { CONTROLLERS_ANNOTATION, RING_LABEL, type ShardedControllerInfo, shardLeaseName } from './labels.js';

/** Timings of the shard Leases (leader election's ratios). */
export interface LeaseTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** Holds one shard's Lease until stopped; `onLost` when renewing failed for the renew deadline. */
export class ShardLease {
  readonly name: string;
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;
  private held = false;

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
    while (!signal.aborted && !(await this.renew())) await abortable(this.timings.retryPeriodMs, signal);
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
    const signal = this.stopper.signal;
    let last = performance.now();
    while (!signal.aborted) {
      await abortable(this.timings.retryPeriodMs, signal);
      if (signal.aborted) return;
      if (await this.renew()) {
        last = performance.now();
      } else if (performance.now() - last >= this.timings.renewDeadlineMs) {
        this.held = false;
        this.log.error({ lease: this.name }, 'shard lease lost: stopping');
        this.onLost();
        return;
      }
    }
  }

  /** Creates or renews the Lease; false when the server could not be reached or refused. */
  private async renew(): Promise<boolean> {
    const api = this.client.api(LeaseKind, this.namespace);
    const now = microTime();
    const timeoutMs = this.timings.renewDeadlineMs;
    const seconds = Math.max(1, Math.ceil(this.timings.leaseDurationMs / 1000));
    try {
      let current: Lease | undefined;
      try {
        current = await api.get(this.name, { timeoutMs });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const spec = { holderIdentity: this.shard, leaseDurationSeconds: seconds, renewTime: now };
      if (!current) {
        await api.create(
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
          { timeoutMs },
        );
        return true;
      }
      const mine = current.spec?.holderIdentity === this.shard;
      await api.update(
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
        { timeoutMs },
      );
      return true;
    } catch (err) {
      this.log.warn({ err, lease: this.name }, 'could not acquire or renew the shard lease');
      return false;
    }
  }
}
