import { describe, expect, it } from 'vitest';
import { pathString } from './path.js';
import { builtinAtom, openApiAtom } from './schema.js';
import { FieldSet } from './set.js';
import {
  compareTyped,
  ensureNamedFieldsAreMembers,
  mergeTyped,
  removeItems,
  TypedError,
  toFieldSet,
  validateTyped,
} from './typed.js';

/** A schema with every kind of merge semantics. */
export const testSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    replicas: { type: 'integer' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    selector: {
      type: 'object',
      'x-kubernetes-map-type': 'atomic',
      properties: { matchLabels: { type: 'object', additionalProperties: { type: 'string' } } },
    },
    containers: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          image: { type: 'string' },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['port', 'protocol'],
            items: {
              type: 'object',
              properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } },
            },
          },
        },
      },
    },
    finalizers: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    args: { type: 'array', items: { type: 'string' } },
    config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};
const atom = openApiAtom(testSchema);
const paths = (s: FieldSet) => s.paths().map(pathString).sort();

describe('toFieldSet', () => {
  it.each<[string, unknown, string[]]>([
    ['scalars are members', { name: 'a', replicas: 1 }, ['.name', '.replicas']],
    [
      'keys of a map are members, the map field is not',
      { labels: { a: 'x', b: 'y' } },
      ['.labels.a', '.labels.b'],
    ],
    ['an empty granular map specifies nothing', { labels: {} }, []],
    ['an atomic map is one member', { selector: { matchLabels: { a: 'b' } } }, ['.selector']],
    [
      'list-map items are members with their fields',
      { containers: [{ name: 'app', image: 'nginx' }] },
      ['.containers[name="app"]', '.containers[name="app"].image', '.containers[name="app"].name'],
    ],
    [
      'a key field left out takes its schema default',
      { containers: [{ name: 'app', ports: [{ port: 80 }] }] },
      [
        '.containers[name="app"]',
        '.containers[name="app"].name',
        '.containers[name="app"].ports[port=80,protocol="TCP"]',
        '.containers[name="app"].ports[port=80,protocol="TCP"].port',
      ],
    ],
    [
      'set items are members by value',
      { finalizers: ['x', 'y'] },
      ['.finalizers[="x"]', '.finalizers[="y"]'],
    ],
    ['an atomic list is one member', { args: ['a', 'b'] }, ['.args']],
    [
      'unknown fields preserved: map keys are members, lists atomic',
      { config: { a: { b: 1 }, l: [1, 2] } },
      ['.config.a', '.config.a.b', '.config.l'],
    ],
  ])('%s', (_name, value, want) => {
    expect(paths(toFieldSet(value, atom))).toEqual(want.sort());
  });

  it('derives built-in list types from patch metadata: containers by name, ports by containerPort+protocol', () => {
    const deployment = builtinAtom('io.k8s.api.apps.v1.Deployment')!;
    const set = toFieldSet(
      {
        metadata: { finalizers: ['f'] },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: {
            spec: {
              containers: [{ name: 'web', ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }] }],
              tolerations: [{ key: 'k' }],
            },
          },
        },
      },
      deployment,
    );
    expect(paths(set)).toEqual(
      [
        '.metadata.finalizers[="f"]',
        '.spec.selector',
        '.spec.template.spec.containers[name="web"]',
        '.spec.template.spec.containers[name="web"].name',
        '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]',
        '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].containerPort',
        '.spec.template.spec.containers[name="web"].env[name="A"]',
        '.spec.template.spec.containers[name="web"].env[name="A"].name',
        '.spec.template.spec.containers[name="web"].env[name="A"].value',
        '.spec.template.spec.tolerations',
      ].sort(),
    );
  });
});

