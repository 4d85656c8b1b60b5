import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError, isGone } from '../api/status.js';
import { deferredLineDecoder, isDeferred } from './deferred.js';
import { NetworkError } from './transport/errors.js';
import { decodeWatchBatches, decodeWatchLines, type WatchEvent } from './watch.js';

const where = { method: 'GET', url: 'https://x/api/v1/pods?watch=true' };
const cm = (name: string, rv: string) => ({ kind: 'ConfigMap', metadata: { name, resourceVersion: rv } });
const added = (name: string, rv: string) => JSON.stringify({ type: 'ADDED', object: cm(name, rv) });
const names = (events: WatchEvent<ReturnType<typeof cm>>[]) =>
  events.map((e) => (e.type === 'ADDED' ? e.object.metadata.name : e.type));

describe('decodeWatchLines', () => {
  it('decodes the complete lines of a chunk in one go', () => {
    const { events, error } = decodeWatchLines<ReturnType<typeof cm>>(
      [added('a', '1'), added('b', '2'), `${added('c', '3')}\r`].join('\n'),
    );
    expect(error).toBeUndefined();
    expect(names(events)).toEqual(['a', 'b', 'c']);
    expect(events[2]).toMatchObject({ type: 'ADDED', resourceVersion: '3' });
  });

  it('falls back to one line at a time for blank and broken lines', () => {
    const { events } = decodeWatchLines([added('a', '1'), '', 'not json', added('b', '2')].join('\n'));
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'ERROR', 'ADDED']);
    const bad = events[1];
    expect(bad?.type === 'ERROR' && bad.error.line).toBe('not json');
  });

  it('reports malformed events of a chunk with their text', () => {
    const { events } = decodeWatchLines(['{"type":"ADDED"}', added('a', '1')].join('\n'));
    expect(events.map((e) => e.type)).toEqual(['ERROR', 'ADDED']);
    const bad = events[0];
    expect(bad?.type === 'ERROR' && bad.error.line).toBe('{"type":"ADDED"}');
  });

  it('keeps the events before a server ERROR event and hands its error back', () => {
    const status = ApiError.expired('too old resource version: 1 (5)').status;
    const { events, error } = decodeWatchLines(
      [added('a', '1'), JSON.stringify({ type: 'ERROR', object: status }), added('b', '2')].join('\n'),
    );
    expect(names(events as WatchEvent<ReturnType<typeof cm>>[])).toEqual(['a']);
    expect(isGone(error)).toBe(true);
  });
});

