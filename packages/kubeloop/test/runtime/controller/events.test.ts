/**
 * The event recorder against the local control plane: events are written one request at a time,
 * as client-go's single event goroutine writes them (not one connection per event), a few at a
 * time while a large backlog drains, and every event and series still lands.
 */
import { type Client, EventsV1Event } from 'kubeloop/client';
import { EventRecorder } from 'kubeloop/runtime';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type RuntimeEnv, startRuntimeEnv } from './helpers.js';

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv();
});
afterAll(() => t.stop());

/** The client, with the event writes it sends counted while they are in flight. */
function counting(client: Client): { client: Client; peak: () => number; writes: () => number } {
  let inFlight = 0;
  let peak = 0;
  let writes = 0;
  const wrap =
    <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      inFlight++;
      writes++;
      peak = Math.max(peak, inFlight);
      try {
        return await fn(...a);
      } finally {
        inFlight--;
      }
    };
  const proxy = new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== 'api') return Reflect.get(target, prop, receiver);
      return (...args: Parameters<Client['api']>) => {
        const api = target.api(...args);
        return new Proxy(api, {
          get(a, p, r) {
            const v = Reflect.get(a, p, r) as unknown;
            return (p === 'create' || p === 'patch') && typeof v === 'function'
              ? wrap((v as (...x: unknown[]) => Promise<unknown>).bind(a))
              : v;
          },
        });
      };
    },
  });
  return { client: proxy, peak: () => peak, writes: () => writes };
}

/** A recorder of the test's operator, writing through `client`. */
const recorderFor = (client: Client) =>
  new EventRecorder(client, {
    reportingController: 'burst-operator',
    reportingInstance: 'burst-operator-1',
    log: pino({ level: 'silent' }),
  });

describe('EventRecorder', () => {
  it('writes a burst of events one at a time, every one of them and every series', async () => {
    const ns = 'ev-burst';
    await t.namespace(ns);
    const c = counting(t.client);
    const recorder = recorderFor(c.client);
    const objects = Array.from({ length: 60 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: ns, uid: `uid-${i}` },
    }));
    // Each object twice: a new Event, then its series of 2.
    for (const o of objects) recorder.forObject(o).normal('Synced', 'synced');
    for (const o of objects) recorder.forObject(o).normal('Synced', 'synced');
    await recorder.flush();

    expect(c.writes()).toBe(120);
    expect(c.peak()).toBe(1);
    const events = await eventually(async () => {
      const items = (await t.client.api(EventsV1Event, ns).list()).items;
      return items.length === 60 ? items : undefined;
    });
    expect(events.every((e) => e.series?.count === 2 && e.reason === 'Synced')).toBe(true);
    expect(new Set(events.map((e) => e.regarding?.name)).size).toBe(60);
  });

  it('writes a backlog of hundreds a few at a time, then one at a time again, dropping none', async () => {
    const ns = 'ev-backlog';
    await t.namespace(ns);
    const c = counting(t.client);
    const recorder = recorderFor(c.client);
    const cm = (i: number) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: ns, uid: `uid-${i}` },
    });
    for (let i = 0; i < 400; i++) recorder.forObject(cm(i)).normal('Synced', 'synced');
    await recorder.flush();
    expect(c.writes()).toBe(400);
    expect(c.peak()).toBeGreaterThan(1);
    expect(c.peak()).toBeLessThanOrEqual(4);

    // The backlog gone, a new handful goes one at a time.
    const after = counting(t.client);
    const quiet = recorderFor(after.client);
    for (let i = 400; i < 420; i++) quiet.forObject(cm(i)).normal('Synced', 'synced');
    await quiet.flush();
    expect(after.writes()).toBe(20);
    expect(after.peak()).toBe(1);
    const items = await eventually(async () => {
      const list = (await t.client.api(EventsV1Event, ns).list()).items;
      return list.length === 420 ? list : undefined;
    });
    expect(new Set(items.map((e) => e.regarding?.name)).size).toBe(420);
  });
});
