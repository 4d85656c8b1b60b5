import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/status.js';
import { DeferredObject, deferredLineDecoder, managedFieldsCuttingDecoder } from './deferred.js';
import type { KubeObject } from './types.js';
import { decodeWatchLines, WatchDecodeError } from './watch.js';

const identity = (o: KubeObject) => o;

function decoder(dropManagedFields = true) {
  return deferredLineDecoder<KubeObject>({ dropManagedFields, finish: identity });
}

const line = (type: string, object: unknown) => JSON.stringify({ type, object });
/** The object of an event, whatever its type. */
const objectOf = <T = DeferredObject>(ev: unknown) => (ev as { object: T }).object;

/** What the eager decoder makes of the lines, managedFields dropped as the informer does. */
function eager(text: string, drop = true) {
  return decodeWatchLines<KubeObject>(text).events.map((ev) => {
    if (ev.type === 'ERROR' || ev.type === 'BOOKMARK') return ev;
    const obj = JSON.parse(JSON.stringify(ev.object)) as KubeObject;
    if (drop) delete obj.metadata?.managedFields;
    return { ...ev, object: obj };
  });
}

/** The deferred events, with their objects decoded. */
function deferred(text: string, drop = true) {
  const { events, error } = decoder(drop)(Buffer.from(text));
  expect(error).toBeUndefined();
  return events.map((ev) =>
    ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED'
      ? {
          type: ev.type,
          object: (ev.object as unknown as DeferredObject).decode(),
          resourceVersion: ev.resourceVersion,
        }
      : ev,
  );
}

const mf = [
  {
    manager: 'kubectl',
    operation: 'Update',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'k:{"name":"c"}': { '.': {}, 'f:image': {} } } },
  },
];

