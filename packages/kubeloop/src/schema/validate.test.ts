import { describe, expect, test } from 'vitest';
import { ApiError } from '../api/status.js';
import { causeText } from '../api/validation.js';
import { compileSchema } from './compile.js';
import type { JSONSchemaProps } from './types.js';
import { validateValue } from './validate.js';

const obj = (spec: Record<string, JSONSchemaProps>, required?: string[]): JSONSchemaProps => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: spec, ...(required && { required }) } },
});
const texts = (schema: JSONSchemaProps, value: unknown) => validateValue(schema, value).map(causeText);

type Row = [name: string, schema: JSONSchemaProps, value: unknown, expected: string[]];
const table = (rows: Row[]) =>
  test.each(rows)('%s', (_n, schema, value, expected) => {
    expect(texts(obj({ x: schema }), { spec: { x: value } })).toEqual(expected);
  });

describe('types', () => {
  table([
    ['integer ok', { type: 'integer' }, 3, []],
    [
      'integer from string',
      { type: 'integer' },
      'a',
      ['spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"'],
    ],
    [
      'integer from float',
      { type: 'integer' },
      1.5,
      ['spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"'],
    ],
    ['number accepts integer', { type: 'number' }, 2, []],
    [
      'string from number',
      { type: 'string' },
      2,
      ['spec.x: Invalid value: "integer": spec.x in body must be of type string: "integer"'],
    ],
    [
      'boolean from string',
      { type: 'boolean' },
      'true',
      ['spec.x: Invalid value: "string": spec.x in body must be of type boolean: "string"'],
    ],
    [
      'array from object',
      { type: 'array', items: { type: 'string' } },
      {},
      ['spec.x: Invalid value: "object": spec.x in body must be of type array: "object"'],
    ],
    [
      'object from array',
      { type: 'object' },
      [],
      ['spec.x: Invalid value: "array": spec.x in body must be of type object: "array"'],
    ],
    [
      'null not nullable',
      { type: 'string' },
      null,
      ['spec.x: Invalid value: "null": spec.x in body must be of type string: "null"'],
    ],
  ]);
});

describe('nullable', () => {
  table([
    ['null nullable', { type: 'string', nullable: true }, null, []],
    ['null object nullable', { type: 'object', nullable: true }, null, []],
  ]);
});

describe('formats', () => {
  table([
    ['date-time ok', { type: 'string', format: 'date-time' }, '2024-01-02T03:04:05Z', []],
    [
      'date-time bad',
      { type: 'string', format: 'date-time' },
      'x',
      ['spec.x: Invalid value: "x": spec.x in body must be of type date-time: "x"'],
    ],
    ['date ok', { type: 'string', format: 'date' }, '2024-02-29', []],
    [
      'date bad day',
      { type: 'string', format: 'date' },
      '2023-02-29',
      ['spec.x: Invalid value: "2023-02-29": spec.x in body must be of type date: "2023-02-29"'],
    ],
    ['duration ok', { type: 'string', format: 'duration' }, '1h30m', []],
    [
      'duration bad',
      { type: 'string', format: 'duration' },
      'soon',
      ['spec.x: Invalid value: "soon": spec.x in body must be of type duration: "soon"'],
    ],
    ['byte ok', { type: 'string', format: 'byte' }, 'aGVsbG8=', []],
    [
      'byte bad',
      { type: 'string', format: 'byte' },
      'a',
      ['spec.x: Invalid value: "a": spec.x in body must be of type byte: "a"'],
    ],
    ['uuid ok', { type: 'string', format: 'uuid' }, '123e4567-e89b-12d3-a456-426614174000', []],
    [
      'email bad',
      { type: 'string', format: 'email' },
      'nope',
      ['spec.x: Invalid value: "nope": spec.x in body must be of type email: "nope"'],
    ],
    [
      'ipv4 bad',
      { type: 'string', format: 'ipv4' },
      '1.2.3',
      ['spec.x: Invalid value: "1.2.3": spec.x in body must be of type ipv4: "1.2.3"'],
    ],
    ['unknown format ignored', { type: 'string', format: 'k8s-short-name' }, 'ANY', []],
    ['int32 not range-checked', { type: 'integer', format: 'int32' }, 3_000_000_000, []],
  ]);
});

describe('enum', () => {
  table([
    ['member', { type: 'string', enum: ['a', 'b'] }, 'a', []],
    [
      'not member',
      { type: 'string', enum: ['a', 'b'] },
      'x',
      ['spec.x: Unsupported value: "x": supported values: "a", "b"'],
    ],
    [
      'numbers',
      { type: 'integer', enum: [1, 2] },
      3,
      ['spec.x: Unsupported value: 3: supported values: "1", "2"'],
    ],
  ]);
});

