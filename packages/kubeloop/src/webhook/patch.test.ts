import { describe, expect, it } from 'vitest';
import { applyJsonPatch, createJsonPatch } from './patch.js';

describe('createJsonPatch', () => {
  it('is empty when nothing changed, even with undefined members and a different key order', () => {
    const a = { metadata: { name: 'x', labels: { a: '1', b: '2' } }, spec: { n: 1 } };
    const b = { spec: { n: 1, gone: undefined }, metadata: { labels: { b: '2', a: '1' }, name: 'x' } };
    expect(createJsonPatch(a, b)).toEqual([]);
  });

  it('adds a nested member where its parent exists, and the whole subtree where it does not', () => {
    expect(createJsonPatch({ spec: {} }, { spec: { replicas: 1, template: { x: { y: 2 } } } })).toEqual([
      { op: 'add', path: '/spec/replicas', value: 1 },
      { op: 'add', path: '/spec/template', value: { x: { y: 2 } } },
    ]);
  });

  it('replaces changed scalars and values of another type, removes dropped members', () => {
    expect(createJsonPatch({ a: 1, b: 'x', c: [1], d: true }, { a: 2, b: { y: 1 }, c: [1] })).toEqual([
      { op: 'remove', path: '/d' },
      { op: 'replace', path: '/a', value: 2 },
      { op: 'replace', path: '/b', value: { y: 1 } },
    ]);
  });

  it('changes arrays element by element: appended elements added, dropped ones removed from the end', () => {
    const from = { list: [{ n: 'a', v: 1 }, { n: 'b' }, 'c', 'd'] };
    const to = { list: [{ n: 'a', v: 2 }, { n: 'b' }] };
    const patch = createJsonPatch(from, to);
    expect(patch).toEqual([
      { op: 'replace', path: '/list/0/v', value: 2 },
      { op: 'remove', path: '/list/3' },
      { op: 'remove', path: '/list/2' },
    ]);
    expect(applyJsonPatch(from, patch)).toEqual(to);
    const grown = { list: [...to.list, { n: 'z' }] };
    expect(createJsonPatch(to, grown)).toEqual([{ op: 'add', path: '/list/2', value: { n: 'z' } }]);
  });

  it('escapes / and ~ in keys as RFC 6901 asks', () => {
    const from = { metadata: { annotations: { 'a/b': '1' } } };
    const to = { metadata: { annotations: { 'a/b': '2', 'x~y': 'z', 'example.com/~': 'w' } } };
    const patch = createJsonPatch(from, to);
    expect(patch).toEqual([
      { op: 'replace', path: '/metadata/annotations/a~1b', value: '2' },
      { op: 'add', path: '/metadata/annotations/x~0y', value: 'z' },
      { op: 'add', path: '/metadata/annotations/example.com~1~0', value: 'w' },
    ]);
    expect(applyJsonPatch(from, patch)).toEqual(to);
  });

  it('a patch applied to the original gives the mutated object (random shapes)', () => {
    const from = { a: [1, 2, { b: [3] }], c: { d: null, e: 'x' }, f: 0 };
    const to = { a: [1, { b: [3, 4] }], c: { d: 1 }, g: [], f: 0 };
    expect(applyJsonPatch(from, createJsonPatch(from, to))).toEqual(to);
  });
});
