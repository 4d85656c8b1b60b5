import type { Stream } from '../lib/http.js';
import { objectName } from '../lib/objects.js';
import { percentile } from '../lib/stats.js';
import type { Target } from '../lib/targets.js';

/** Delivery latency of ADDED events to concurrent watchers. */
export interface WatchResult {
  watchers: number;
  events: number;
  /** Over every (watcher, event) pair: from sending the create to the watcher reading its event. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Of the creates themselves (send to response), for comparison. */
  createP50Ms: number;
}

interface Pending {
  sentAt: bigint;
  remaining: number;
  done: () => void;
}

/**
 * Opens `watchers` watches on `namespace`, then creates `warmup + events` objects one at a time,
 * each after every watcher received the previous one, and times each delivery.
 */
export async function runWatch(
  target: Target,
  namespace: string,
  watchers: number,
  events: number,
  warmup: number,
): Promise<WatchResult> {
  const pending = new Map<string, Pending>();
  const latencies: number[] = [];
  let recording = false;
  const onAdded = (name: string, at: bigint) => {
    const p = pending.get(name);
    if (!p) return;
    if (recording) latencies.push(Number(at - p.sentAt) / 1e6);
    if (--p.remaining === 0) {
      pending.delete(name);
      p.done();
    }
  };
  const streams: Stream[] = [];
  try {
    for (let w = 0; w < watchers; w++) streams.push(await target.watch(namespace, onAdded));
    const createMs: number[] = [];
    for (let i = 0; i < warmup + events; i++) {
      recording = i >= warmup;
      const name = objectName(i);
      let done!: () => void;
      const delivered = new Promise<void>((r) => {
        done = r;
      });
      pending.set(name, { sentAt: process.hrtime.bigint(), remaining: watchers, done });
      const res = await target.create(namespace, name);
      if (recording) createMs.push(res.totalMs);
      await withTimeout(delivered, 10_000, `watch event for ${name}`);
    }
    return {
      watchers,
      events,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: percentile(latencies, 100),
      createP50Ms: percentile(createMs, 50),
    };
  } finally {
    for (const s of streams) s.close();
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