describe('pattern', () => {
  table([
    ['match', { type: 'string', pattern: '^[a-z]+$' }, 'abc', []],
    [
      'no match',
      { type: 'string', pattern: '^[a-z]+$' },
      'A',
      [`spec.x: Invalid value: "A": spec.x in body should match '^[a-z]+$'`],
    ],
    ['RE2 \\z', { type: 'string', pattern: '^a\\z' }, 'a', []],
    ['RE2 posix class', { type: 'string', pattern: '^[[:digit:]]+$' }, '12', []],
  ]);
});

describe('bounds', () => {
  table([
    [
      'maximum',
      { type: 'integer', maximum: 10 },
      11,
      ['spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10'],
    ],
    [
      'exclusive maximum',
      { type: 'integer', maximum: 10, exclusiveMaximum: true },
      10,
      ['spec.x: Invalid value: 10: spec.x in body should be less than 10'],
    ],
    [
      'minimum',
      { type: 'integer', minimum: 1 },
      0,
      ['spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1'],
    ],
    [
      'exclusive minimum',
      { type: 'number', minimum: 0, exclusiveMinimum: true },
      0,
      ['spec.x: Invalid value: 0: spec.x in body should be greater than 0'],
    ],
    [
      'float maximum',
      { type: 'number', maximum: 1000000 },
      1000000.5,
      ['spec.x: Invalid value: 1.0000005e+06: spec.x in body should be less than or equal to 1e+06'],
    ],
    [
      'multipleOf',
      { type: 'integer', multipleOf: 3 },
      4,
      ['spec.x: Invalid value: 4: spec.x in body should be a multiple of 3'],
    ],
    [
      'multipleOf float',
      { type: 'number', multipleOf: 0.5 },
      1.25,
      ['spec.x: Invalid value: 1.25: spec.x in body should be a multiple of 0.5'],
    ],
  ]);
});

describe('lengths', () => {
  table([
    [
      'maxLength',
      { type: 'string', maxLength: 3 },
      'abcd',
      ['spec.x: Too long: may not be more than 3 bytes'],
    ],
    ['maxLength counts code points', { type: 'string', maxLength: 3 }, 'ééé', []],
    ['maxLength emoji', { type: 'string', maxLength: 1 }, '😀', []],
    [
      'minLength',
      { type: 'string', minLength: 2 },
      'a',
      ['spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long'],
    ],
  ]);
});

describe('items', () => {
  table([
    [
      'item type',
      { type: 'array', items: { type: 'integer' } },
      [1, 'a'],
      ['spec.x[1]: Invalid value: "string": spec.x[1] in body must be of type integer: "string"'],
    ],
    [
      'maxItems',
      { type: 'array', maxItems: 1, items: { type: 'string' } },
      ['a', 'b'],
      ['spec.x: Too many: 2: must have at most 1 items'],
    ],
    [
      'minItems',
      { type: 'array', minItems: 1, items: { type: 'string' } },
      [],
      ['spec.x: Invalid value: 0: spec.x in body should have at least 1 items'],
    ],
    [
      'uniqueItems',
      { type: 'array', uniqueItems: true, items: { type: 'string' } },
      ['a', 'a'],
      [`spec.x: Invalid value: "": spec.x in body shouldn't contain duplicates`],
    ],
  ]);
});

describe('properties', () => {
  table([
    [
      'nested type',
      { type: 'object', properties: { a: { type: 'string' } } },
      { a: 1 },
      ['spec.x.a: Invalid value: "integer": spec.x.a in body must be of type string: "integer"'],
    ],
    [
      'additionalProperties schema',
      { type: 'object', additionalProperties: { type: 'string' } },
      { k: 1 },
      ['spec.x.k: Invalid value: "integer": spec.x.k in body must be of type string: "integer"'],
    ],
    [
      'maxProperties',
      { type: 'object', maxProperties: 1, additionalProperties: { type: 'string' } },
      { a: 'x', b: 'y' },
      ['spec.x: Too many: 2: must have at most 1 items'],
    ],
    [
      'minProperties',
      { type: 'object', minProperties: 1 },
      {},
      ['spec.x: Invalid value: 0: spec.x in body should have at least 1 properties'],
    ],
  ]);
});

describe('required', () => {
  test('missing required', () => {
    expect(texts(obj({ target: { type: 'string' } }, ['target']), { spec: {} })).toEqual([
      'spec.target: Required value',
    ]);
  });
  test('required at the root', () => {
    expect(
      texts({ type: 'object', required: ['spec'], properties: { spec: { type: 'object' } } }, {}),
    ).toEqual(['spec: Required value']);
  });
});

