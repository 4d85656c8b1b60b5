import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError, isGone } from '../api/status.js';
import { NetworkError } from './transport/errors.js';
import { decodeWatchLine, decodeWatchStream, WatchDecodeError, type WatchEvent } from './watch.js';

const where = { method: 'GET', url: 'https://x/api/v1/pods?watch=true' };
const cm = (name: string, rv: string) => ({ kind: 'ConfigMap', metadata: { name, resourceVersion: rv } });

async function collect(body: Readable): Promise<WatchEvent<unknown>[]> {
  const out: WatchEvent<unknown>[] = [];
  for await (const ev of decodeWatchStream(body, where)) out.push(ev);
  return out;
}

describe('watch decoding', () => {
  it('decodes object events and bookmarks', () => {
    expect(decodeWatchLine(JSON.stringify({ type: 'ADDED', object: cm('a', '5') }))).toEqual({
      type: 'ADDED',
      object: cm('a', '5'),
      resourceVersion: '5',
    });
    const bm = {
      type: 'BOOKMARK',
      object: {
        kind: 'ConfigMap',
        metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } },
      },
    };
    expect(decodeWatchLine(JSON.stringify(bm))).toEqual({
      type: 'BOOKMARK',
      resourceVersion: '9',
      initialEventsEnd: true,
    });
  });

  it('turns every undecodable line into an ERROR event', () => {
    for (const line of [
      '{not json',
      '[1,2]',
      '{"type":"ADDED"}',
      '{"type":"BOOKMARK","object":{}}',
      '{"type":"WEIRD","object":{}}',
    ]) {
      const ev = decodeWatchLine(line);
      expect(ev.type).toBe('ERROR');
      expect(ev.type === 'ERROR' && ev.error).toBeInstanceOf(WatchDecodeError);
      expect(ev.type === 'ERROR' && ev.error.line).toBe(line);
    }
  });

  it('throws the Status of a server ERROR event as an ApiError', () => {
    const status = ApiError.expired('too old resource version: 1 (5)').status;
    try {
      decodeWatchLine(JSON.stringify({ type: 'ERROR', object: status }));
      throw new Error('no error');
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect(isGone(err)).toBe(true);
      expect((err as ApiError).message).toBe('too old resource version: 1 (5)');
    }
  });

  it('reassembles lines and multi-byte characters split across chunks', async () => {
    const line = `${JSON.stringify({ type: 'MODIFIED', object: { ...cm('é', '7'), data: { x: 'ünïcödé' } } })}\n`;
    const bytes = Buffer.from(line + line);
    const chunks = [];
    for (let i = 0; i < bytes.length; i += 7) chunks.push(bytes.subarray(i, i + 7));
    const events = await collect(Readable.from(chunks));
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({
      type: 'MODIFIED',
      object: { data: { x: 'ünïcödé' } },
      resourceVersion: '7',
    });
  });

  it('reports a stream cut inside an event, and keeps going after a bad line', async () => {
    const good = JSON.stringify({ type: 'ADDED', object: cm('a', '1') });
    const events = await collect(Readable.from([`${good}\nnot-json\n${good}\n{"type":"ADD`]));
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'ERROR', 'ADDED', 'ERROR']);
  });

  it('raises a broken connection as a NetworkError', async () => {
    const body = new Readable({ read() {} });
    body.push(`${JSON.stringify({ type: 'ADDED', object: cm('a', '1') })}\n`);
    setImmediate(() =>
      body.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })),
    );
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const ev of decodeWatchStream(body, where)) seen.push(ev.type);
      })(),
    ).rejects.toBeInstanceOf(NetworkError);
    expect(seen).toEqual(['ADDED']);
  });
});
