import { describe, expect, it } from 'vitest';
import {
  type ControllerRevision,
  fnv1,
  goJson,
  hashControllerRevision,
  nextRevision,
  revisionTemplate,
  safeEncodeString,
  sortRevisions,
  templatePatch,
} from '../../src/controllers/history.js';

const template = {
  spec: { containers: [{ name: 'c', image: 'agent:1', resources: {} }] },
  metadata: { labels: { app: 'x' }, creationTimestamp: null },
};

describe('ControllerRevision data', () => {
  it('is the patch that replaces the template, with keys sorted as Go writes a map', () => {
    const data = templatePatch(template);
    expect(JSON.stringify(data)).toBe(
      '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"x"}},' +
        '"spec":{"containers":[{"image":"agent:1","name":"c","resources":{}}]}}}}',
    );
    expect(revisionTemplate({ data })).toEqual(template);
    expect(revisionTemplate({ data: {} })).toBeUndefined();
  });

  it('is hashed as Go hashes it: FNV-1 of its JSON (HTML characters escaped) and the collision count', () => {
    // Reference values of Go's hash/fnv New32.
    expect(fnv1(Buffer.from(''))).toBe(0x811c9dc5);
    expect(fnv1(Buffer.from('a'))).toBe(0x050c5d7e);
    expect(fnv1(Buffer.from('foobar'))).toBe(0x31f0b262);
    expect(goJson({ b: '<&>', a: 1 })).toBe('{"a":1,"b":"\\u003c\\u0026\\u003e"}');
    const data = templatePatch(template);
    const hash = hashControllerRevision(data, 0);
    expect(hash).toBe(
      safeEncodeString(String(fnv1(Buffer.from('0'), fnv1(Buffer.from(JSON.stringify(data)))))),
    );
    expect(hashControllerRevision(data, 1)).not.toBe(hash);
  });

  it('names hashes in the alphabet Kubernetes uses, one character per digit', () => {
    expect(safeEncodeString('0123456789')).toBe('456789bcdf');
  });

  it('orders a history by revision, then age, then name', () => {
    const cr = (name: string, revision: number, at: string): ControllerRevision => ({
      metadata: { name, creationTimestamp: at },
      revision,
    });
    const sorted = sortRevisions([
      cr('c', 2, '2024-01-01T00:00:00Z'),
      cr('b', 1, '2024-01-02T00:00:00Z'),
      cr('a', 1, '2024-01-02T00:00:00Z'),
      cr('d', 1, '2024-01-01T00:00:00Z'),
    ]);
    expect(sorted.map((r) => r.metadata?.name)).toEqual(['d', 'a', 'b', 'c']);
    expect(nextRevision(sorted)).toBe(3);
    expect(nextRevision([])).toBe(1);
  });
});