describe('validateTyped', () => {
  it.each<[string, unknown, string]>([
    ['a wrong scalar type', { replicas: 'three' }, '.replicas: expected numeric (int or float), got string'],
    ['an undeclared field', { spec: {} }, '.spec: field not declared in schema'],
    [
      'a list-map item without its key',
      { containers: [{ image: 'x' }] },
      '.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    ],
    ['duplicate keys', { finalizers: ['a', 'a'] }, '.finalizers: duplicate entries for key [="a"]'],
    [
      'a map item in a set',
      { finalizers: [{}] },
      ".finalizers: element 0: associative list without keys has an element that's a map type",
    ],
  ])('rejects %s', (_name, value, message) => {
    expect(() => validateTyped(value, atom)).toThrow(TypedError);
    expect(() => validateTyped(value, atom)).toThrow(message);
  });

  it('accepts duplicates when asked to (live objects)', () => {
    expect(() => validateTyped({ finalizers: ['a', 'a'] }, atom, true)).not.toThrow();
  });
});

describe('compareTyped', () => {
  it.each<[string, unknown, unknown, { added?: string[]; modified?: string[]; removed?: string[] }]>([
    ['a changed scalar', { replicas: 1 }, { replicas: 2 }, { modified: ['.replicas'] }],
    [
      'a new map: its keys and the map itself',
      {},
      { labels: { a: 'x' } },
      { added: ['.labels', '.labels.a'] },
    ],
    ['a removed map key', { labels: { a: 'x', b: 'y' } }, { labels: { a: 'x' } }, { removed: ['.labels.b'] }],
    [
      'a new list-map item',
      { containers: [{ name: 'a' }] },
      { containers: [{ name: 'a' }, { name: 'b', image: 'i' }] },
      { added: ['.containers[name="b"]', '.containers[name="b"].name', '.containers[name="b"].image'] },
    ],
    [
      'reordered list-map items are unchanged',
      { containers: [{ name: 'a' }, { name: 'b' }] },
      { containers: [{ name: 'b' }, { name: 'a' }] },
      {},
    ],
    ['an atomic list compares as a whole', { args: ['a'] }, { args: ['a', 'b'] }, { modified: ['.args'] }],
    ['null to a value', { name: null }, { name: 'x' }, { modified: ['.name'] }],
    ['an empty map appears as a leaf', {}, { labels: {} }, { added: ['.labels'] }],
  ])('%s', (_name, lhs, rhs, want) => {
    const c = compareTyped(lhs, rhs, atom);
    expect(paths(c.added)).toEqual((want.added ?? []).sort());
    expect(paths(c.modified)).toEqual((want.modified ?? []).sort());
    expect(paths(c.removed)).toEqual((want.removed ?? []).sort());
  });
});

describe('mergeTyped', () => {
  it.each<[string, unknown, unknown, unknown]>([
    ['configuration scalars win', { name: 'a', replicas: 1 }, { replicas: 2 }, { name: 'a', replicas: 2 }],
    [
      'granular maps merge',
      { labels: { a: '1', b: '2' } },
      { labels: { b: '3', c: '4' } },
      { labels: { a: '1', b: '3', c: '4' } },
    ],
    [
      'atomic maps are replaced',
      { selector: { matchLabels: { a: '1' } } },
      { selector: { matchLabels: { b: '2' } } },
      { selector: { matchLabels: { b: '2' } } },
    ],
    ['atomic lists are replaced', { args: ['a', 'b'] }, { args: ['c'] }, { args: ['c'] }],
    [
      'sets are unions, new items before the shared ones they precede',
      { finalizers: ['x', 'y'] },
      { finalizers: ['z', 'x'] },
      { finalizers: ['z', 'x', 'y'] },
    ],
    [
      'list-map items merge by key, live order first',
      { containers: [{ name: 'a', image: '1' }, { name: 'b', image: '2' }, { name: 'c' }] },
      { containers: [{ name: 'd' }, { name: 'a', image: '9' }] },
      { containers: [{ name: 'd' }, { name: 'a', image: '9' }, { name: 'b', image: '2' }, { name: 'c' }] },
    ],
    [
      'key defaults match items that omit the key field',
      { containers: [{ name: 'a', ports: [{ port: 80, protocol: 'TCP', extra: 1 }] }] },
      { containers: [{ name: 'a', ports: [{ port: 80 }] }] },
      { containers: [{ name: 'a', ports: [{ port: 80, protocol: 'TCP', extra: 1 }] }] },
    ],
    [
      'preserved unknown maps merge key by key',
      { config: { a: 1, b: { c: 2 } } },
      { config: { b: { d: 3 } } },
      { config: { a: 1, b: { c: 2, d: 3 } } },
    ],
  ])('%s', (_name, lhs, rhs, want) => {
    expect(mergeTyped(lhs, rhs, atom)).toEqual(want);
  });
});

describe('removeItems and named fields', () => {
  const value = {
    name: 'x',
    labels: { a: '1', b: '2' },
    containers: [{ name: 'a', image: 'i' }, { name: 'b' }],
    finalizers: ['f', 'g'],
  };

  it.each<[string, FieldSet, unknown]>([
    ['a scalar', FieldSet.of([{ field: 'name' }]), { ...value, name: undefined }],
    [
      'a list-map item',
      FieldSet.of([{ field: 'containers' }, { key: [{ name: 'name', value: 'b' }] }]),
      { ...value, containers: [{ name: 'a', image: 'i' }] },
    ],
    [
      'a field inside an item',
      FieldSet.of([{ field: 'containers' }, { key: [{ name: 'name', value: 'a' }] }, { field: 'image' }]),
      { ...value, containers: [{ name: 'a' }, { name: 'b' }] },
    ],
    ['a set value', FieldSet.of([{ field: 'finalizers' }, { value: 'f' }]), { ...value, finalizers: ['g'] }],
    [
      'every key of a map drops the emptied map',
      FieldSet.of([{ field: 'labels' }, { field: 'a' }], [{ field: 'labels' }, { field: 'b' }]),
      { ...value, labels: undefined },
    ],
  ])('removes %s', (_name, set, want) => {
    expect(removeItems(structuredClone(value), set, atom)).toEqual(JSON.parse(JSON.stringify(want)));
  });

  it('makes declared fields on the way to members members themselves', () => {
    const set = FieldSet.of(
      [{ field: 'labels' }, { field: 'a' }],
      [{ field: 'containers' }, { key: [{ name: 'name', value: 'a' }] }, { field: 'image' }],
      [{ field: 'config' }, { field: 'x' }, { field: 'y' }],
    );
    expect(paths(ensureNamedFieldsAreMembers(set, atom))).toEqual(
      ['.labels', '.labels.a', '.containers', '.containers[name="a"].image', '.config', '.config.x.y'].sort(),
    );
  });
});
