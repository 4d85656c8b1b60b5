import { describe, expect, test } from 'vitest';
import { compileSchema } from './compile.js';
import type { JSONSchemaProps } from './types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        known: { type: 'string' },
        items: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
        free: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { inner: { type: 'object', properties: { x: { type: 'string' } } } },
        },
        map: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { v: { type: 'string' } } },
        },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object' } },
        },
      },
    },
  },
};

describe('prune', () => {
  test.each<[string, Record<string, unknown>, string[], Record<string, unknown>]>([
    ['nothing unknown', { spec: { known: 'a' } }, [], { spec: { known: 'a' } }],
    ['unknown top-level field', { spec: {}, extra: 1 }, ['extra'], { spec: {} }],
    ['unknown nested field', { spec: { foo: 1, known: 'a' } }, ['spec.foo'], { spec: { known: 'a' } }],
    [
      'unknown in list items',
      { spec: { items: [{ a: 'x', b: 1 }] } },
      ['spec.items[0].b'],
      { spec: { items: [{ a: 'x' }] } },
    ],
    [
      'preserved unknown fields, pruned known',
      { spec: { free: { any: 1, inner: { x: 'a', y: 2 } } } },
      ['spec.free.inner.y'],
      { spec: { free: { any: 1, inner: { x: 'a' } } } },
    ],
    [
      'additionalProperties values',
      { spec: { map: { k: { v: 'a', w: 1 } } } },
      ['spec.map.k.w'],
      { spec: { map: { k: { v: 'a' } } } },
    ],
    [
      'root and embedded apiVersion/kind/metadata are kept',
      {
        apiVersion: 'x/v1',
        kind: 'X',
        metadata: { name: 'a' },
        spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {}, other: 1 } },
      },
      ['spec.template.other'],
      {
        apiVersion: 'x/v1',
        kind: 'X',
        metadata: { name: 'a' },
        spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} } },
      },
    ],
    [
      'unknown metadata fields',
      { metadata: { name: 'a', bogus: 1 }, spec: {} },
      ['metadata.bogus'],
      { metadata: { name: 'a' }, spec: {} },
    ],
    ['paths are sorted', { spec: { z: 1, a: 2 }, b: 1 }, ['b', 'spec.a', 'spec.z'], { spec: {} }],
  ])('%s', (_n, obj, paths, after) => {
    expect(compileSchema(schema).prune(obj)).toEqual(paths);
    expect(obj).toEqual(after);
  });
});
