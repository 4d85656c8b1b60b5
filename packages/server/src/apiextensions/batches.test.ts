import { describe, expect, test } from 'vitest';
import { inOrderBatches } from './batches.js';

/** A batch run whose settling the test decides: each call is kept with its resolve/reject. */
function controlled() {
  const calls: { index: number; resolve: (v: string) => void; reject: (e: unknown) => void }[] = [];
  const run = (index: number) =>
    new Promise<string>((resolve, reject) => {
      calls.push({ index, resolve, reject });
    });
  return { calls, run };
}

/** Lets the promise callbacks queued so far run. */
const flush = () => new Promise((r) => setImmediate(r));

describe('inOrderBatches', () => {
  test('keeps at most `inFlight` batches running, starts the next in order as one settles', async () => {
    const { calls, run } = controlled();
    const all = inOrderBatches(5, run, 2);
    expect(calls.map((c) => c.index)).toEqual([0, 1]);
    calls[1]!.resolve('b');
    await flush();
    expect(calls.map((c) => c.index)).toEqual([0, 1, 2]);
    calls[0]!.resolve('a');
    await flush();
    expect(calls.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    calls[2]!.resolve('c');
    calls[3]!.resolve('d');
    await flush();
    calls[4]!.resolve('e');
    await expect(all).resolves.toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  test('after a failure starts nothing more and rejects with the first failing batch in order', async () => {
    const { calls, run } = controlled();
    const all = inOrderBatches(6, run, 3);
    all.catch(() => undefined);
    calls[2]!.reject(new Error('batch 2'));
    await flush();
    // Batch 1, started before batch 2 failed, still runs, and its failure comes first.
    expect(calls.map((c) => c.index)).toEqual([0, 1, 2]);
    calls[0]!.resolve('a');
    calls[1]!.reject(new Error('batch 1'));
    await expect(all).rejects.toThrow('batch 1');
    expect(calls).toHaveLength(3);
  });

  test('no batch: an empty result', async () => {
    await expect(inOrderBatches(0, () => Promise.resolve(1))).resolves.toEqual([]);
  });
});
