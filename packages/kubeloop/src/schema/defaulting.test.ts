import { describe, expect, test } from 'vitest';
import { compileSchema } from './compile.js';
import type { JSONSchemaProps } from './types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', default: 1 },
        strategy: {
          type: 'object',
          default: { type: 'Rolling' },
          properties: { type: { type: 'string' }, max: { type: 'integer', default: 2 } },
        },
        nullableWithDefault: { type: 'string', nullable: true, default: 'd' },
        plainNull: { type: 'string' },
        nullableNull: { type: 'string', nullable: true },
        ports: {
          type: 'array',
          items: {
            type: 'object',
            default: { port: 80 },
            properties: { port: { type: 'integer', default: 8080 }, name: { type: 'string' } },
          },
        },
        env: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { value: { type: 'string', default: 'v' } } },
        },
      },
    },
  },
};

const defaulted = (obj: Record<string, unknown>) => {
  compileSchema(schema).applyDefaults(obj);
  return obj;
};

describe('applyDefaults', () => {
  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['absent spec stays absent', {}, {}],
    [
      'scalar default on an existing object',
      { spec: {} },
      { spec: { replicas: 1, strategy: { type: 'Rolling', max: 2 }, nullableWithDefault: 'd' } },
    ],
    [
      'present values are kept',
      { spec: { replicas: 5, nullableWithDefault: 'x' } },
      { spec: { replicas: 5, strategy: { type: 'Rolling', max: 2 }, nullableWithDefault: 'x' } },
    ],
    [
      'non-nullable null takes the default',
      { spec: { replicas: null } },
      { spec: { replicas: 1, strategy: { type: 'Rolling', max: 2 }, nullableWithDefault: 'd' } },
    ],
    [
      'nullable null is kept',
      { spec: { nullableWithDefault: null } },
      { spec: { replicas: 1, strategy: { type: 'Rolling', max: 2 }, nullableWithDefault: null } },
    ],
    [
      'non-nullable null without default is dropped',
      { spec: { plainNull: null, nullableNull: null } },
      {
        spec: {
          replicas: 1,
          strategy: { type: 'Rolling', max: 2 },
          nullableWithDefault: 'd',
          nullableNull: null,
        },
      },
    ],
    [
      'list items are defaulted',
      { spec: { ports: [{ name: 'a' }, null] } },
      {
        spec: {
          replicas: 1,
          strategy: { type: 'Rolling', max: 2 },
          nullableWithDefault: 'd',
          ports: [{ name: 'a', port: 8080 }, { port: 80 }],
        },
      },
    ],
    [
      'additionalProperties values are defaulted',
      { spec: { env: { A: {} } } },
      {
        spec: {
          replicas: 1,
          strategy: { type: 'Rolling', max: 2 },
          nullableWithDefault: 'd',
          env: { A: { value: 'v' } },
        },
      },
    ],
  ])('%s', (_n, input, expected) => {
    expect(defaulted(input)).toEqual(expected);
  });

  test('defaults are deep copies', () => {
    const a = defaulted({ spec: {} }) as { spec: { strategy: { type: string } } };
    a.spec.strategy.type = 'changed';
    const b = defaulted({ spec: {} }) as { spec: { strategy: { type: string } } };
    expect(b.spec.strategy.type).toBe('Rolling');
  });
});
