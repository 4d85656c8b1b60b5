import { describe, expect, it } from 'vitest';
import { fromFieldsV1, toFieldsV1 } from './fields-v1.js';
import {
  comparePathElements,
  deserializePathElement,
  keyElement,
  type Path,
  type PathElement,
  pathString,
  serializePathElement,
} from './path.js';
import { FieldSet } from './set.js';

const f = (field: string): PathElement => ({ field });
const k = (fields: Record<string, unknown>): PathElement =>
  keyElement(Object.entries(fields).map(([name, value]) => ({ name, value })));
const v = (value: unknown): PathElement => ({ value });
const i = (index: number): PathElement => ({ index });
/** A path from field names and other elements: `path('spec', 'replicas')`. */
const path = (...parts: (string | PathElement)[]): Path =>
  parts.map((x) => (typeof x === 'string' ? f(x) : x));
const set = (...paths: Path[]) => FieldSet.of(...paths);
const strings = (s: FieldSet) => s.paths().map(pathString);

describe('path elements', () => {
  it.each<[PathElement, string, string]>([
    [f('spec'), 'f:spec', '.spec'],
    [k({ name: 'nginx' }), 'k:{"name":"nginx"}', '[name="nginx"]'],
    [
      k({ protocol: 'TCP', containerPort: 80 }),
      'k:{"containerPort":80,"protocol":"TCP"}',
      '[containerPort=80,protocol="TCP"]',
    ],
    [v('a'), 'v:"a"', '[="a"]'],
    [v(3), 'v:3', '[=3]'],
    [v(true), 'v:true', '[=true]'],
    [i(4), 'i:4', '[4]'],
    [k({ name: '<&>' }), 'k:{"name":"\\u003c\\u0026\\u003e"}', '[name="<&>"]'],
  ])('%j serializes as %s and prints as %s', (pe, serialized, printed) => {
    expect(serializePathElement(pe)).toBe(serialized);
    expect(pathString([pe])).toBe(printed);
    expect(comparePathElements(deserializePathElement(serialized), pe)).toBe(0);
  });

  it('orders fields, then keys, values and indices; values by type then value', () => {
    const sorted = [
      i(1),
      v(true),
      v('ab'),
      v(2),
      k({ name: 'b' }),
      k({ name: 'a' }),
      f('b'),
      f('a'),
      v('aa'),
      v(1),
    ]
      .sort(comparePathElements)
      .map(serializePathElement);
    expect(sorted).toEqual([
      'f:a',
      'f:b',
      'k:{"name":"a"}',
      'k:{"name":"b"}',
      'v:1',
      'v:2',
      'v:"aa"',
      'v:"ab"',
      'v:true',
      'i:1',
    ]);
  });

  it.each(['x', 'f', 'fx:a', 'k:[1]', 'i:abc'])('rejects the malformed key %j', (key) => {
    expect(() => deserializePathElement(key)).toThrow();
  });

  it('prints a path as Kubernetes conflict messages do', () => {
    expect(pathString(path('spec', 'template', 'spec', 'containers', k({ name: 'app' }), 'image'))).toBe(
      '.spec.template.spec.containers[name="app"].image',
    );
  });
});

describe('FieldSet', () => {
  const a = path('a');
  const ab = path('a', 'b');
  const abc = path('a', 'b', 'c');
  const x = path('x');

  it('inserts paths without their parents, and never the empty path', () => {
    const s = set(abc, []);
    expect(s.has(abc)).toBe(true);
    expect(s.has(ab)).toBe(false);
    expect(s.has([])).toBe(false);
    expect(s.size()).toBe(1);
  });

  it.each<[string, FieldSet, FieldSet, string[]]>([
    ['union', set(a, ab), set(ab, x), ['.a', '.x', '.a.b']],
    ['union of disjoint subtrees', set(abc), set(path('a', 'd')), ['.a.b.c', '.a.d']],
  ])('%s', (_name, s1, s2, want) => {
    expect(strings(s1.union(s2)).sort()).toEqual(want.sort());
  });

  it.each<[string, FieldSet, FieldSet, string[]]>([
    ['leaves in both', set(a, ab, x), set(ab, x, path('y')), ['.x', '.a.b']],
    ['nothing shared', set(a), set(ab), []],
  ])('intersection: %s', (_name, s1, s2, want) => {
    expect(strings(s1.intersection(s2)).sort()).toEqual(want.sort());
  });

  it.each<[string, FieldSet, FieldSet, string[], string[]]>([
    // [name, s, s2, difference, recursive difference]
    ['parent minus child keeps the parent', set(a, ab), set(ab), ['.a'], ['.a']],
    [
      'child minus parent keeps the child (difference) or drops it (recursive)',
      set(abc, x),
      set(a),
      ['.x', '.a.b.c'],
      ['.x'],
    ],
    ['same sets', set(a, abc), set(a, abc), [], []],
  ])('difference: %s', (_name, s1, s2, diff, rdiff) => {
    expect(strings(s1.difference(s2)).sort()).toEqual(diff.sort());
    expect(strings(s1.recursiveDifference(s2)).sort()).toEqual(rdiff.sort());
  });

  it('iterates members of a level before its children, in path-element order', () => {
    const s = set(path('b'), path('a', 'z'), path('a'), path('c', v(2)), path('c', v(1)));
    expect(strings(s)).toEqual(['.a', '.b', '.a.z', '.c[=1]', '.c[=2]']);
  });

  it('withPrefix and equality', () => {
    const s = set(abc, path('a', 'd'));
    expect(strings(s.withPrefix(f('a')))).toEqual(['.d', '.b.c']);
    expect(s.withPrefix(f('zz')).empty()).toBe(true);
    expect(s.equals(set(path('a', 'd'), abc))).toBe(true);
    expect(s.equals(set(abc))).toBe(false);
  });
});

describe('FieldsV1', () => {
  // Golden data of structured-merge-diff's serialize_test.go (TestSerializeV1GoldenData).
  const golden = [
    `{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\\"name\\":\\"first\\"}":{},"k:{\\"name\\":\\"second\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\\"aa\\"":{},"v:\\"ab\\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}`,
    `{"f:aaa":{"k:{\\"name\\":\\"second\\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},"f:aab":{"f:aaa":{},"f:aaf":{"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{}}},"k:{\\"name\\":\\"first\\"}":{}},"f:aac":{"f:aaa":{"v:1":{}},"f:aac":{},"v:3":{"k:{\\"name\\":\\"second\\"}":{}}},"i:1":{"i:3":{"f:aaf":{}}}}`,
  ];

  it.each(golden)('round-trips golden data byte for byte (%#)', (text) => {
    expect(JSON.stringify(toFieldsV1(fromFieldsV1(JSON.parse(text))))).toBe(text);
  });

  it('marks a member with children with "." before its children, as structured-merge-diff writes it', () => {
    const s = set(path('metadata', 'labels'), path('metadata', 'labels', 'app'), path('data'));
    expect(JSON.stringify(toFieldsV1(s))).toBe('{"f:data":{},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}');
    expect(
      fromFieldsV1({ 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:data': {} }).equals(s),
    ).toBe(true);
  });

  it('drops keys of unknown kinds and rejects malformed ones', () => {
    expect(JSON.stringify(toFieldsV1(fromFieldsV1({ 'f:aaa': {}, 'r:aab': {} })))).toBe('{"f:aaa":{}}');
    expect(() => fromFieldsV1({ 'f:a': { 'k:[': {} } })).toThrow();
    expect(() => fromFieldsV1([])).toThrow();
  });
});
