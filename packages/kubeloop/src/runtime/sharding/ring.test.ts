import { describe, expect, it } from 'vitest';
import { HashRing } from './ring.js';

const keys = Array.from({ length: 3_000 }, (_, i) => `ns-${i % 7}/widget-${i}`);
const assign = (ring: HashRing) => new Map(keys.map((k) => [k, ring.shardFor(k)!]));
const moved = (a: Map<string, string>, b: Map<string, string>) => keys.filter((k) => a.get(k) !== b.get(k));

describe('HashRing', () => {
  it('splits 3,000 keys over 3 shards within ±15 % of a third each', () => {
    const counts = new Map<string, number>();
    for (const s of assign(new HashRing(['shard-a', 'shard-b', 'shard-c'])).values()) {
      counts.set(s, (counts.get(s) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(['shard-a', 'shard-b', 'shard-c']);
    for (const n of counts.values()) {
      expect(n).toBeGreaterThanOrEqual(1_000 * 0.85);
      expect(n).toBeLessThanOrEqual(1_000 * 1.15);
    }
  });

  it('moves about a quarter of the keys, all to the new shard, when a fourth shard joins', () => {
    const before = assign(new HashRing(['shard-a', 'shard-b', 'shard-c']));
    const after = assign(new HashRing(['shard-a', 'shard-b', 'shard-c', 'shard-d']));
    const m = moved(before, after);
    expect(m.length).toBeGreaterThan(3_000 * 0.25 * 0.8);
    expect(m.length).toBeLessThan(3_000 * 0.25 * 1.2);
    for (const k of m) expect(after.get(k)).toBe('shard-d');
  });

  it('moves only the keys of a shard that leaves', () => {
    const before = assign(new HashRing(['shard-a', 'shard-b', 'shard-c']));
    const after = assign(new HashRing(['shard-a', 'shard-c']));
    const m = moved(before, after);
    expect(m.length).toBe(keys.filter((k) => before.get(k) === 'shard-b').length);
    for (const k of m) expect(before.get(k)).toBe('shard-b');
  });

  it('agrees whatever order the shards are given in, and assigns nothing on an empty ring', () => {
    const a = assign(new HashRing(['x', 'y', 'z']));
    const b = assign(new HashRing(['z', 'x', 'y']));
    expect(moved(a, b)).toEqual([]);
    expect(new HashRing([]).shardFor('default/web')).toBeUndefined();
  });
});
