import { describe, expect, it } from 'vitest';
import {
  EVERYTHING,
  formatLabelSelector,
  isEverything,
  isNothing,
  type LabelSelector,
  labelSelectorFromObject,
  labelSelectorFromSet,
  matchesLabels,
  NOTHING,
  newRequirement,
  type Operator,
  parseLabelSelector,
  type Requirement,
  requiresExactLabelMatch,
} from './labels.js';
import { ApiError } from './status.js';

const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const QUALIFIED_NAME =
  "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const req = (key: string, operator: Operator, ...values: string[]): Requirement => ({
  key,
  operator,
  values,
});

/** Runs `fn`, expecting a 400 BadRequest ApiError, and returns its message. */
function badRequest(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    const err = e as ApiError;
    expect(err.code).toBe(400);
    expect(err.reason).toBe('BadRequest');
    return err.status.message ?? '';
  }
  throw new Error('expected an ApiError');
}

describe('parseLabelSelector', () => {
  it.each<[string, Requirement[], string]>([
    ['', [], ''],
    ['   ', [], ''],
    ['a=b', [req('a', '=', 'b')], 'a=b'],
    ['a==b', [req('a', '==', 'b')], 'a==b'],
    ['a!=b', [req('a', '!=', 'b')], 'a!=b'],
    [' a = b ', [req('a', '=', 'b')], 'a=b'],
    ['\ta\n!=\rb', [req('a', '!=', 'b')], 'a!=b'],
    ['a in (x,y)', [req('a', 'in', 'x', 'y')], 'a in (x,y)'],
    ['a in ( y , x , x )', [req('a', 'in', 'x', 'y')], 'a in (x,y)'],
    ['a notin (x)', [req('a', 'notin', 'x')], 'a notin (x)'],
    ['a in(x)', [req('a', 'in', 'x')], 'a in (x)'],
    ['a', [req('a', 'exists')], 'a'],
    ['!a', [req('a', '!')], '!a'],
    ['! a', [req('a', '!')], '!a'],
    ['a>1', [req('a', 'gt', '1')], 'a>1'],
    ['a<10', [req('a', 'lt', '10')], 'a<10'],
    ['a>9223372036854775807', [req('a', 'gt', '9223372036854775807')], 'a>9223372036854775807'],
    ['b=1,a=2', [req('a', '=', '2'), req('b', '=', '1')], 'a=2,b=1'],
    ['a=2,a=1', [req('a', '=', '2'), req('a', '=', '1')], 'a=2,a=1'],
    [
      'x in (foo,,baz),y,z notin ()',
      [req('x', 'in', '', 'baz', 'foo'), req('y', 'exists'), req('z', 'notin', '')],
      'x in (,baz,foo),y,z notin ()',
    ],
    ['a in (,x)', [req('a', 'in', '', 'x')], 'a in (,x)'],
    ['a in (x,)', [req('a', 'in', '', 'x')], 'a in (,x)'],
    ['a in (,)', [req('a', 'in', '')], 'a in ()'],
    ['a in (in)', [req('a', 'in', 'in')], 'a in (in)'],
    ['in=notin', [req('in', '=', 'notin')], 'in=notin'],
    ['notin notin (in,notin)', [req('notin', 'notin', 'in', 'notin')], 'notin notin (in,notin)'],
    ['a=', [req('a', '=', '')], 'a='],
    ['a=,b', [req('a', '=', ''), req('b', 'exists')], 'a=,b'],
    ['a!=,!b', [req('a', '!=', ''), req('b', '!')], 'a!=,!b'],
    ['example.com/app=web', [req('example.com/app', '=', 'web')], 'example.com/app=web'],
    [
      'app.kubernetes.io/name in (A_b.c-1)',
      [req('app.kubernetes.io/name', 'in', 'A_b.c-1')],
      'app.kubernetes.io/name in (A_b.c-1)',
    ],
    ['!b,a', [req('a', 'exists'), req('b', '!')], 'a,!b'],
  ])('%j', (input, want, formatted) => {
    const sel = parseLabelSelector(input);
    expect(sel).toEqual(want);
    expect(formatLabelSelector(sel)).toBe(formatted);
  });

  it.each<[string, string]>([
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a in', "unable to parse requirement: found '' expected: '('"],
    ['a in x', "unable to parse requirement: found 'x' expected: '('"],
    ['a in (x', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (x y)', "unable to parse requirement: found 'y', expected: ',' or ')'"],
    ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['a in (x,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['a,', "found '', expected: identifier after ','"],
    ['a,,b', "found ',', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b)', "found ')', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['!!a', "unable to parse requirement: found '!', expected: identifier"],
    ['a=(b)', "unable to parse requirement: found '(', expected: identifier"],
    ['a>=1', "unable to parse requirement: found '=', expected: identifier"],
    ['a=>1', "unable to parse requirement: found '>', expected: identifier"],
    ['a!b', "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"],
    ['a===b', "unable to parse requirement: found '=', expected: identifier"],
    ['-a', `unable to parse requirement: <nil>: Invalid value: "-a": ${NAME_PART}`],
    ['a/b/c=d', `unable to parse requirement: <nil>: Invalid value: "a/b/c": ${QUALIFIED_NAME}`],
    [
      'Example.com/a',
      "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ],
    ['a=-b', `unable to parse requirement: values[0][a]: Invalid value: "-b": ${LABEL_VALUE}`],
    ['a in (ok,-x)', `unable to parse requirement: values[0][a]: Invalid value: "-x": ${LABEL_VALUE}`],
    [
      `a=${'v'.repeat(64)}`,
      `unable to parse requirement: values[0][a]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
    ],
    [
      'a>x',
      `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
    [
      'a>x.',
      `unable to parse requirement: [values[0]: Invalid value: "x.": for 'Gt', 'Lt' operators, the value must be an integer, values[0][a]: Invalid value: "x.": ${LABEL_VALUE}]`,
    ],
    ['a>-1', `unable to parse requirement: values[0][a]: Invalid value: "-1": ${LABEL_VALUE}`],
    [
      'a<9223372036854775808',
      `unable to parse requirement: values[0]: Invalid value: "9223372036854775808": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
    [
      'a>',
      `unable to parse requirement: values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
  ])('rejects %j', (input, message) => {
    expect(badRequest(() => parseLabelSelector(input))).toBe(message);
  });

  it('stops at a NUL byte like the Go lexer does', () => {
    expect(parseLabelSelector('a\0')).toEqual([req('a', 'exists')]);
    expect(badRequest(() => parseLabelSelector('a\0b'))).toBe(
      "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    );
  });

  it.each([
    'a=b',
    'x in (foo,,baz),y,z notin ()',
    '!a,b!=c,d>5,e<7,f==g',
    'example.com/app in (web,db),tier notin (cache)',
    'a in (,)',
  ])('round-trips %j through its canonical string', (input) => {
    const sel = parseLabelSelector(input);
    const again = parseLabelSelector(formatLabelSelector(sel));
    expect(again).toEqual(sel);
    expect(formatLabelSelector(again)).toBe(formatLabelSelector(sel));
  });
});

describe('matchesLabels', () => {
  const labels = { app: 'web', tier: 'front', n: '5', empty: '' };
  it.each<[string, Record<string, string> | undefined, boolean]>([
    ['', labels, true],
    ['app=web', labels, true],
    ['app==web', labels, true],
    ['app=db', labels, false],
    ['missing=web', labels, false],
    ['app!=db', labels, true],
    ['app!=web', labels, false],
    ['missing!=x', labels, true],
    ['app in (web,db)', labels, true],
    ['app in (db)', labels, false],
    ['missing in (x)', labels, false],
    ['app notin (web)', labels, false],
    ['app notin (db)', labels, true],
    ['missing notin (x)', labels, true],
    ['app', labels, true],
    ['missing', labels, false],
    ['!app', labels, false],
    ['!missing', labels, true],
    ['empty', labels, true],
    ['empty=', labels, true],
    ['empty in ()', labels, true],
    ['app=', labels, false],
    ['missing=', labels, false],
    ['missing!=', labels, true],
    ['n>4', labels, true],
    ['n>5', labels, false],
    ['n<6', labels, true],
    ['n<5', labels, false],
    ['app>1', labels, false],
    ['app<1', labels, false],
    ['missing>1', labels, false],
    ['app=web,tier=front', labels, true],
    ['app=web,tier=back', labels, false],
    ['app=web,!tier', labels, false],
    ['', undefined, true],
    ['app', undefined, false],
    ['!app', undefined, true],
    ['app notin (web)', undefined, true],
    ['app!=web', undefined, true],
  ])('%j against %j is %s', (selector, ls, want) => {
    expect(matchesLabels(parseLabelSelector(selector), ls)).toBe(want);
  });

  it('compares integers beyond the safe range of a JS number exactly', () => {
    const big = { n: '9007199254740993' };
    expect(matchesLabels(parseLabelSelector('n>9007199254740992'), big)).toBe(true);
    expect(matchesLabels(parseLabelSelector('n<9007199254740993'), big)).toBe(false);
    expect(matchesLabels(parseLabelSelector('n>1'), { n: '9223372036854775808' })).toBe(false);
  });

  it('does not treat inherited properties as labels', () => {
    expect(matchesLabels(parseLabelSelector('toString'), {})).toBe(false);
    expect(matchesLabels(parseLabelSelector('!constructor'), {})).toBe(true);
  });
});

describe('NOTHING and EVERYTHING', () => {
  it('NOTHING matches no object and prints as an empty string', () => {
    expect(matchesLabels(NOTHING, {})).toBe(false);
    expect(matchesLabels(NOTHING, { a: 'b' })).toBe(false);
    expect(matchesLabels(NOTHING, undefined)).toBe(false);
    expect(formatLabelSelector(NOTHING)).toBe('');
    expect(isNothing(NOTHING)).toBe(true);
    expect(isEverything(NOTHING)).toBe(false);
  });

  it('EVERYTHING and a parsed empty selector match every object', () => {
    expect(matchesLabels(EVERYTHING, { a: 'b' })).toBe(true);
    expect(matchesLabels(parseLabelSelector(''), undefined)).toBe(true);
    expect(isEverything(EVERYTHING)).toBe(true);
    expect(isEverything(parseLabelSelector(''))).toBe(true);
    expect(isNothing(parseLabelSelector(''))).toBe(false);
  });
});

describe('labelSelectorFromObject', () => {
  it.each<[string, Parameters<typeof labelSelectorFromObject>[0], string, Record<string, string>, boolean]>([
    ['empty object selects everything', {}, '', { a: 'b' }, true],
    ['empty parts select everything', { matchLabels: {}, matchExpressions: [] }, '', {}, true],
    ['matchLabels', { matchLabels: { b: '1', a: '2' } }, 'a=2,b=1', { a: '2', b: '1', c: '3' }, true],
    ['matchLabels mismatch', { matchLabels: { a: '2' } }, 'a=2', { a: '3' }, false],
    [
      'In keeps values, prints them sorted',
      { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }] },
      'env in (dev,prod)',
      { env: 'dev' },
      true,
    ],
    [
      'NotIn',
      { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] },
      'env notin (prod)',
      { env: 'prod' },
      false,
    ],
    ['Exists', { matchExpressions: [{ key: 'env', operator: 'Exists' }] }, 'env', { env: '' }, true],
    [
      'DoesNotExist',
      { matchExpressions: [{ key: 'env', operator: 'DoesNotExist', values: [] }] },
      '!env',
      { env: 'x' },
      false,
    ],
    [
      'labels and expressions together, sorted by key',
      { matchLabels: { z: '1' }, matchExpressions: [{ key: 'a', operator: 'Exists' }] },
      'a,z=1',
      { a: '', z: '1' },
      true,
    ],
  ])('%s', (_name, obj, formatted, labels, matches) => {
    const sel = labelSelectorFromObject(obj);
    expect(formatLabelSelector(sel)).toBe(formatted);
    expect(matchesLabels(sel, labels)).toBe(matches);
  });

  it('keeps the values in the order given', () => {
    expect(
      labelSelectorFromObject({
        matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }],
      }),
    ).toEqual([req('env', 'in', 'prod', 'dev')]);
  });

  it('null and undefined select nothing', () => {
    expect(labelSelectorFromObject(null)).toBe(NOTHING);
    expect(labelSelectorFromObject(undefined)).toBe(NOTHING);
    expect(matchesLabels(labelSelectorFromObject(null), {})).toBe(false);
  });

  it.each<[string, Parameters<typeof labelSelectorFromObject>[0], string]>([
    [
      'unknown operator',
      { matchExpressions: [{ key: 'a', operator: 'Foo' }] },
      '"Foo" is not a valid label selector operator',
    ],
    [
      'In without values',
      { matchExpressions: [{ key: 'a', operator: 'In' }] },
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      'NotIn with an empty list',
      { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] },
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
    ],
    ['bad key in matchLabels', { matchLabels: { '-a': 'b' } }, `key: Invalid value: "-a": ${NAME_PART}`],
    [
      'bad value in matchLabels',
      { matchLabels: { a: 'b c' } },
      `values[0][a]: Invalid value: "b c": ${LABEL_VALUE}`,
    ],
    [
      'several errors at once',
      { matchExpressions: [{ key: '-a', operator: 'In', values: ['-b'] }] },
      `[key: Invalid value: "-a": ${NAME_PART}, values[0][-a]: Invalid value: "-b": ${LABEL_VALUE}]`,
    ],
  ])('rejects %s', (_name, obj, message) => {
    expect(badRequest(() => labelSelectorFromObject(obj))).toBe(message);
  });
});

describe('newRequirement', () => {
  it('rejects an unknown operator with the list of supported ones', () => {
    expect(badRequest(() => newRequirement('a', 'bogus' as Operator, []))).toBe(
      'operator: Unsupported value: "bogus": supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"',
    );
  });

  it.each<[Operator, string[], string]>([
    ['=', [], 'values: Invalid value: []string{}: exact-match compatibility requires one single value'],
    [
      '!=',
      ['a', 'b'],
      'values: Invalid value: []string{"a", "b"}: exact-match compatibility requires one single value',
    ],
    [
      'gt',
      ['1', '2'],
      `values: Invalid value: []string{"1", "2"}: for 'Gt', 'Lt' operators, exactly one value is required`,
    ],
    [
      '!',
      ['x'],
      'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
    ],
  ])('checks the value count of %s', (op, values, message) => {
    expect(badRequest(() => newRequirement('a', op, values))).toBe(message);
  });

  it('prefixes field paths when asked', () => {
    expect(badRequest(() => newRequirement('-a', 'exists', [], 'spec.selector'))).toBe(
      `spec.selector.key: Invalid value: "-a": ${NAME_PART}`,
    );
  });

  it('carries the causes on the error', () => {
    try {
      newRequirement('a', '=', ['-']);
      expect.unreachable();
    } catch (e) {
      expect((e as ApiError).details?.causes).toEqual([
        { reason: 'FieldValueInvalid', field: 'values[0][a]', message: `Invalid value: "-": ${LABEL_VALUE}` },
      ]);
    }
  });
});

describe('labelSelectorFromSet and requiresExactLabelMatch', () => {
  it('builds equality requirements sorted by key', () => {
    const sel: LabelSelector = labelSelectorFromSet({ b: '2', a: '1' });
    expect(formatLabelSelector(sel)).toBe('a=1,b=2');
    expect(matchesLabels(sel, { a: '1', b: '2' })).toBe(true);
    expect(matchesLabels(sel, { a: '1' })).toBe(false);
    expect(isEverything(labelSelectorFromSet(undefined))).toBe(true);
    expect(isEverything(labelSelectorFromSet({}))).toBe(true);
  });

  it.each<[string, string, string | undefined]>([
    ['app=web', 'app', 'web'],
    ['app==web', 'app', 'web'],
    ['app in (web)', 'app', 'web'],
    ['app in (web,db)', 'app', undefined],
    ['app!=web', 'app', undefined],
    ['app', 'app', undefined],
    ['tier=x', 'app', undefined],
  ])('%j requires %j = %j', (selector, key, want) => {
    expect(requiresExactLabelMatch(parseLabelSelector(selector), key)).toBe(want);
  });
});