describe('int-or-string', () => {
  const ios: JSONSchemaProps = { 'x-kubernetes-int-or-string': true };
  table([
    ['int', ios, 3, []],
    ['string', ios, '50%', []],
    [
      'bool',
      ios,
      true,
      ['spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"'],
    ],
  ]);
});

// kube-openapi's schemaPropsValidator, measured against kube-apiserver: the path quoted (%q),
// anyOf, oneOf, allOf, not in that order, allOf's own message after its branches' errors.
describe('anyOf, oneOf, allOf, not', () => {
  const ab = { a: { type: 'string' }, b: { type: 'string' } } as const;
  const req = (k: string): JSONSchemaProps => ({ required: [k] });
  const NONE = '<nil>: Invalid value: ""';
  table([
    [
      "anyOf, none valid: its message, then the first branch's errors",
      { type: 'object', properties: ab, anyOf: [req('a'), req('b')] },
      {},
      [`${NONE}: "spec.x" must validate at least one schema (anyOf)`, 'spec.x.a: Required value'],
    ],
    [
      'oneOf, none valid',
      { type: 'object', properties: ab, oneOf: [req('a'), req('b')] },
      {},
      [
        `${NONE}: "spec.x" must validate one and only one schema (oneOf). Found none valid`,
        'spec.x.a: Required value',
      ],
    ],
    [
      'oneOf, two valid',
      { type: 'object', properties: ab, oneOf: [req('a'), req('b')] },
      { a: '1', b: '2' },
      [`${NONE}: "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives`],
    ],
    [
      'allOf, one failing',
      { type: 'integer', allOf: [{ minimum: 3 }, { maximum: 5 }] },
      7,
      [
        'spec.x: Invalid value: 7: spec.x in body should be less than or equal to 5',
        `${NONE}: "spec.x" must validate all the schemas (allOf)`,
      ],
    ],
    [
      'allOf, none valid',
      { type: 'object', properties: ab, allOf: [req('a'), req('b')] },
      {},
      [
        'spec.x.a: Required value',
        'spec.x.b: Required value',
        `${NONE}: "spec.x" must validate all the schemas (allOf). None validated`,
      ],
    ],
    [
      'not',
      { type: 'object', properties: ab, not: req('a') },
      { a: '1' },
      [`${NONE}: "spec.x" must not validate the schema (not)`],
    ],
  ]);
});

describe('preserve-unknown-fields', () => {
  table([
    ['anything', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, { a: [1, { b: 2 }] }, []],
  ]);
});

describe('ApiError rendering', () => {
  test('a CR 422 as the server returns it and kubectl prints it', () => {
    const c = compileSchema(obj({ replicas: { type: 'integer', minimum: 1, maximum: 10 } }));
    const causes = c.validate({ spec: { replicas: 11 } });
    expect(causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.replicas',
        message: 'Invalid value: 11: spec.replicas in body should be less than or equal to 10',
      },
    ]);
    const err = ApiError.invalid({ group: 'samplecontroller.k8s.io', kind: 'Foo' }, 'example-foo', causes);
    expect(err.message).toBe(
      'Foo.samplecontroller.k8s.io "example-foo" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    );
    // kubectl builds "The <details.kind> "<name>" is invalid: <causes>" from details.
    expect(err.details?.kind).toBe('Foo');
  });
});

describe('order of causes', () => {
  test('properties in sorted order, then required; a property count error does not stop the rest', () => {
    const spec: JSONSchemaProps = {
      type: 'object',
      required: ['zz', 'aa'],
      maxProperties: 2,
      properties: {
        c: { type: 'string', pattern: '^x$' },
        b: { type: 'integer', maximum: 3 },
        a: { type: 'string', minLength: 5 },
        zz: { type: 'string' },
        aa: { type: 'string' },
      },
      additionalProperties: false,
    };
    const schema: JSONSchemaProps = { type: 'object', properties: { spec } };
    const causes = validateValue(schema, { spec: { c: 'y', b: 5, q: 1, a: 'abc', p: 2 } });
    expect(causes.map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec: Too many: 5: must have at most 2 items',
      'spec: Invalid value: "p": spec.p in body is a forbidden property',
      'spec: Invalid value: "q": spec.q in body is a forbidden property',
      'spec.a: Invalid value: "abc": spec.a in body should be at least 5 chars long',
      'spec.b: Invalid value: 5: spec.b in body should be less than or equal to 3',
      'spec.c: Invalid value: "y": spec.c in body should match \'^x$\'',
      'spec.zz: Required value',
      'spec.aa: Required value',
    ]);
  });
});
