import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Logger, pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { Client } from '../../client/client.js';
import { EventRecorder, microTime, nanoHex } from './events.js';

/** A client that records the Event writes it is asked for. */
function fakeClient() {
  const calls: Array<{ verb: 'create' | 'patch'; name: string; count?: number }> = [];
  const bodies: unknown[] = [];
  const client = {
    api: () => ({
      create: async (e: { metadata: { name: string } }) => {
        calls.push({ verb: 'create', name: e.metadata.name });
        bodies.push(e);
        return e;
      },
      patch: async (name: string, p: { series: { count: number } }) => {
        calls.push({ verb: 'patch', name, count: p.series.count });
        return {};
      },
    }),
  } as unknown as Client;
  return { client, calls, bodies };
}

/** A recorder of controller `c` writing through `client`, quiet unless given a log. */
const recorderOn = (client: Client, log: Logger = pino({ level: 'silent' })) =>
  new EventRecorder(client, { reportingController: 'c', reportingInstance: 'i', log });

const foo = {
  apiVersion: 'example.com/v1',
  kind: 'Foo',
  metadata: { name: 'a', namespace: 'ns', uid: 'u1' },
};

describe('EventRecorder series, as client-go writes them', () => {
  it('creates, patches a series of 2, then counts locally until the series is quiet, refreshed or stopped', async () => {
    const { client, calls } = fakeClient();
    const rec = recorderOn(client);
    for (let i = 0; i < 5; i++) rec.event(foo, 'Normal', 'Synced', 'synced');
    await rec.flush();
    const name = calls[0]?.name ?? '';
    // flush() writes the count not yet written.
    expect(calls).toEqual([
      { verb: 'create', name },
      { verb: 'patch', name, count: 2 },
      { verb: 'patch', name, count: 5 },
    ]);

    // Nothing new: nothing to write.
    calls.length = 0;
    await rec.flush();
    expect(calls).toEqual([]);

    // More repeats; a series quiet for over 6 minutes is written once more and forgotten.
    rec.event(foo, 'Normal', 'Synced', 'synced');
    (rec as unknown as { tidy(now: number): void }).tidy(Date.now() + 7 * 60_000);
    await rec.flush();
    expect(calls).toEqual([{ verb: 'patch', name, count: 6 }]);

    // The next occurrence starts a new Event.
    calls.length = 0;
    rec.event(foo, 'Normal', 'Synced', 'synced');
    await rec.stop(true);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.verb).toBe('create');
    expect(calls[0]?.name).not.toBe(name);
  });

  it('writes a running series every 30 minutes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const start = Date.now();
      const { client, calls } = fakeClient();
      const rec = recorderOn(client);
      const tidy = (now: number) => (rec as unknown as { tidy(now: number): void }).tidy(now);
      for (let i = 0; i < 3; i++) rec.event(foo, 'Warning', 'Broken', 'broken');
      // Still going 31 minutes later (never quiet for 6): the refresh writes its count.
      vi.setSystemTime(start + 31 * 60_000);
      rec.event(foo, 'Warning', 'Broken', 'broken');
      tidy(Date.now());
      // Not again until the next refresh.
      tidy(Date.now() + 60_000);
      // stop(true) waits for the writes, and finds nothing left to write.
      await rec.stop(true);
      expect(calls.map((c) => c.count ?? 1)).toEqual([1, 2, 4]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes the Event about the object, yet keeps no reference to the object in its series', async () => {
    const { client, bodies } = fakeClient();
    const rec = recorderOn(client);
    // Made and recorded in a scope of its own, so that nothing but the recorder could hold it.
    const held = (() => {
      const obj = {
        ...foo,
        metadata: { ...foo.metadata, resourceVersion: '7', labels: { big: 'x'.repeat(1000) } },
      };
      rec.event(obj, 'Normal', 'Synced', 'synced');
      return new WeakRef(obj);
    })();
    await rec.flush();
    expect(bodies).toEqual([
      {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: expect.stringMatching(/^a\.[0-9a-f]+$/), namespace: 'ns' },
        eventTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        reportingController: 'c',
        reportingInstance: 'i',
        action: 'Synced',
        reason: 'Synced',
        type: 'Normal',
        note: 'synced',
        regarding: {
          apiVersion: 'example.com/v1',
          kind: 'Foo',
          name: 'a',
          namespace: 'ns',
          uid: 'u1',
          resourceVersion: '7',
        },
      },
    ]);
    // The series is remembered for 6 minutes; the object (often a cache entry replaced since) must
    // not be kept with it.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    await new Promise((r) => setImmediate(r));
    gc();
    expect(held.deref()).toBeUndefined();
    await rec.stop(false);
  });

  it('writes MicroTimes with microseconds, as Kubernetes formats them', () => {
    expect(microTime(new Date(Date.UTC(2024, 4, 1, 10, 0, 0, 123)))).toBe('2024-05-01T10:00:00.123000Z');
    expect(microTime(new Date(Date.UTC(2024, 0, 1)))).toBe('2024-01-01T00:00:00.000000Z');
    expect(microTime(new Date(8.64e15))).toBe('+275760-09-13T00:00:00.000000Z');
  });
});

describe('nanoHex', () => {
  it('writes ms × 10⁶ + ns in hexadecimal as BigInt does, across the range of times', () => {
    const cases: [number, number][] = [
      [0, 0],
      [0, 999_999],
      [2 ** 20 - 1, 999_999],
      [2 ** 20, 0],
      [1_764_182_400_000, 123_456],
      [8.64e15, 999_999],
    ];
    for (let e = 0; e < 53; e++) cases.push([Math.floor(2 ** e * 0.987654321), (e * 37_813) % 1e6]);
    for (const [ms, ns] of cases)
      expect(nanoHex(ms, ns)).toBe((BigInt(ms) * 1_000_000n + BigInt(ns)).toString(16));
  });
});

/** One event about each of 20 objects. */
function recordAboutTwenty(rec: EventRecorder): void {
  for (let i = 0; i < 20; i++)
    rec.event(
      { ...foo, metadata: { ...foo.metadata, name: `f${i}`, uid: `u${i}` } },
      'Normal',
      'Synced',
      's',
    );
}

describe('EventRecorder.stop', () => {
  it('gives up the writes of a server that stopped answering when its time is up, and sends no more', async () => {
    let sent = 0;
    const client = {
      api: () => ({
        // An API server gone quiet: the write never answers.
        create: () => {
          sent++;
          return new Promise(() => undefined);
        },
      }),
    } as unknown as Client;
    const warnings: unknown[] = [];
    const log = { warn: (fields: unknown, msg: string) => warnings.push([fields, msg]) };
    const rec = recorderOn(client, log as unknown as Logger);
    recordAboutTwenty(rec);
    await rec.stop(true, 20);
    // One write was in flight (one at a time below a backlog); the 19 queued are dropped.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent).toBe(1);
    expect(warnings).toEqual([
      [{ unwritten: 20 }, 'the shutdown grace period ended before every event was written'],
    ]);
    // Recorded after the stop: dropped too.
    rec.event(foo, 'Normal', 'Synced', 's');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(sent).toBe(1);
  });

  it('writes every queued event when the server answers within the time', async () => {
    const { client, calls } = fakeClient();
    const rec = recorderOn(client);
    recordAboutTwenty(rec);
    await rec.stop(true, 10_000);
    expect(calls).toHaveLength(20);
  });
});
