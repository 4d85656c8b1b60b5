/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection`: the
 * leader renews the Lease every retry period; others take it over once it was not renewed for
 * a lease duration (measured on their own clock from when they last saw it change, so clock
 * skew between machines does not matter). Writes use the Lease's resourceVersion, so two
 * candidates can never both win.
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { isAlreadyExists, isConflict, isNotFound } from '../../api/status.js';
import type { Lease } from '../../client/builtin-kinds.js';
import { Lease as LeaseKind } from '../../client/builtin-kinds.js';
import type { Client } from '../../client/client.js';
import { microTime } from './events.js';

/**
 * Leader election settings (client-go's defaults: 15 s / 10 s / 2 s).
 *
 * @example
 * ```ts
 * new Manager({ leaderElection: { id: 'foo-operator', namespace: 'foo-system' } });
 * ```
 */
export interface LeaderElectionOptions {
  /** Name of the Lease. */
  id: string;
  /** Namespace of the Lease (default: the client's namespace). */
  namespace?: string;
  /** This candidate's identity (default: host name plus a random suffix). */
  identity?: string;
  /** How long a Lease not renewed stays with its holder (default 15 000 ms). */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before giving up leadership (default 10 000 ms). */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew (default 2 000 ms). */
  retryPeriodMs?: number;
  /** Release the Lease on a clean shutdown, so that another candidate takes over at once (default true). */
  releaseOnCancel?: boolean;
}

interface Record {
  holder: string;
  renewTime: string;
  transitions: number;
}

const sameRecord = (a: Record | undefined, b: Record) =>
  a !== undefined && a.holder === b.holder && a.renewTime === b.renewTime && a.transitions === b.transitions;

/**
 * The renew rhythm of the leader elector and the shard leases (client-go's renew loop): calls
 * `renew(deadline)` every retry period; after a failure, retries every retry period until the
 * renew deadline — counted from `renewedAt()`, the start of the last renewal that succeeded (the
 * renewTime others count the lease from) — and not past it. `'lost'` once the deadline passed or
 * `held()` says the lease is someone else's; `'stopped'` when `signal` aborts.
 */
export async function keepRenewing(
  timings: { retryPeriodMs: number; renewDeadlineMs: number },
  signal: AbortSignal,
  renewedAt: () => number,
  renew: (deadline: number) => Promise<boolean>,
  held: () => boolean = () => true,
): Promise<'lost' | 'stopped'> {
  let wait = timings.retryPeriodMs;
  while (!signal.aborted) {
    await abortable(wait, signal);
    if (signal.aborted) break;
    const deadline = renewedAt() + timings.renewDeadlineMs;
    if (await renew(deadline)) {
      wait = timings.retryPeriodMs;
      continue;
    }
    wait = Math.min(timings.retryPeriodMs, deadline - performance.now());
    if (!held() || wait <= 0) return 'lost';
  }
  return 'stopped';
}

/** A renewal request's timeout: what is left before `deadline` (a `performance.now()` time), at most `capMs`. */
export const timeLeft = (deadline: number, capMs: number) =>
  Math.max(1, Math.min(capMs, deadline - performance.now()));

/**
 * Waits `ms`, or less when `signal` aborts (resolving, not rejecting: a stopped renew loop just
 * ends). Shared by the leader elector and the shard leases, which renew on the same rhythm.
 */
export const abortable = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * One candidate. `run()` campaigns until it leads, calls `onStartedLeading`, renews, and calls
 * `onStoppedLeading` when it loses the Lease; `stop()` ends it (releasing the Lease if asked).
 */
export class LeaderElector {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly namespace: string;
  private observed: Record | undefined;
  private observedAt = 0;
  private lease: Lease | undefined;
  private leading = false;
  /** `performance.now()` at the start of the last attempt that acquired or renewed the Lease. */
  private renewedAt = 0;
  private readonly controller = new AbortController();
  private done: Promise<void> | undefined;

  constructor(
    private readonly client: Client,
    private readonly options: LeaderElectionOptions,
    private readonly callbacks: {
      onStartedLeading: () => void;
      onStoppedLeading: () => void;
      onNewLeader?: (identity: string) => void;
    },
    private readonly log: Logger,
  ) {
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.namespace = options.namespace ?? client.namespace;
    if (this.leaseDurationMs <= this.renewDeadlineMs) {
      throw new RangeError('leaseDurationMs must be greater than renewDeadlineMs');
    }
    if (this.renewDeadlineMs <= this.retryPeriodMs * 1.2) {
      throw new RangeError('renewDeadlineMs must be greater than retryPeriodMs × 1.2');
    }
  }

  /** Whether this candidate holds the Lease now. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Campaigns and leads until `stop()` or until leadership is lost. */
  run(): Promise<void> {
    this.done ??= this.loop();
    return this.done;
  }

  /**
   * Ends the campaign or leadership. `release`: give the Lease up (a clean shutdown) so that
   * another candidate takes it at its next retry; otherwise it expires after the lease duration.
   */
  async stop(release: boolean): Promise<void> {
    this.controller.abort();
    await this.done;
    if (this.leading && release && (this.options.releaseOnCancel ?? true)) await this.release();
    this.leading = false;
  }

  private async loop(): Promise<void> {
    const signal = this.controller.signal;
    // Acquire: retry with jitter (×1.2) until leading.
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew()) break;
      await abortable(this.retryPeriodMs * (1 + Math.random() * 0.2), signal);
    }
    if (signal.aborted) return;
    this.leading = true;
    this.log.info({ lease: this.options.id, identity: this.identity }, 'became leader');
    this.callbacks.onStartedLeading();
    const end = await keepRenewing(
      { retryPeriodMs: this.retryPeriodMs, renewDeadlineMs: this.renewDeadlineMs },
      signal,
      () => this.renewedAt,
      (deadline) => this.tryAcquireOrRenew(deadline),
      () => this.leading,
    );
    if (end === 'lost') {
      this.leading = false;
      this.log.error({ lease: this.options.id, identity: this.identity }, 'leader election lost');
      this.callbacks.onStoppedLeading();
    }
  }

  private leaseSeconds(): number {
    return Math.max(1, Math.ceil(this.leaseDurationMs / 1000));
  }

  /** One attempt, each request bounded by `deadline` (a `performance.now()` time). */
  private async tryAcquireOrRenew(deadline = performance.now() + this.renewDeadlineMs): Promise<boolean> {
    const api = this.client.api(LeaseKind, this.namespace);
    const started = performance.now();
    const now = microTime();
    const timeout = () => ({ timeoutMs: timeLeft(deadline, this.renewDeadlineMs) });
    // client-go's fast path: the leader updates the Lease it last wrote without reading it; any
    // failure (a conflict: someone else wrote it) falls back to reading it.
    const lease = this.leading ? this.lease : undefined;
    if (lease?.spec) {
      try {
        this.lease = await api.update({ ...lease, spec: { ...lease.spec, renewTime: now } }, timeout());
        this.see({ holder: this.identity, renewTime: now, transitions: lease.spec.leaseTransitions ?? 0 });
        this.renewedAt = started;
        return true;
      } catch (err) {
        if (!isConflict(err)) this.log.warn({ err, lease: this.options.id }, 'could not renew the lease');
      }
    }
    try {
      let current: Lease;
      try {
        current = await api.get(this.options.id, timeout());
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.lease = await api.create(
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.options.id, namespace: this.namespace },
            spec: {
              holderIdentity: this.identity,
              leaseDurationSeconds: this.leaseSeconds(),
              acquireTime: now,
              renewTime: now,
              leaseTransitions: 0,
            },
          },
          timeout(),
        );
        this.see({ holder: this.identity, renewTime: now, transitions: 0 });
        this.renewedAt = started;
        return true;
      }
      const spec = current.spec ?? {};
      const record: Record = {
        holder: spec.holderIdentity ?? '',
        renewTime: spec.renewTime ?? '',
        transitions: spec.leaseTransitions ?? 0,
      };
      if (!sameRecord(this.observed, record)) this.see(record);
      const mine = record.holder === this.identity;
      if (!mine) {
        this.leading = false;
        if (record.holder !== '' && performance.now() < this.observedAt + this.leaseDurationMs) return false;
      }
      const transitions = mine ? record.transitions : record.transitions + 1;
      this.lease = await api.update(
        {
          ...current,
          spec: {
            ...spec,
            holderIdentity: this.identity,
            leaseDurationSeconds: this.leaseSeconds(),
            acquireTime: mine ? (spec.acquireTime ?? now) : now,
            renewTime: now,
            leaseTransitions: transitions,
          },
        },
        timeout(),
      );
      this.see({ holder: this.identity, renewTime: now, transitions });
      this.renewedAt = started;
      return true;
    } catch (err) {
      if (!isConflict(err) && !isAlreadyExists(err)) {
        this.log.warn({ err, lease: this.options.id }, 'could not acquire or renew the lease');
      }
      return false;
    }
  }

  private see(record: Record): void {
    if (this.observed?.holder !== record.holder && record.holder !== '') {
      this.callbacks.onNewLeader?.(record.holder);
    }
    this.observed = record;
    this.observedAt = performance.now();
  }

  private async release(): Promise<void> {
    const lease = this.lease;
    if (!lease) return;
    const now = microTime();
    try {
      await this.client.api(LeaseKind, this.namespace).update(
        {
          ...lease,
          spec: {
            ...lease.spec,
            holderIdentity: '',
            leaseDurationSeconds: 1,
            acquireTime: now,
            renewTime: now,
          },
        },
        { timeoutMs: this.renewDeadlineMs },
      );
      this.log.info({ lease: this.options.id, identity: this.identity }, 'released the lease');
    } catch (err) {
      this.log.warn({ err, lease: this.options.id }, 'could not release the lease');
    }
  }
}
