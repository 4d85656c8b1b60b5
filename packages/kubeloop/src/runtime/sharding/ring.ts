/**
 * The consistent hashing ring of a sharded controller (as kubernetes-controller-sharding's
 * sharder, after Dynamo and Cassandra): every live shard owns many points ("virtual nodes") on a
 * 32-bit circle, and a key belongs to the first point at or after its hash. Adding a shard takes
 * about 1/n of the keys, all from the others; removing one moves only its own keys. Many virtual
 * nodes per shard keep the split even with few shards.
 */
import { createHash } from 'node:crypto';

/** Virtual nodes per shard: with 3 shards the shares stay within a few percent of a third. */
export const DEFAULT_VIRTUAL_NODES = 256;

/** A 32-bit hash of a string (the first bytes of its SHA-1: well spread, and the same in every replica). */
export function hash32(s: string): number {
  return createHash('sha1').update(s).digest().readUInt32BE(0);
}

/**
 * An immutable ring of shards. Build a new one when the live shards change.
 *
 * @example
 * ```ts
 * const ring = new HashRing(['shard-a', 'shard-b', 'shard-c']);
 * ring.shardFor('default/web'); // 'shard-b'
 * ```
 */
export class HashRing {
  /** The shards on the ring, sorted. */
  readonly shards: readonly string[];
  private readonly points: Uint32Array;
  private readonly owners: string[];

  constructor(shards: Iterable<string>, virtualNodes = DEFAULT_VIRTUAL_NODES) {
    this.shards = [...new Set(shards)].sort();
    const tokens: { point: number; shard: string }[] = [];
    for (const shard of this.shards) {
      for (let i = 0; i < virtualNodes; i++) tokens.push({ point: hash32(`${shard}#${i}`), shard });
    }
    // Ties (two tokens on one point) go to the smaller shard name, so every replica agrees.
    tokens.sort((a, b) => a.point - b.point || (a.shard < b.shard ? -1 : a.shard > b.shard ? 1 : 0));
    this.points = Uint32Array.from(tokens, (t) => t.point);
    this.owners = tokens.map((t) => t.shard);
  }

  /** Whether the ring has no shard (nothing can be assigned). */
  get empty(): boolean {
    return this.shards.length === 0;
  }

  /** The shard that owns `key`, or `undefined` on an empty ring. */
  shardFor(key: string): string | undefined {
    return this.shardForHash(hash32(key));
  }

  /** The shard that owns a hash computed with {@link hash32}. */
  shardForHash(h: number): string | undefined {
    const n = this.points.length;
    if (n === 0) return undefined;
    // The first point ≥ h; past the last point the circle wraps to the first.
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.points[mid] as number) < h) lo = mid + 1;
      else hi = mid;
    }
    return this.owners[lo === n ? 0 : lo];
  }

  /** Whether two rings hold the same shards. */
  sameShards(other: HashRing): boolean {
    return this.shards.length === other.shards.length && this.shards.every((s, i) => s === other.shards[i]);
  }
}