describe('decodeWatchBatches', () => {
  it('yields the complete events of each chunk, then throws a server ERROR after them', async () => {
    const status = ApiError.expired('gone').status;
    const chunks = [
      `${added('a', '1')}\n${added('b', '2')}\n${added('c', '3').slice(0, 10)}`,
      `${added('c', '3').slice(10)}\n`,
      `${added('d', '4')}\n${JSON.stringify({ type: 'ERROR', object: status })}\n${added('e', '5')}\n`,
    ];
    // Chunks that arrive apart are decoded apart.
    const body = Readable.from(
      (async function* () {
        for (const c of chunks) {
          yield c;
          await new Promise((r) => setTimeout(r, 5));
        }
      })(),
    );
    const batches: string[][] = [];
    const err = await (async () => {
      for await (const batch of decodeWatchBatches<ReturnType<typeof cm>>(body, where))
        batches.push(names(batch));
    })().catch((e: unknown) => e);
    expect(batches).toEqual([['a', 'b'], ['c'], ['d']]);
    expect(isGone(err)).toBe(true);
  });

  it('decodes what has arrived together as one batch', async () => {
    const body = Readable.from([
      `${added('a', '1')}\n${added('b', '2').slice(0, 7)}`,
      `${added('b', '2').slice(7)}\n`,
    ]);
    const batches: string[][] = [];
    for await (const batch of decodeWatchBatches<ReturnType<typeof cm>>(body, where))
      batches.push(names(batch));
    expect(batches).toEqual([['a', 'b']]);
  });

  it('delivers the complete events that arrived without waiting for the rest of a partial one', async () => {
    const body = new Readable({ read() {} });
    const a = added('a', '1');
    const b = added('b', '2');
    // Both chunks arrive together; the second starts an event that is still on its way.
    body.push(`${a}\n${b.slice(0, 5)}`);
    body.push(b.slice(5, 12));
    const batches = decodeWatchBatches<ReturnType<typeof cm>>(body, where);
    const first = await batches.next();
    expect(first.done === false && names(first.value)).toEqual(['a']);
    body.push(`${b.slice(12)}\n`);
    body.push(null);
    const second = await batches.next();
    expect(second.done === false && names(second.value)).toEqual(['b']);
    expect((await batches.next()).done).toBe(true);
  });

  it('decodes multi-byte characters split between chunks', async () => {
    const text = `${JSON.stringify({ type: 'ADDED', object: cm('é-✓-𝄞', '1') })}\n`;
    const bytes = Buffer.from(text);
    const cut = bytes.indexOf(Buffer.from('✓')) + 1;
    const body = Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]);
    const out: string[] = [];
    for await (const batch of decodeWatchBatches<ReturnType<typeof cm>>(body, where))
      out.push(...names(batch));
    expect(out).toEqual(['é-✓-𝄞']);
  });

  it('decodes the same events however the bytes are cut into chunks, with either decoder', async () => {
    const lines = [
      added('a', '1'),
      JSON.stringify({
        type: 'MODIFIED',
        object: {
          ...cm('b', '2'),
          metadata: { name: 'b', resourceVersion: '2', managedFields: [{ m: 'x' }] },
        },
      }),
      added('c-\u00e9', '3'),
    ];
    const bytes = Buffer.from(`${lines.join('\n')}\n`);
    const decoders = [
      undefined,
      deferredLineDecoder<ReturnType<typeof cm>>({ dropManagedFields: true, finish: (o) => o }),
    ];
    const seen = (ev: WatchEvent<ReturnType<typeof cm>>) => {
      if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return ev.type;
      const o = isDeferred(ev.object) ? ev.object.decode<ReturnType<typeof cm>>() : ev.object;
      return `${ev.type} ${o.metadata.name} ${o.metadata.resourceVersion}`;
    };
    for (const decoder of decoders) {
      for (const size of [1, 2, 7, 50, bytes.length]) {
        const chunks: Buffer[] = [];
        for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
        const out: string[] = [];
        for await (const batch of decodeWatchBatches(
          Readable.from(chunks),
          where,
          undefined,
          undefined,
          decoder,
        ))
          out.push(...batch.map(seen));
        expect(out, `chunks of ${size}`).toEqual(['ADDED a 1', 'MODIFIED b 2', 'ADDED c-é 3']);
      }
    }
  });

  it('reports a body that closes before its end as a network error, after what arrived', async () => {
    const body = new Readable({ read() {} });
    body.push(`${added('a', '1')}\n${added('b', '2').slice(0, 9)}`);
    const batches = decodeWatchBatches<ReturnType<typeof cm>>(body, where);
    const first = await batches.next();
    expect(first.done === false && names(first.value)).toEqual(['a']);
    body.destroy();
    await expect(batches.next()).rejects.toBeInstanceOf(NetworkError);
  });

  it('pauses a body that runs more than MAX_QUEUED_BYTES (1 MiB) ahead of its consumer, and resumes it without losing a byte', async () => {
    const line = `${added('x'.repeat(1000), '1')}\n`;
    const total = 12_000; // about 12 MB, many times the limit
    let pushed = 0;
    let paused = false;
    const body = new Readable({
      read() {
        // Produce as fast as the stream takes it: only the decoder's own limit holds it back.
        while (pushed < total) {
          pushed++;
          if (!this.push(line)) return;
        }
        this.push(null);
      },
    });
    const pause = body.pause.bind(body);
    body.pause = () => {
      paused = true;
      return pause();
    };
    let events = 0;
    for await (const batch of decodeWatchBatches<ReturnType<typeof cm>>(body, where)) {
      events += batch.length;
      // A slow consumer: the body gets ahead of it.
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(events).toBe(total);
    expect(paused).toBe(true);
  });
});
