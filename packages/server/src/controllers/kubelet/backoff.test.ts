import { describe, expect, it } from 'vitest';
import { CrashLoopBackOff, goDuration } from './backoff.js';

describe('CrashLoopBackOff', () => {
  it('restarts at once, then waits 10 s doubling to 5 min, counted from each exit', () => {
    const b = new CrashLoopBackOff();
    let now = 0;
    const waits: number[] = [];
    for (let i = 0; i < 9; i++) {
      // The container ran 1 s, then exited: it restarts once its back-off is over.
      now += 1000;
      const wait = b.delay(now, now);
      waits.push(wait);
      now += wait;
      if (wait > 0) expect(b.delay(now - wait, now)).toBe(0);
    }
    expect(waits.map((w) => w / 1000)).toEqual([0, 10, 20, 40, 80, 160, 300, 300, 300]);
    expect(goDuration(b.nominalMs)).toBe('5m0s');
  });

  it('counts the wait from the exit, not from when the kubelet looks', () => {
    const b = new CrashLoopBackOff();
    b.delay(0, 0);
    // Seen 4 s after its exit: 6 s are left of the 10 s.
    expect(b.delay(100_000, 104_000)).toBe(6000);
  });

  it('starts over at 10 s after a container stayed up longer than 10 minutes', () => {
    const b = new CrashLoopBackOff();
    b.delay(0, 0);
    b.delay(1000, 11_000);
    b.delay(12_000, 32_000);
    expect(b.nominalMs).toBe(40_000);
    expect(b.delay(32_000 + 601_000, 32_000 + 601_000)).toBe(0);
    expect(b.nominalMs).toBe(10_000);
  });

  it('scales every duration', () => {
    const b = new CrashLoopBackOff(0.001);
    b.delay(0, 0);
    expect(b.delay(1, 1)).toBe(10);
    expect(goDuration(b.nominalMs)).toBe('10s');
    expect(goDuration(80_000)).toBe('1m20s');
  });
});
