import { describe, expect, it } from 'vitest';
import {
  compareQuantity,
  formatLabelSelector,
  formatLabels,
  GoValue,
  goLabelSelector,
  goValue,
  humanDuration,
  invalid,
  isConfigMapKey,
  isDNS1123Label,
  isQualifiedName,
  isValidPortName,
  labelSelectorAsSelector,
  notSupported,
  parseQuantity,
  required,
  selectorMatches,
  since,
  validateLabelSelector,
} from './util.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe('humanDuration (duration.HumanDuration)', () => {
  it.each([
    [-3 * s, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [5 * s, '5s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [2 * m + 10 * s, '2m10s'],
    [9 * m + 59 * s, '9m59s'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [3 * h + 25 * m, '3h25m'],
    [8 * h + 59 * m, '8h'],
    [47 * h, '47h'],
    [2 * d, '2d'],
    [5 * d + 3 * h, '5d3h'],
    [8 * d + 5 * h, '8d'],
    [729 * d, '729d'],
    [2 * 365 * d, '2y'],
    [2 * 365 * d + 10 * d, '2y10d'],
    [9 * 365 * d, '9y'],
  ])('%i ms → %s', (ms, want) => {
    expect(humanDuration(ms)).toBe(want);
  });

  it('renders ages relative to now, <unknown> for a missing timestamp', () => {
    const now = new Date('2024-05-01T12:00:00Z');
    expect(since('2024-05-01T11:58:50Z', now)).toBe('70s');
    expect(since(undefined, now)).toBe('<unknown>');
    expect(since(null, now)).toBe('<unknown>');
  });
});

describe('field errors', () => {
  it('formats values like field.Error.ErrorBody()', () => {
    expect(invalid('spec.replicas', -1, 'must be greater than or equal to 0')).toEqual({
      reason: 'FieldValueInvalid',
      message: 'Invalid value: -1: must be greater than or equal to 0',
      field: 'spec.replicas',
    });
    expect(required('spec.selector')).toEqual({
      reason: 'FieldValueRequired',
      message: 'Required value',
      field: 'spec.selector',
    });
    expect(notSupported('spec.type', 'Foo', ['A', 'B']).message).toBe(
      'Unsupported value: "Foo": supported values: "A", "B"',
    );
    expect(goValue('x')).toBe('"x"');
    expect(goValue(['a', 'b'])).toBe('[]string{"a", "b"}');
    expect(goValue({ b: '2', a: '1' })).toBe('map[string]string{"a":"1", "b":"2"}');
    expect(goValue(null)).toBe('"null"');
    expect(goValue(new GoValue('raw'))).toBe('raw');
  });

  it('prints a label selector as Go %#v', () => {
    expect(goLabelSelector({ matchLabels: { app: 'web' } })).toBe(
      'v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}',
    );
    expect(goLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: ['x'] }] })).toBe(
      'v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"a", Operator:"In", Values:[]string{"x"}}}}',
    );
  });
});

describe('name validation', () => {
  it.each([
    ['nginx', []],
    ['my-name', []],
    [
      'Bad_Name',
      [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
  ])('DNS-1123 label %s', (v, want) => {
    expect(isDNS1123Label(v)).toEqual(want);
  });

  it.each([
    ['http', []],
    ['web-1', []],
    ['123', ['must contain at least one letter (a-z)']],
    ['a--b', ['must not contain consecutive hyphens']],
    ['-a', ['must not begin or end with a hyphen']],
    ['averyveryverylongname', ['must be no more than 15 characters']],
    [
      'HTTP',
      [
        'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        'must contain at least one letter (a-z)',
      ],
    ],
  ])('IANA port name %s', (v, want) => {
    expect(isValidPortName(v)).toEqual(want);
  });

  it('checks qualified names and config keys', () => {
    expect(isQualifiedName('app.kubernetes.io/name')).toEqual([]);
    expect(isQualifiedName('/x')).toEqual(['prefix part must be non-empty']);
    expect(isQualifiedName('a/b/c')[0]).toMatch(/^a qualified name must consist of alphanumeric characters/);
    expect(isConfigMapKey('key.name')).toEqual([]);
    expect(isConfigMapKey('..x')).toEqual(["must not start with '..'"]);
    expect(isConfigMapKey('bad key')[0]).toBe(
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    );
  });
});

describe('label selectors', () => {
  const sel = {
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['front', 'back'] },
      { key: 'env', operator: 'NotIn', values: ['prod'] },
      { key: 'canary', operator: 'DoesNotExist' },
      { key: 'zone', operator: 'Exists' },
    ],
  };

  it('formats like labels.Selector.String(): sorted by key, values sorted', () => {
    expect(formatLabelSelector(sel)).toBe('app=web,!canary,env notin (prod),tier in (back,front),zone');
    expect(formatLabelSelector({})).toBe('<none>');
    expect(formatLabelSelector(undefined)).toBe('<none>');
    expect(formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] })).toBe('<error>');
    expect(formatLabels({ b: '2', a: '1' })).toBe('a=1,b=2');
    expect(formatLabels(undefined)).toBe('<none>');
  });

  it.each([
    [{ app: 'web', tier: 'front', zone: 'a' }, true],
    [{ app: 'web', tier: 'front', zone: 'a', canary: 'y' }, false],
    [{ app: 'web', tier: 'middle', zone: 'a' }, false],
    [{ app: 'web', tier: 'back', zone: 'a', env: 'prod' }, false],
    [{ app: 'web', tier: 'back' }, false],
  ])('matches %j → %s', (labels, want) => {
    const parsed = labelSelectorAsSelector(sel);
    expect(parsed).toBeDefined();
    expect(selectorMatches(parsed!, labels)).toBe(want);
  });

  it('a nil selector matches nothing, an empty one everything', () => {
    expect(selectorMatches(labelSelectorAsSelector(undefined)!, { a: 'b' })).toBe(false);
    expect(selectorMatches(labelSelectorAsSelector({})!, { a: 'b' })).toBe(true);
  });

  it('validates operators and values', () => {
    expect(
      validateLabelSelector(
        {
          matchExpressions: [
            { key: 'a', operator: 'In' },
            { key: 'b', operator: 'Exists', values: ['x'] },
            { key: 'c', operator: 'Maybe' },
          ],
        },
        'spec.selector',
      ),
    ).toEqual([
      {
        reason: 'FieldValueRequired',
        message: "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        field: 'spec.selector.matchExpressions[0].values',
      },
      {
        reason: 'FieldValueForbidden',
        message: "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        field: 'spec.selector.matchExpressions[1].values',
      },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "Maybe": not a valid selector operator',
        field: 'spec.selector.matchExpressions[2].operator',
      },
    ]);
  });
});

describe('quantities', () => {
  const q = (v: string) => {
    const p = parseQuantity(v);
    expect(p, v).toBeDefined();
    return p!;
  };
  it.each([
    ['1Gi', '1024Mi', 0],
    ['500m', '0.5', 0],
    ['1', '999m', 1],
    ['1e3', '1k', 0],
    ['100Mi', '100M', 1],
    ['0.1', '100m', 0],
  ])('%s vs %s', (a, b, want) => {
    expect(compareQuantity(q(a), q(b))).toBe(want);
  });
  it('rejects malformed quantities', () => {
    expect(parseQuantity('abc')).toBeUndefined();
    expect(parseQuantity('1Xi')).toBeUndefined();
  });
});
