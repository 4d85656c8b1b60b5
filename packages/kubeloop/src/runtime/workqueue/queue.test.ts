import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../clock.js';
import { WorkQueueMetrics } from './metrics.js';
import { WorkQueue } from './queue.js';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from './rate-limiter.js';

/** Whether a promise has settled once pending callbacks ran (not a wait for time to pass). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('WorkQueue guarantees', () => {
  it('never hands a key to two workers at once', async () => {
    const q = new WorkQueue<string>({ clock: new FakeClock() });
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('a'); // while it is being processed
    expect(q.length).toBe(0);
    const second = q.get();
    expect(await settled(second)).toBe(false);
    q.done('a');
    expect(await second).toBe('a');
    q.done('a');
    expect(q.length + q.inFlight).toBe(0);
  });

  it('keeps the guarantee under many concurrent workers and random adds', async () => {
    const q = new WorkQueue<number>({ clock: new FakeClock() });
    const active = new Set<number>();
    const processed = new Map<number, number>();
    let overlaps = 0;
    const ac = new AbortController();
    const worker = async () => {
      for (let k = await q.get(ac.signal); k !== undefined; k = await q.get(ac.signal)) {
        if (active.has(k)) overlaps++;
        active.add(k);
        // Yield a few times so that other workers and adds interleave with this one.
        for (let i = 0; i < (k % 3) + 1; i++) await new Promise((r) => setImmediate(r));
        q.add((k * 7 + 3) % 10); // work creates work, also for keys in flight
        active.delete(k);
        processed.set(k, (processed.get(k) ?? 0) + 1);
        q.done(k);
        if ([...processed.values()].reduce((a, b) => a + b, 0) > 500) ac.abort();
      }
    };
    for (let k = 0; k < 10; k++) q.add(k);
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(overlaps).toBe(0);
    expect(processed.size).toBe(10);
  });

  it('coalesces an item added again while it waits', async () => {
    const q = new WorkQueue<string>({ clock: new FakeClock() });
    for (const k of ['a', 'b', 'a', 'a', 'c', 'b']) q.add(k);
    expect(q.length).toBe(3);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['a', 'b', 'c']);
    // Added several times during processing: processed once more, not several times.
    q.add('a');
    q.add('a');
    q.done('a');
    expect(q.length).toBe(1);
    expect(await q.get()).toBe('a');
  });

  it('hands items to waiting workers in the order they arrived', async () => {
    const q = new WorkQueue<string>({ clock: new FakeClock() });
    const w1 = q.get();
    const w2 = q.get();
    q.add('x');
    q.add('y');
    expect(await w1).toBe('x');
    expect(await w2).toBe('y');
  });

  it('adds after a delay, keeping the earliest time asked for', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ clock });
    q.addAfter('a', 100);
    q.addAfter('b', 100);
    q.addAfter('b', 30); // earlier wins
    q.addAfter('c', 10);
    q.addAfter('c', 500); // later loses
    expect(q.delayed).toBe(3);
    clock.advance(9);
    expect(q.length).toBe(0);
    clock.advance(1);
    expect(await q.get()).toBe('c');
    clock.advance(20);
    expect(await q.get()).toBe('b');
    clock.advance(69);
    expect(q.length).toBe(0);
    clock.advance(1);
    expect(await q.get()).toBe('a');
    expect(q.delayed).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    // No delay: at once. A delayed add of an item already queued coalesces when it is due.
    q.addAfter('d', 0);
    expect(q.length).toBe(1);
    q.addAfter('d', 5);
    clock.advance(5);
    expect(q.length).toBe(1);
  });

  it('backs off rate-limited retries per item; forget starts over', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ clock });
    const readyAfter = async (key: string): Promise<number> => {
      const start = clock.now();
      q.addRateLimited(key);
      while (q.length === 0) clock.advance(1);
      const got = await q.get();
      expect(got).toBe(key);
      q.done(key);
      return clock.now() - start;
    };
    expect([await readyAfter('a'), await readyAfter('a'), await readyAfter('a')]).toEqual([5, 10, 20]);
    expect(q.numRequeues('a')).toBe(3);
    expect(await readyAfter('b')).toBe(5); // per item
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    expect(await readyAfter('a')).toBe(5);
  });
});

describe('rate limiters', () => {
  it('per-item exponential: 5 ms doubling up to 1000 s', () => {
    const l = new ItemExponentialFailureRateLimiter<string>();
    const seq = Array.from({ length: 20 }, () => l.when('x'));
    expect(seq.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(seq[17]).toBe(5 * 2 ** 17); // 655.36 s
    expect(seq[18]).toBe(1_000_000);
    expect(seq[19]).toBe(1_000_000);
    expect(l.numRequeues('x')).toBe(20);
    expect(l.when('y')).toBe(5);
    // Far beyond the float range: still the cap.
    for (let i = 0; i < 2000; i++) l.when('x');
    expect(l.when('x')).toBe(1_000_000);
  });

  it('token bucket: a burst of 100 at once, then 10 per second', () => {
    const clock = new FakeClock();
    const b = new BucketRateLimiter<string>({ clock });
    const burst = Array.from({ length: 100 }, (_, i) => b.when(`k${i}`));
    expect(burst.every((d) => d === 0)).toBe(true);
    expect(b.when('k100')).toBeCloseTo(100);
    expect(b.when('k101')).toBeCloseTo(200);
    clock.advance(1000); // 10 tokens back, 2 of which pay the debt
    const next = Array.from({ length: 9 }, (_, i) => b.when(`n${i}`));
    expect(next.slice(0, 8).every((d) => d === 0)).toBe(true);
    expect(next[8]).toBeCloseTo(100);
  });

  it('controller default: the slower of per-item backoff and the bucket', () => {
    const clock = new FakeClock();
    const l = defaultControllerRateLimiter<string>({ clock });
    expect(l.when('a')).toBe(5);
    expect(l.when('a')).toBe(10);
    for (let i = 0; i < 98; i++) l.when(`other-${i}`);
    // The bucket is empty now: a fresh item waits for it rather than its own 5 ms.
    expect(l.when('fresh')).toBeCloseTo(100);
    expect(l.numRequeues('a')).toBe(2);
    l.forget('a');
    expect(l.numRequeues('a')).toBe(0);
  });

  it('MaxOf asks every limiter', () => {
    const a = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    const b = new ItemExponentialFailureRateLimiter<string>(3, 1000);
    const m = new MaxOfRateLimiter(a, b);
    expect([m.when('x'), m.when('x')]).toEqual([3, 6]);
    expect(a.numRequeues('x')).toBe(2);
  });

  it('queue applies the overall bucket across items', () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({
      clock,
      rateLimiter: defaultControllerRateLimiter({ clock, qps: 10, burst: 2 }),
    });
    q.addRateLimited('a');
    q.addRateLimited('b');
    q.addRateLimited('c'); // third within the burst of 2: waits 100 ms for a token
    clock.advance(5);
    expect(q.length).toBe(2);
    clock.advance(94);
    expect(q.length).toBe(2);
    clock.advance(1);
    expect(q.length).toBe(3);
  });
});

describe('shutdown', () => {
  it('drains: queued and in-flight items finish, new ones are refused', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ clock });
    for (const k of ['a', 'b', 'c']) q.add(k);
    q.addAfter('later', 100);
    const a = await q.get();
    q.add('a'); // re-added while in flight: still processed once more while draining
    const drained = q.shutdown({ drain: true });
    expect(q.isShuttingDown).toBe(true);
    expect(q.delayed).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    q.add('refused');
    q.addRateLimited('refused');
    expect(await settled(drained)).toBe(false);
    const seen = [a];
    for (let k = await q.get(); k !== undefined; k = await q.get()) {
      seen.push(k);
      q.done(k);
      if (k === 'c') q.done('a'); // the first one finishes late
    }
    expect(seen).toEqual(['a', 'b', 'c', 'a']);
    await drained;
    expect(q.length + q.inFlight).toBe(0);
    expect(await q.get()).toBeUndefined();
  });

  it('abandons: waiting workers stop at once and queued work is dropped', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ clock });
    const idle = q.get();
    q.add('a');
    expect(await idle).toBe('a');
    q.add('b');
    q.add('a');
    q.addAfter('c', 50);
    const idle2 = q.get(); // gets b
    const idle3 = q.get(); // waits
    await q.shutdown();
    expect(await idle2).toBe('b');
    expect(await idle3).toBeUndefined();
    expect(await q.get()).toBeUndefined();
    expect(q.length).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    q.done('a'); // accepted, not requeued
    q.done('b');
    expect(q.length + q.inFlight).toBe(0);
  });

  it('a drain can be cut short by its signal', async () => {
    const q = new WorkQueue<string>({ clock: new FakeClock() });
    q.add('stuck');
    await q.get();
    const ac = new AbortController();
    const drained = q.shutdown({ drain: true, signal: ac.signal });
    expect(await settled(drained)).toBe(false);
    ac.abort();
    await drained;
  });

  it('get() returns undefined when its signal aborts', async () => {
    const q = new WorkQueue<string>({ clock: new FakeClock() });
    const ac = new AbortController();
    const waiting = q.get(ac.signal);
    ac.abort();
    expect(await waiting).toBeUndefined();
    q.add('x'); // the aborted worker does not swallow it
    expect(await q.get()).toBe('x');
  });
});

describe('metrics', () => {
  it("reports client-go's workqueue metrics to the given registry", async () => {
    const registry = new Registry();
    const metrics = new WorkQueueMetrics({ registry });
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 'foos', clock, metrics });
    const value = async (name: string, suffix = '') => {
      const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
      const v = (m as { values: { value: number; metricName?: string; labels: Record<string, unknown> }[] })
        .values;
      return v.find((x) => (x.metricName ?? name) === name + suffix && x.labels.name === 'foos')?.value;
    };
    q.add('a');
    q.add('b');
    q.add('a');
    expect(await value('workqueue_adds_total')).toBe(2);
    expect(await value('workqueue_depth')).toBe(2);
    clock.advance(250);
    const a = await q.get();
    expect(await value('workqueue_depth')).toBe(1);
    expect(await value('workqueue_queue_duration_seconds', '_sum')).toBeCloseTo(0.25);
    clock.advance(2000);
    expect(await value('workqueue_unfinished_work_seconds')).toBeCloseTo(2);
    expect(await value('workqueue_longest_running_processor_seconds')).toBeCloseTo(2);
    q.done(a!);
    expect(await value('workqueue_work_duration_seconds', '_count')).toBe(1);
    expect(await value('workqueue_work_duration_seconds', '_sum')).toBeCloseTo(2);
    q.addRateLimited('c');
    q.addAfter('d', 10);
    expect(await value('workqueue_retries_total')).toBe(2);
    const text = await registry.metrics();
    expect(text).toContain('workqueue_depth{name="foos",controller="foos"} 1');
    expect(text).toContain(
      'workqueue_queue_duration_seconds_bucket{le="1e-8",name="foos",controller="foos"}',
    );
    await q.shutdown();
    expect(await value('workqueue_depth')).toBe(0);
    // A second set of metrics in the same registry is a mistake the caller hears about.
    expect(() => new WorkQueueMetrics({ registry })).toThrow();
  });
});
