import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { tuneOperatorHeap } from './young-generation.js';

// A file of its own: the test file's process must not have had its young generation capped before.
const youngMb = () =>
  (v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 2 ** 20;

describe('tuneOperatorHeap', () => {
  it('keeps the young generation at the cap while survivors accumulate, as an entry point wants it', async () => {
    const before = youngMb();
    tuneOperatorHeap();
    // Survivors of many scavenges: what makes V8 double the young generation (to 32 MB).
    const keep: unknown[] = [];
    for (let r = 0; r < 150; r++) {
      const batch = Array.from({ length: 20_000 }, (_, i) => ({ i, s: `x${i}`, o: { k: i } }));
      keep.push(batch.slice(0, 300));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(keep).toHaveLength(150);
    expect(youngMb()).toBeLessThanOrEqual(Math.max(before, 8));
  });
});
