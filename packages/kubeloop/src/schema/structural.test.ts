import { describe, expect, test } from 'vitest';
import { causeText } from '../api/validation.js';
import { StructuralConversionError, toStructural, validateStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';

const P = 'spec.versions[0].schema.openAPIV3Schema';
const run = (s: JSONSchemaProps) => validateStructural(s, P).map(causeText);
const spec = (x: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { spec: x } });

describe('validateStructural', () => {
  test.each<[string, JSONSchemaProps, string[]]>([
    ['valid', spec({ type: 'object', properties: { replicas: { type: 'integer' } } }), []],
    [
      'missing type on a field',
      spec({ type: 'object', properties: { replicas: {} } }),
      [
        `${P}.properties[spec].properties[replicas].type: Required value: must not be empty for specified object fields`,
      ],
    ],
    [
      'missing type at the root',
      { properties: {} },
      [`${P}.type: Required value: must not be empty at the root`],
    ],
    [
      'non-object root',
      { type: 'string' },
      [`${P}.type: Invalid value: "string": must be object at the root`],
    ],
    [
      'array without items',
      spec({ type: 'array' }),
      [`${P}.properties[spec].items: Required value: must be specified`],
    ],
    [
      'item without type',
      spec({ type: 'array', items: {} }),
      [`${P}.properties[spec].items.type: Required value: must not be empty for specified array items`],
    ],
    [
      'additionalProperties at the root',
      { type: 'object', additionalProperties: { type: 'string' } },
      [`${P}.additionalProperties: Forbidden: must not be used at the root`],
    ],
    [
      'type inside anyOf',
      spec({ type: 'object', anyOf: [{ type: 'object' }] }),
      [`${P}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`],
    ],
    [
      'field only in allOf',
      { type: 'object', allOf: [{ properties: { foo: {} } }] },
      [`${P}.properties[foo]: Required value: because it is defined in ${P}.allOf[0].properties[foo]`],
    ],
    [
      'metadata with more than names',
      {
        type: 'object',
        properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
      },
      [
        `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    ],
    [
      'metadata with name only',
      {
        type: 'object',
        properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 5 } } } },
      },
      [],
    ],
    [
      'embedded resource not an object',
      spec({ type: 'string', 'x-kubernetes-embedded-resource': true }),
      [
        `${P}.properties[spec].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
        `${P}.properties[spec].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`,
      ],
    ],
    [
      'embedded resource without properties',
      spec({ type: 'object', 'x-kubernetes-embedded-resource': true }),
      [
        `${P}.properties[spec].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
      ],
    ],
    [
      'int-or-string with preserve',
      spec({ 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true }),
      [
        `${P}.properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
      ],
    ],
    [
      'int-or-string anyOf pattern',
      spec({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }),
      [],
    ],
    [
      'invalid pattern',
      spec({ type: 'string', pattern: 'a(?=b)' }),
      [
        `${P}.properties[spec].pattern: Invalid value: "a(?=b)": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: \`(?=\``,
      ],
    ],
  ])('%s', (_n, s, expected) => {
    expect(run(s)).toEqual(expected);
  });

  test('errors are sorted by their text', () => {
    const out = run(spec({ type: 'object', properties: { b: {}, a: {} } }));
    expect(out).toEqual([...out].sort());
    expect(out).toHaveLength(2);
  });
});

describe('toStructural', () => {
  test.each<[JSONSchemaProps, string]>([
    [{ type: 'object', $ref: '#/x' }, "OpenAPIV3Schema '$ref' is not supported"],
    [{ type: 'object', definitions: { a: {} } }, "OpenAPIV3Schema 'definitions' is not supported"],
    [
      { type: 'array', items: [{ type: 'string' }] },
      "OpenAPIV3Schema 'items' must be a schema, but is an array",
    ],
  ])('%j rejected', (s, msg) => {
    expect(() => toStructural(s)).toThrow(new StructuralConversionError(msg));
  });
  test('keeps extensions and defaults', () => {
    const s = toStructural(
      spec({ type: 'object', default: {}, 'x-kubernetes-preserve-unknown-fields': true }),
    );
    expect(s.properties?.spec?.preserveUnknownFields).toBe(true);
    expect(s.properties?.spec?.default).toEqual({});
  });
});
