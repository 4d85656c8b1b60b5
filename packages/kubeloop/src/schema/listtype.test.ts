import { describe, expect, test } from 'vitest';
import { causeText } from '../api/validation.js';
import { validateListSetsAndMaps } from './listtype.js';
import { compileGoRegexp, GoRegexpError } from './regex.js';
import { toStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';

const list = (x: JSONSchemaProps) =>
  toStructural({ type: 'object', properties: { spec: { type: 'object', properties: { l: x } } } });

describe('x-kubernetes-list-type', () => {
  test.each<[string, JSONSchemaProps, unknown, string[]]>([
    [
      'atomic allows duplicates',
      { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'string' } },
      ['a', 'a'],
      [],
    ],
    [
      'set of scalars',
      { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'integer' } },
      [1, 2, 1, 1],
      ['spec.l[2]: Duplicate value: 1'],
    ],
    [
      'set of objects',
      {
        type: 'array',
        'x-kubernetes-list-type': 'set',
        items: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
      },
      [{ a: 1 }, { a: 1 }],
      ['spec.l[1]: Duplicate value: map[string]interface {}{"a":1}'],
    ],
    [
      'map with one key',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' } } },
      },
      [{ name: 'a' }, { name: 'b' }, { name: 'a' }],
      ['spec.l[2]: Duplicate value: map[string]interface {}{"name":"a"}'],
    ],
    [
      'map with two keys',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['port', 'protocol'],
        items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string' } } },
      },
      [
        { port: 80, protocol: 'TCP' },
        { port: 80, protocol: 'UDP' },
        { port: 80, protocol: 'TCP' },
      ],
      ['spec.l[2]: Duplicate value: map[string]interface {}{"port":80, "protocol":"TCP"}'],
    ],
    [
      'map items must be objects',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object' },
      },
      ['x'],
      ['spec.l[0]: Invalid value: "x": must be an object for an array of list-type map'],
    ],
  ])('%s', (_n, schema, value, expected) => {
    expect(validateListSetsAndMaps(list(schema), { spec: { l: value } }).map(causeText)).toEqual(expected);
  });
});

describe('Go regular expressions', () => {
  test.each<[string, string, boolean]>([
    ['^[a-z]+\\z', 'abc', true],
    ['(?i)^abc$', 'ABC', true],
    ['^\\-x$', '-x', true],
    ['^[[:alpha:]]+$', 'Ab', true],
    ['^\\pL+$', 'é', true],
    ['^a{2}$', 'aa', true],
    ['^a{,2}$', 'a{,2}', true],
    ['^\\s$', '\u00a0', false],
  ])('%s matches %j: %s', (pattern, input, ok) => {
    expect(compileGoRegexp(pattern).test(input)).toBe(ok);
  });
  test.each<[string, string]>([
    ['a(?=b)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
    ['(\\w)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
    ['a{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
  ])('%s is rejected like Go', (pattern, message) => {
    expect(() => compileGoRegexp(pattern)).toThrow(new GoRegexpError(message));
  });
});
