/**
 * The ring's membership, from the shard Leases labeled with the ring's name: a shard is live
 * while its Lease has a holder and `renewTime + leaseDurationSeconds` is ahead of now. A Lease
 * that stops being renewed expires without any event, so a timer re-reads the Leases at the
 * next expiry.
 */
import type { Lease } from '../../client/builtin-kinds.js';
import type { Informer } from '../cache/informer.js';
import { HashRing } from './ring.js';

/** When the Lease stops counting its holder as live (ms since the epoch), or 0 if it has none. */
export function leaseExpiry(lease: Lease): number {
  const spec = lease.spec;
  if (!spec?.holderIdentity || !spec.renewTime) return 0;
  const renewed = Date.parse(spec.renewTime);
  if (Number.isNaN(renewed)) return 0;
  return renewed + (spec.leaseDurationSeconds ?? 0) * 1000;
}

/** Watches the shard Leases of one ring and keeps its {@link HashRing} of live shards. */
export class Membership {
  private current = new HashRing([]);
  private timer: NodeJS.Timeout | undefined;
  private remove: (() => void) | undefined;
  private readonly listeners: ((ring: HashRing, previous: HashRing) => void)[] = [];

  constructor(
    private readonly leases: Informer<Lease>,
    private readonly virtualNodes: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The ring of the shards live now. */
  get ring(): HashRing {
    return this.current;
  }

  /** Calls `fn` whenever the set of live shards changes. */
  onChange(fn: (ring: HashRing, previous: HashRing) => void): void {
    this.listeners.push(fn);
  }

  /** The Lease of a shard, if any (for Events about it). */
  leaseOf(shard: string): Lease | undefined {
    return this.leases.store.list().find((l) => l.spec?.holderIdentity === shard);
  }

  /** Whether a shard's Lease is held and unexpired right now. */
  isLive(shard: string): boolean {
    const now = this.now();
    return this.leases.store.list().some((l) => l.spec?.holderIdentity === shard && leaseExpiry(l) > now);
  }

  /** Starts following the Leases (their informer must be synced). */
  start(): void {
    const update = () => this.recompute();
    this.remove = this.leases.addEventHandler({ onAdd: update, onUpdate: update, onDelete: update });
    this.recompute();
  }

  stop(): void {
    this.remove?.();
    clearTimeout(this.timer);
  }

  private recompute(): void {
    clearTimeout(this.timer);
    const now = this.now();
    const live: string[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const lease of this.leases.store.list()) {
      const expiry = leaseExpiry(lease);
      if (expiry <= now) continue;
      live.push(lease.spec!.holderIdentity!);
      next = Math.min(next, expiry);
    }
    // Re-read just after the earliest expiry: a shard that died sends no event.
    if (next !== Number.POSITIVE_INFINITY) {
      this.timer = setTimeout(() => this.recompute(), next - now + 10);
      this.timer.unref?.();
    }
    const ring = new HashRing(live, this.virtualNodes);
    if (ring.sameShards(this.current)) return;
    const previous = this.current;
    this.current = ring;
    for (const fn of this.listeners) fn(ring, previous);
  }
}
