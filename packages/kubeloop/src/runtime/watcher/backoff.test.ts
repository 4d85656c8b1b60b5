import { describe, expect, it } from 'vitest';
import { FakeClock, sleep } from '../clock.js';
import { Backoff } from './backoff.js';

describe('Backoff', () => {
  it('doubles from 0.8 s up to 30 s, with up to 100 % jitter, capped', () => {
    const clock = new FakeClock();
    const low = new Backoff({}, clock, () => 0);
    expect(Array.from({ length: 8 }, () => low.next())).toEqual([
      800, 1600, 3200, 6400, 12800, 25600, 30000, 30000,
    ]);
    const high = new Backoff({}, clock, () => 0.999);
    expect(Array.from({ length: 3 }, () => high.next())).toEqual([1599, 3198, 6397]);
    expect(high.next()).toBeLessThanOrEqual(30_000);
    const jittered = new Backoff({}, clock, () => 0.5);
    expect(jittered.next()).toBe(1200);
  });

  it('starts over after a healthy period without failures', () => {
    const clock = new FakeClock();
    const b = new Backoff({ resetAfterMs: 120_000 }, clock, () => 0);
    expect([b.next(), b.next(), b.next()]).toEqual([800, 1600, 3200]);
    clock.advance(119_999);
    expect(b.next()).toBe(6400);
    clock.advance(120_000);
    expect(b.next()).toBe(800);
    expect(b.attempt).toBe(1);
    b.reset();
    expect(b.next()).toBe(800);
  });

  it('rejects nonsense settings', () => {
    expect(() => new Backoff({ initialMs: 100, maxMs: 10 })).toThrow(RangeError);
  });
});

describe('FakeClock and sleep', () => {
  it('runs timers in due order, including timers they set', async () => {
    const clock = new FakeClock(1000);
    const log: string[] = [];
    clock.setTimer(() => log.push('b'), 20);
    const cancelled = clock.setTimer(() => log.push('never'), 5);
    clock.setTimer(() => {
      log.push('a');
      clock.setTimer(() => log.push('c'), 15);
    }, 10);
    cancelled.cancel();
    clock.advance(24);
    expect(log).toEqual(['a', 'b']);
    clock.advance(1);
    expect(log).toEqual(['a', 'b', 'c']);
    expect(clock.now()).toBe(1025);
    expect(clock.pendingTimers).toBe(0);
  });

  it('sleep resolves when due and rejects on abort, leaving no timer', async () => {
    const clock = new FakeClock();
    const done = sleep(clock, 100);
    clock.advance(100);
    await done;
    const ac = new AbortController();
    const aborted = sleep(clock, 100, ac.signal);
    ac.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    expect(clock.pendingTimers).toBe(0);
  });
});
