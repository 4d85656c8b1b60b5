import { describe, expect, test } from 'vitest';
import { causeText } from '../api/validation.js';
import { CelValidator } from './cel/validator.js';
import { compileSchema } from './compile.js';
import { toStructural } from './structural.js';
import type { JSONSchemaProps, ValidationRule } from './types.js';

const specWith = (rules: ValidationRule[], props: Record<string, JSONSchemaProps> = {}): JSONSchemaProps => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': rules,
      properties: {
        replicas: { type: 'integer' },
        max: { type: 'integer' },
        name: { type: 'string', maxLength: 20 },
        ratio: { type: 'number' },
        port: { 'x-kubernetes-int-or-string': true },
        tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } },
        labels: {
          type: 'object',
          maxProperties: 10,
          additionalProperties: { type: 'string', maxLength: 10 },
        },
        url: { type: 'string', maxLength: 100 },
        mem: { type: 'string', maxLength: 10 },
        ...props,
      },
    },
  },
});

const run = (rules: ValidationRule[], spec: unknown, oldSpec?: unknown) => {
  const v = new CelValidator(toStructural(specWith(rules)));
  return v.validate({ spec }, oldSpec === undefined ? undefined : { spec: oldSpec }).map(causeText);
};

describe('CEL rules', () => {
  test.each<[string, ValidationRule, unknown, string[]]>([
    ['passes', { rule: 'self.replicas <= self.max' }, { replicas: 1, max: 2 }, []],
    [
      'default message',
      { rule: 'self.replicas <= self.max' },
      { replicas: 3, max: 2 },
      ['spec: Invalid value: "object": failed rule: self.replicas <= self.max'],
    ],
    [
      'custom message',
      { rule: 'self.replicas <= self.max', message: 'too many' },
      { replicas: 3, max: 2 },
      ['spec: Invalid value: "object": too many'],
    ],
    [
      'messageExpression',
      {
        rule: 'self.replicas <= self.max',
        messageExpression: "'replicas ' + string(self.replicas) + ' > ' + string(self.max)",
      },
      { replicas: 3, max: 2 },
      ['spec: Invalid value: "object": replicas 3 > 2'],
    ],
    [
      // Only the fields the rule and its message read are converted for CEL: the message's own
      // field must be there too.
      'messageExpression reading a field the rule does not',
      { rule: 'self.replicas <= self.max', messageExpression: "'too many for ' + self.name" },
      { replicas: 3, max: 2, name: 'web', tags: ['a'], labels: { a: 'b' } },
      ['spec: Invalid value: "object": too many for web'],
    ],
    [
      'has() of an absent field with other fields present',
      { rule: 'has(self.name) || self.replicas == 0', message: 'name or no replicas' },
      { replicas: 1, max: 2, tags: ['a'] },
      ['spec: Invalid value: "object": name or no replicas'],
    ],
    [
      'reason Forbidden',
      { rule: 'self.replicas < 5', reason: 'FieldValueForbidden', message: 'no' },
      { replicas: 7 },
      ['spec: Forbidden: no'],
    ],
    [
      'reason Required',
      { rule: 'has(self.name)', reason: 'FieldValueRequired', message: 'name is required' },
      {},
      ['spec: Required value: name is required'],
    ],
    [
      'reason Duplicate',
      { rule: 'false', reason: 'FieldValueDuplicate' },
      {},
      ['spec: Duplicate value: "object"'],
    ],
    [
      'fieldPath',
      { rule: 'self.replicas < 5', fieldPath: '.replicas' },
      { replicas: 7 },
      ['spec.replicas: Invalid value: "object": failed rule: self.replicas < 5'],
    ],
    ['integers are int', { rule: 'self.replicas / 2 == 1' }, { replicas: 3 }, []],
    ['numbers are double', { rule: 'self.ratio == 0.5' }, { ratio: 0.5 }, []],
    [
      'int-or-string is dyn',
      { rule: 'type(self.port) == string ? self.port.endsWith("%") : self.port > 0' },
      { port: '50%' },
      [],
    ],
    [
      'missing key',
      { rule: 'self.name == "x"' },
      {},
      ['spec: Invalid value: "object": no such key: name evaluating rule: self.name == "x"'],
    ],
    ['has()', { rule: '!has(self.name) || self.name.size() > 2' }, {}, []],
    [
      'all()',
      { rule: 'self.tags.all(t, t.startsWith("a"))' },
      { tags: ['ab', 'b'] },
      ['spec: Invalid value: "object": failed rule: self.tags.all(t, t.startsWith("a"))'],
    ],
    ['exists_one()', { rule: 'self.tags.exists_one(t, t == "a")' }, { tags: ['a', 'b'] }, []],
    [
      'map() filter()',
      { rule: 'self.tags.filter(t, t.size() > 1).map(t, t.upperAscii()) == ["AB"]' },
      { tags: ['ab', 'b'] },
      [],
    ],
    ['map keys', { rule: 'self.labels.all(k, k.startsWith("app"))' }, { labels: { app: 'x' } }, []],
    [
      'strings ext',
      {
        rule: 'self.name.replace("-", "_").split("_").join(".") == "a.b" && self.name.indexOf("-") == 1 && self.name.lowerAscii() == "a-b"',
      },
      { name: 'a-b' },
      [],
    ],
    [
      'lists library',
      {
        rule: '[3, 1, 2].sum() == 6 && [1, 2].isSorted() && [4, 2].min() == 2 && [4, 2].max() == 4 && [1, 2, 3].indexOf(2) == 1',
      },
      {},
      [],
    ],
    [
      'regex library',
      { rule: 'self.name.find("[0-9]+") == "12" && self.name.findAll("[a-z]") == ["a", "b"]' },
      { name: 'a12b' },
      [],
    ],
    [
      'quantity library',
      { rule: 'quantity(self.mem).isGreaterThan(quantity("1Gi")) && isQuantity("500m")' },
      { mem: '2Gi' },
      [],
    ],
    [
      'url library',
      {
        rule: 'isURL(self.url) && url(self.url).getHost() == "example.com:8080" && url(self.url).getScheme() == "https"',
      },
      { url: 'https://example.com:8080/x' },
      [],
    ],
    [
      'format library',
      { rule: '!format.dns1123Label().validate(self.name).hasValue()' },
      { name: 'Bad_Name' },
      ['spec: Invalid value: "object": failed rule: !format.dns1123Label().validate(self.name).hasValue()'],
    ],
    ['matches', { rule: 'self.name.matches("^[a-z]+$")' }, { name: 'abc' }, []],
  ])('%s', (_n, rule, spec, expected) => {
    expect(run([rule], spec)).toEqual(expected);
  });

  test('transition rules run only on update', () => {
    const rule = { rule: 'self.replicas >= oldSelf.replicas', message: 'no scale down' };
    expect(run([rule], { replicas: 1 })).toEqual([]);
    expect(run([rule], { replicas: 1 }, { replicas: 2 })).toEqual([
      'spec: Invalid value: "object": no scale down',
    ]);
    expect(run([rule], { replicas: 3 }, { replicas: 2 })).toEqual([]);
  });

  test('optionalOldSelf evaluates on create with oldSelf absent', () => {
    const rule = {
      rule: 'oldSelf.hasValue() || self.replicas == 1',
      optionalOldSelf: true,
      message: 'start with one',
    };
    expect(run([rule], { replicas: 2 })).toEqual(['spec: Invalid value: "object": start with one']);
    expect(run([rule], { replicas: 2 }, { replicas: 1 })).toEqual([]);
  });

  test('compile errors are reported by the compiler with cel-go positions', () => {
    const v = new CelValidator(toStructural(specWith([{ rule: 'self.nope > 1' }])));
    const node = toStructural(specWith([{ rule: 'self.nope > 1' }])).properties?.spec;
    const compiled = v.compiler.compile(v.compiler.root.properties?.spec ?? node!);
    expect(compiled[0]?.error?.detail).toBe(
      "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 1\n | ....^",
    );
  });

  test('rules on list items get item paths', () => {
    const schema = specWith([], {
      items: {
        type: 'array',
        maxItems: 5,
        items: {
          type: 'object',
          'x-kubernetes-validations': [{ rule: 'self.n > 0', message: 'positive' }],
          properties: { n: { type: 'integer' } },
        },
      },
    });
    const out = new CelValidator(toStructural(schema))
      .validate({ spec: { items: [{ n: 1 }, { n: 0 }] } })
      .map(causeText);
    expect(out).toEqual(['spec.items[1]: Invalid value: "object": positive']);
  });

  test('root rules report <nil>', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      'x-kubernetes-validations': [{ rule: 'self.metadata.name.startsWith("a")' }],
      properties: {},
    };
    const out = new CelValidator(toStructural(schema)).validate({ metadata: { name: 'b' } }).map(causeText);
    expect(out).toEqual(['<nil>: Invalid value: "object": failed rule: self.metadata.name.startsWith("a")']);
  });

  test('runtime cost per call is limited', () => {
    const schema = specWith([], {
      big: {
        type: 'array',
        items: { type: 'string' },
        'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y || x != y))' }],
      },
    });
    const big = Array.from({ length: 2000 }, (_, i) => String(i));
    const out = new CelValidator(toStructural(schema)).validate({ spec: { big } }).map(causeText);
    expect(out).toEqual([
      `spec.big: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, x == y || x != y))`,
    ]);
  });

  test('schema errors block CEL like the apiserver', () => {
    const c = compileSchema(specWith([{ rule: 'self.replicas < 5' }]));
    expect(c.validate({ spec: { replicas: 'x' } }).map(causeText)).toEqual([
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  test('unchanged values ratchet into warnings on update', () => {
    const c = compileSchema(specWith([{ rule: 'self.replicas < 5', message: 'small' }]));
    const warnings: string[] = [];
    expect(c.validate({ spec: { replicas: 7 } }, { spec: { replicas: 7 } }, { warnings })).toEqual([]);
    expect(warnings).toEqual(['spec: Invalid value: "object": small']);
  });
});
