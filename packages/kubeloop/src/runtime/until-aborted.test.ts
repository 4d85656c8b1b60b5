import { describe, expect, it } from 'vitest';
import { untilAborted } from './clock.js';

describe('untilAborted', () => {
  it('resolves once the signal aborts, and at once for an aborted one', async () => {
    const ac = new AbortController();
    let done = false;
    const waiting = untilAborted(ac.signal).then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    ac.abort();
    await waiting;
    expect(done).toBe(true);
    await expect(untilAborted(AbortSignal.abort())).resolves.toBeUndefined();
  });
});
