import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/status.js';
import { DeferredObject, deferredLineDecoder, managedFieldsCuttingDecoder } from './deferred.js';
import { decodeListBatches, type ListDecoding, type ListHead } from './list-stream.js';
import type { KubeObject } from './types.js';

const where = { method: 'GET', url: 'https://x/api/v1/configmaps' };

/** A body delivered in pieces of `size` bytes (1: every byte on its own). */
const body = (text: string, size: number) => {
  const bytes = Buffer.from(text);
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
  return Readable.from(pieces);
};

async function decode(
  text: string,
  size: number,
  o: ListDecoding<KubeObject> = {},
): Promise<{ items: KubeObject[]; batches: number; head: ListHead }> {
  const it = decodeListBatches<KubeObject>(body(text, size), where, o);
  const items: KubeObject[] = [];
  let batches = 0;
  let r = await it.next();
  for (; !r.done; r = await it.next()) {
    batches++;
    items.push(...r.value);
  }
  return { items, batches, head: r.value };
}

const tricky = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'a"b\\', namespace: 'ns', resourceVersion: '7' },
  // Brackets, quotes and escaped backslashes inside strings must not move the item's end.
  data: { x: '}]{["\\"', y: '\\\\', z: 'é ünï', w: '\u2028' },
};
const plain = (i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cm${i}`, namespace: 'ns', resourceVersion: String(10 + i) },
  data: { n: [i, { deep: [true, null, -1.5e3] }] },
});

describe('streaming list decoding', () => {
  const list = {
    kind: 'ConfigMapList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '42', continue: 'tok' },
    items: [tricky, plain(1), plain(2)],
  };

  it.each([1, 3, 7, 64, 1 << 16])(
    'decodes every item and the list fields, received in %i-byte pieces',
    async (size) => {
      const { items, head } = await decode(JSON.stringify(list), size);
      expect(items).toEqual(list.items);
      expect(head).toEqual({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: list.metadata });
    },
  );

  it('reads the list fields wherever they are (after the items, as Go sorts an unstructured list)', async () => {
    const text = ` { "apiVersion" : "v1" , "items" : [ ${JSON.stringify(plain(1))} , ${JSON.stringify(plain(2))} ] , "kind":"XList","metadata":{"resourceVersion":"5"} , "n": 3 }\n`;
    const { items, head } = await decode(text, 5);
    expect(items).toEqual([plain(1), plain(2)]);
    expect(head).toEqual({ apiVersion: 'v1', kind: 'XList', metadata: { resourceVersion: '5' } });
  });

  it('takes empty and null item lists', async () => {
    for (const items of ['[]', '[ ]', 'null']) {
      const r = await decode(`{"kind":"L","items":${items},"metadata":{"resourceVersion":"1"}}`, 2);
      expect(r.items).toEqual([]);
      expect(r.head.metadata).toEqual({ resourceVersion: '1' });
    }
  });

  it('names the type of items that come without it, as a built-in list sends them', async () => {
    const bare = [
      { metadata: { name: 'a' }, data: {} },
      {},
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' } },
    ];
    const { items } = await decode(JSON.stringify({ kind: 'ConfigMapList', items: bare }), 4, {
      itemType: { apiVersion: 'v1', kind: 'ConfigMap' },
    });
    expect(items).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: {} },
      { apiVersion: 'v1', kind: 'ConfigMap' },
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' } },
    ]);
  });

  it('hands large lists over in batches, each decoded with the given line decoder', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => ({
      ...plain(i),
      metadata: { ...plain(i).metadata, managedFields: [{ manager: 'x'.repeat(300) }] },
    }));
    const text = JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '9' }, items: many });
    expect(text.length).toBeGreaterThan(1 << 20);

    const deferred = await decode(text, 1 << 16, {
      decode: deferredLineDecoder({ dropManagedFields: true, finish: (o) => o }),
    });
    expect(deferred.batches).toBeGreaterThan(1);
    expect(deferred.items).toHaveLength(3000);
    const first = deferred.items[0] as unknown as DeferredObject;
    expect(first).toBeInstanceOf(DeferredObject);
    expect([first.name, first.namespace, first.resourceVersion]).toEqual(['cm0', 'ns', '10']);
    expect(first.decode()).toEqual(plain(0));

    const eager = await decode(text, 1 << 16, { decode: managedFieldsCuttingDecoder() });
    expect(eager.items[2999]).toEqual(plain(2999));
  });

  it.each([
    ['not an object', '[1,2]'],
    ['an item that is not an object', '{"items":[1]}'],
    ['a cut body', JSON.stringify(list).slice(0, -20)],
    ['a cut body after the items', '{"items":[],"metadata":{"resourceVersion":"1"'],
    ['a broken item', '{"items":[{"a":1,}]}'],
  ])('fails with a 500 on %s', async (_what, text) => {
    const err = await decode(text, 3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(500);
    expect((err as ApiError).message).toContain('not a JSON list');
  });
});
