import { describe, expect, it } from 'vitest';
import {
  escapeFieldValue,
  type FieldRequirement,
  fieldSelectorFromSet,
  formatFieldSelector,
  matchesFields,
  parseFieldSelector,
  requiresExactFieldMatch,
  unescapeFieldValue,
} from './fields.js';
import { ApiError } from './status.js';

const term = (field: string, operator: FieldRequirement['operator'], value: string): FieldRequirement => ({
  field,
  operator,
  value,
});

function badRequest(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe(400);
    expect((e as ApiError).reason).toBe('BadRequest');
    return (e as ApiError).status.message ?? '';
  }
  throw new Error('expected an ApiError');
}

describe('parseFieldSelector', () => {
  it.each<[string, FieldRequirement[], string]>([
    ['', [], ''],
    [',,', [], ''],
    ['a=b', [term('a', '=', 'b')], 'a=b'],
    ['a==b', [term('a', '==', 'b')], 'a=b'],
    ['a!=b', [term('a', '!=', 'b')], 'a!=b'],
    ['a=', [term('a', '=', '')], 'a='],
    ['a!=', [term('a', '!=', '')], 'a!='],
    ['=b', [term('', '=', 'b')], '=b'],
    ['a = b', [term('a ', '=', ' b')], 'a = b'],
    [
      'metadata.name=foo,status.phase!=Running',
      [term('metadata.name', '=', 'foo'), term('status.phase', '!=', 'Running')],
      'metadata.name=foo,status.phase!=Running',
    ],
    ['b=1,a=2', [term('a', '=', '2'), term('b', '=', '1')], 'a=2,b=1'],
    ['a=1,,b=2,', [term('a', '=', '1'), term('b', '=', '2')], 'a=1,b=2'],
    ['a=b\\,c', [term('a', '=', 'b,c')], 'a=b\\,c'],
    ['a=b\\=c', [term('a', '=', 'b=c')], 'a=b\\=c'],
    ['a=b\\\\c', [term('a', '=', 'b\\c')], 'a=b\\\\c'],
    ['a=\\\\,b=c', [term('a', '=', '\\'), term('b', '=', 'c')], 'a=\\\\,b=c'],
    ['a==\\=', [term('a', '==', '=')], 'a=\\='],
    ['a=ünï cödé', [term('a', '=', 'ünï cödé')], 'a=ünï cödé'],
    [
      'spec.nodeName=node-1,metadata.namespace==default',
      [term('metadata.namespace', '==', 'default'), term('spec.nodeName', '=', 'node-1')],
      'metadata.namespace=default,spec.nodeName=node-1',
    ],
  ])('%j', (input, want, formatted) => {
    const sel = parseFieldSelector(input);
    expect(sel).toEqual(want);
    expect(formatFieldSelector(sel)).toBe(formatted);
  });

  it.each<[string, string]>([
    ['abc', "invalid selector: 'abc'; can't understand 'abc'"],
    ['a=b,abc', "invalid selector: 'a=b,abc'; can't understand 'abc'"],
    ['a<b', "invalid selector: 'a<b'; can't understand 'a<b'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a!==b', 'invalid field selector: unescaped character in value: 61'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
    ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['a=\\ü', 'invalid field selector: invalid escape sequence: \\ü'],
  ])('rejects %j', (input, message) => {
    expect(badRequest(() => parseFieldSelector(input))).toBe(message);
  });
});

describe('escaping', () => {
  it.each<[string, string]>([
    ['plain', 'plain'],
    ['', ''],
    ['a,b', 'a\\,b'],
    ['a=b', 'a\\=b'],
    ['a\\b', 'a\\\\b'],
    ['!=,\\', '!\\=\\,\\\\'],
  ])('escapeFieldValue(%j) is %j', (raw, escaped) => {
    expect(escapeFieldValue(raw)).toBe(escaped);
    expect(unescapeFieldValue(escaped)).toBe(raw);
  });

  it('rejects an unescaped comma in a value', () => {
    expect(badRequest(() => unescapeFieldValue('a,b'))).toBe(
      'invalid field selector: unescaped character in value: 44',
    );
  });

  it.each(['', 'x', 'a,b', 'a=b', 'a\\b', '\\,=\\', 'x!=y', 'a == b', 'ünï,cödé=😀', ',,,', '\\\\\\'])(
    'round-trips the value %j through a selector string',
    (value) => {
      const text = formatFieldSelector([term('f', '=', value), term('g', '!=', value)]);
      expect(parseFieldSelector(text)).toEqual([term('f', '=', value), term('g', '!=', value)]);
    },
  );
});

describe('matchesFields', () => {
  const fields: Record<string, string> = {
    'metadata.name': 'web',
    'metadata.namespace': 'default',
    'status.phase': 'Running',
  };
  const get = (f: string) => fields[f];

  it.each<[string, boolean]>([
    ['', true],
    ['metadata.name=web', true],
    ['metadata.name==web', true],
    ['metadata.name=db', false],
    ['metadata.name!=db', true],
    ['metadata.name!=web', false],
    ['metadata.name=web,status.phase=Running', true],
    ['metadata.name=web,status.phase=Pending', false],
    ['metadata.namespace!=kube-system,status.phase!=Failed', true],
    ['spec.unknown=', true],
    ['spec.unknown!=', false],
    ['spec.unknown=x', false],
    ['spec.unknown!=x', true],
  ])('%j is %s', (selector, want) => {
    expect(matchesFields(parseFieldSelector(selector), get)).toBe(want);
  });

  it('matches escaped values against the literal field value', () => {
    expect(matchesFields(parseFieldSelector('a=x\\,y\\=z'), (f) => (f === 'a' ? 'x,y=z' : undefined))).toBe(
      true,
    );
  });
});

describe('requiresExactFieldMatch and fieldSelectorFromSet', () => {
  it.each<[string, string, string | undefined]>([
    ['metadata.name=web', 'metadata.name', 'web'],
    ['metadata.name==web', 'metadata.name', 'web'],
    ['metadata.name!=web', 'metadata.name', undefined],
    ['metadata.namespace=a', 'metadata.name', undefined],
    ['metadata.name!=x,metadata.name=web', 'metadata.name', 'web'],
  ])('%j requires %j = %j', (selector, field, want) => {
    expect(requiresExactFieldMatch(parseFieldSelector(selector), field)).toBe(want);
  });

  it('builds equality terms from a set', () => {
    const sel = fieldSelectorFromSet({ 'metadata.name': 'a,b' });
    expect(formatFieldSelector(sel)).toBe('metadata.name=a\\,b');
    expect(matchesFields(sel, (f) => (f === 'metadata.name' ? 'a,b' : undefined))).toBe(true);
    expect(fieldSelectorFromSet(undefined)).toEqual([]);
  });
});