describe('deferred watch decoding', () => {
  it('reads identity and resourceVersion without decoding, and decodes to what JSON.parse gives', () => {
    const text = [
      line('ADDED', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'a', namespace: 'ns', resourceVersion: '7', managedFields: mf },
        data: { x: '1' },
      }),
      line('MODIFIED', { metadata: { name: 'node-1', resourceVersion: '8' }, spec: { unschedulable: true } }),
      line('DELETED', { metadata: { managedFields: mf, name: 'b', namespace: 'ns', resourceVersion: '9' } }),
    ].join('\n');
    const { events } = decoder()(Buffer.from(text));
    const objs = events.map((ev) => (ev as { object: unknown }).object as DeferredObject);
    expect(objs.every((o) => o instanceof DeferredObject)).toBe(true);
    expect(objs.map((o) => [o.key, o.name, o.namespace, o.resourceVersion])).toEqual([
      ['ns/a', 'a', 'ns', '7'],
      ['node-1', 'node-1', '', '8'],
      ['ns/b', 'b', 'ns', '9'],
    ]);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(deferred(text)).toEqual(eager(text));
  });

  it('drops managedFields wherever metadata puts them, and only metadata.managedFields', () => {
    const objects = [
      { metadata: { managedFields: mf, name: 'first', resourceVersion: '1' } },
      { metadata: { name: 'middle', managedFields: mf, resourceVersion: '2' } },
      { metadata: { name: 'last', resourceVersion: '3', managedFields: mf } },
      { metadata: { managedFields: [], name: 'empty' } },
      { metadata: { managedFields: null, name: 'null' } },
      // Not metadata's: kept.
      { metadata: { name: 'nested' }, spec: { managedFields: mf, metadata: { managedFields: 1 } } },
    ];
    const text = objects.map((o) => line('ADDED', o)).join('\n');
    const out = deferred(text);
    expect(out).toEqual(eager(text));
    expect(objectOf<{ spec: unknown }>(out[5]).spec).toEqual(objects[5]!.spec);
    // Kept when asked.
    expect(deferred(text, false)).toEqual(eager(text, false));
  });

  it('handles escapes, unicode, numbers, literals and spaces exactly as JSON.parse', () => {
    const tricky = {
      metadata: {
        name: 'caf\u00e9-\u{1F600}-"q"-\\b',
        namespace: 'n\u0001s',
        resourceVersion: '10',
        annotations: { 'a/b': '{"managedFields":[1]}\n\t', e: '\\"', u: '\u2028' },
      },
      spec: {
        n: [0, -1, 1.5e3, -0.25, 1e-7, 1.2345678901234567e19],
        t: true,
        f: false,
        z: null,
        o: {},
        a: [],
      },
    };
    const spaced = `{"type":"ADDED","object": { "metadata" : { "name" : "s" , "managedFields" : [ { } ] , "resourceVersion":"5" } , "spec" : [ 1 , { "k" : [ ] } ] } }`;
    const text = `${line('ADDED', tricky)}\n${spaced}`;
    const { events } = decoder()(Buffer.from(text));
    expect((events[0] as { object: unknown }).object).toBeInstanceOf(DeferredObject);
    expect(objectOf(events[0]).name).toBe(tricky.metadata.name);
    expect(objectOf(events[1]).resourceVersion).toBe('5');
    expect(deferred(text)).toEqual(eager(text));
  });

  it('decodes random objects exactly as JSON.parse does', () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const chars = [
      'a',
      'Z',
      '0',
      ' ',
      '"',
      '\\',
      '/',
      '\n',
      '\u00e9',
      '\u4e2d',
      '\u{1F600}',
      '{',
      ']',
      ':',
      ',',
    ];
    const str = () => Array.from({ length: rnd(8) }, () => chars[rnd(chars.length)]).join('');
    const value = (depth: number): unknown => {
      switch (depth > 3 ? rnd(4) : rnd(7)) {
        case 0:
          return str();
        case 1:
          return rnd(2) ? rnd(1e6) - 5e5 : (rnd(1e6) - 5e5) / 997;
        case 2:
          return [true, false, null][rnd(3)];
        case 3:
          return str();
        case 4:
          return Array.from({ length: rnd(4) }, () => value(depth + 1));
        default:
          return Object.fromEntries(Array.from({ length: rnd(4) }, () => [str(), value(depth + 1)]));
      }
    };
    const lines: string[] = [];
    for (let i = 0; i < 300; i++) {
      const metadata: Record<string, unknown> = { name: `${str()}x${i}`, resourceVersion: String(i) };
      if (rnd(2)) metadata.namespace = str() || 'ns';
      if (rnd(2)) metadata.managedFields = value(2);
      if (rnd(2)) metadata.labels = { [str()]: str() };
      const keys = Object.keys(metadata).sort(() => rnd(3) - 1);
      const obj: Record<string, unknown> = { spec: value(1) };
      obj.metadata = Object.fromEntries(keys.map((k) => [k, metadata[k]]));
      obj.status = value(1);
      lines.push(line(['ADDED', 'MODIFIED', 'DELETED'][rnd(3)]!, obj));
    }
    const text = lines.join('\n');
    const { events } = decoder()(Buffer.from(text));
    expect(events.every((ev) => (ev as { object?: unknown }).object instanceof DeferredObject)).toBe(true);
    expect(deferred(text)).toEqual(eager(text));
    expect(managedFieldsCuttingDecoder<KubeObject>()(Buffer.from(text)).events).toEqual(eager(text));
  });

  it('leaves what it does not defer to the eager decoder, which reports bad lines as before', () => {
    const good = line('ADDED', { metadata: { name: 'ok', resourceVersion: '1' } });
    const bad = [
      '{"type":"ADDED","object":{"metadata":{"name":"x"}',
      '{"type":"ADDED","object":{"metadata":{"name":"x"},"spec":[1,]}}',
      '{"type":"ADDED","object":{"metadata":{"name":"x"},"spec":"a\tb"}}',
      '{"type":"ADDED","object":{"metadata":{"name":"x"},"spec":01}}',
      '{"type":"ADDED","object":{"metadata":{"name":"x"},"spec":tru}}',
      '{"type":"ADDED","object":{"metadata":{"name":"x"}} trailing',
      '{"type":"ADDED","object":{"metadata":{"name":"x"},"s":"\\x"}}',
    ];
    const { events } = decoder()(Buffer.from([good, ...bad, good].join('\n')));
    expect(events).toHaveLength(bad.length + 2);
    expect((events[0] as { object: unknown }).object).toBeInstanceOf(DeferredObject);
    for (const ev of events.slice(1, -1)) {
      expect(ev.type).toBe('ERROR');
      expect((ev as { error: unknown }).error).toBeInstanceOf(WatchDecodeError);
    }
    expect((events.at(-1) as { object: unknown }).object).toBeInstanceOf(DeferredObject);
  });

  it('decodes at once what it cannot read without decoding: duplicate, escaped or odd keys, no name', () => {
    const text = [
      '{"type":"ADDED","object":{"metadata":{"name":"a","name":"b"}}}',
      '{"type":"ADDED","object":{"metadata":{"name":"a"},"metadata":{"name":"c"}}}',
      '{"type":"ADDED","object":{"meta\\u0064ata":{"name":"d"}}}',
      '{"type":"ADDED","object":{"metadata":{"n\\u0061me":"e"}}}',
      '{"type":"ADDED","object":{"metadata":{"name":5}}}',
      '{"type":"ADDED","object":{"metadata":[]}}',
      '{"object":{"metadata":{"name":"f"}},"type":"ADDED"}',
      `{"type":"ADDED","object":${'['.repeat(300)}${']'.repeat(300)}}`,
    ].join('\n');
    const { events } = decoder()(Buffer.from(text));
    const objects = events.map((ev) => (ev as { object?: unknown }).object);
    expect(objects.some((o) => o instanceof DeferredObject)).toBe(false);
    expect(objects.map((o) => (o as KubeObject | undefined)?.metadata?.name)).toEqual([
      'b',
      'c',
      'd',
      'e',
      5,
      undefined,
      'f',
      undefined,
    ]);
  });

  it('passes bookmarks through and stops at a server ERROR event, keeping the events before it', () => {
    const text = [
      line('ADDED', { metadata: { name: 'a', resourceVersion: '1' } }),
      line('BOOKMARK', { metadata: { resourceVersion: '2' } }),
      line('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' }),
      line('ADDED', { metadata: { name: 'never', resourceVersion: '3' } }),
    ].join('\n');
    const { events, error } = decoder()(Buffer.from(text));
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
    expect(error).toBeInstanceOf(ApiError);
    expect(error?.code).toBe(410);
    expect(objectOf(events[0]).decode()).toEqual({
      metadata: { name: 'a', resourceVersion: '1' },
    });
  });

  it('keeps only the kept texts of a batch, in one buffer', () => {
    const big = 'x'.repeat(10_000);
    const text = [
      line('ADDED', { metadata: { name: 'a', managedFields: [{ manager: big }] } }),
      line('ADDED', { metadata: { name: 'b', managedFields: [{ manager: big }] } }),
    ].join('\n');
    const { events } = decoder()(Buffer.from(text));
    const objs = events.map((e) => objectOf(e));
    expect(objs.map((o) => o.size)).toEqual([
      JSON.stringify({ metadata: { name: 'a' } }).length,
      JSON.stringify({ metadata: { name: 'b' } }).length,
    ]);
  });

  it('scans batches larger than a slice, a line longer than one, and decoders in turn', () => {
    const obj = (i: number, ns: string, extra = '') => ({
      metadata: { name: `o-${i}`, namespace: ns, resourceVersion: String(i), managedFields: mf },
      spec: { i, note: extra },
    });
    const part = (from: number, to: number, ns: string) =>
      Array.from({ length: to - from }, (_, k) =>
        line('ADDED', obj(from + k, ns, from + k === from + 7 ? 'y'.repeat(150_000) : '')),
      ).join('\n');
    // Two decoders used in turn, their namespaces differing: each object keeps its own.
    const a = decoder();
    const b = decoder();
    const texts = [part(0, 1500, 'ns-a'), part(1500, 3000, 'ns-b'), part(3000, 4500, 'ns-a')];
    const got = [a(Buffer.from(texts[0]!)), b(Buffer.from(texts[1]!)), a(Buffer.from(texts[2]!))];
    for (const [k, { events, error }] of got.entries()) {
      expect(error).toBeUndefined();
      const want = eager(texts[k]!);
      expect(events).toHaveLength(1500);
      const objs = events.map((ev) => objectOf(ev));
      expect(objs.every((o) => o instanceof DeferredObject)).toBe(true);
      expect(objs.map((o) => [o.name, o.namespace, o.resourceVersion])).toEqual(
        want.map((ev) => {
          const m = objectOf<KubeObject>(ev).metadata!;
          return [m.name, m.namespace, m.resourceVersion];
        }),
      );
      expect(objs.map((o) => o.decode())).toEqual(want.map((ev) => objectOf<KubeObject>(ev)));
    }
    // A line that grows the scan's memory past what it keeps (1 MB), and decoding after it.
    const huge = line('MODIFIED', obj(9, 'ns-h', 'z'.repeat(1_500_000)));
    const first = texts[0]!.split('\n')[0]!;
    for (const text of [huge, first, `${first}\n${huge}\n${first}`])
      expect(deferred(text)).toEqual(eager(text));
  });

  it('uses the WebAssembly module built from wasm/scan.ts', async () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
    // Fails when src/client/scan-wasm.ts was not regenerated after a change of the source.
    await promisify(execFile)(process.execPath, ['scripts/build-wasm.mjs', '--check'], { cwd: root });
  }, 60_000);

  it('decodes at once, managedFields cut before they are built, exactly as the eager decoder then a drop', () => {
    const cut = managedFieldsCuttingDecoder<KubeObject>();
    const objects = Array.from({ length: 200 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        ...(i % 3 === 0 && { managedFields: mf }),
        name: `c-${i}-\u00e9"`,
        ...(i % 2 === 0 && { namespace: `ns-${i % 5}` }),
        resourceVersion: String(i),
        ...(i % 3 === 1 && { managedFields: mf }),
        labels: { i: String(i) },
      },
      data: { k: 'v'.repeat(i), n: i / 7, ok: i % 2 === 0, none: null },
    }));
    const lines = objects.map((o, i) => line(['ADDED', 'MODIFIED', 'DELETED'][i % 3]!, o));
    // Lines it leaves to the eager path, between the others: bookmarks, bad lines, escaped keys.
    lines.splice(50, 0, line('BOOKMARK', { metadata: { resourceVersion: '50' } }));
    lines.splice(120, 0, '{"type":"ADDED","object":{"metadata":{"name":"x"},"spec":[1,]}}');
    lines.splice(150, 0, '{"type":"ADDED","object":{"metadata":{"n\\u0061me":"e"}}}');
    const text = lines.join('\n');
    const { events, error } = cut(Buffer.from(text));
    expect(error).toBeUndefined();
    expect(events.some((ev) => (ev as { object?: unknown }).object instanceof DeferredObject)).toBe(false);
    expect(events).toEqual(eager(text));
    // A server ERROR event ends the batch after the events before it, as eagerly.
    const failing = [lines[0]!, line('ERROR', { kind: 'Status', code: 410, reason: 'Expired' }), lines[1]!];
    const out = cut(Buffer.from(failing.join('\n')));
    expect(out.events).toEqual(eager(failing[0]!));
    expect(out.error?.code).toBe(410);
  });

  it('gives each object its own namespace whatever decoders ran between', () => {
    const text = (ns: string, from: number) =>
      Array.from({ length: 3 }, (_, k) =>
        line('ADDED', { metadata: { name: `o-${from + k}`, namespace: ns, resourceVersion: '1' } }),
      ).join('\n');
    const namespaces = (events: readonly unknown[]) =>
      events.map((ev) => {
        const o = (ev as { object: unknown }).object;
        return o instanceof DeferredObject ? o.namespace : (o as KubeObject).metadata?.namespace;
      });
    const deferring = decoder();
    const cutting = managedFieldsCuttingDecoder<KubeObject>();
    expect(namespaces(deferring(Buffer.from(text('a', 0))).events)).toEqual(['a', 'a', 'a']);
    expect(namespaces(cutting(Buffer.from(text('b', 3))).events)).toEqual(['b', 'b', 'b']);
    // The scan last saw "b" for the cutting decoder, which keeps no strings of namespaces.
    expect(namespaces(deferring(Buffer.from(text('b', 6))).events)).toEqual(['b', 'b', 'b']);
    expect(namespaces(deferring(Buffer.from(text('a', 9))).events)).toEqual(['a', 'a', 'a']);
  });
});
