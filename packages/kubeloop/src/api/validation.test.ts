import { describe, expect, it } from 'vitest';
import { ApiError } from './status.js';
import {
  aggregateCauses,
  fieldError,
  fieldErrors,
  goQuote,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  OMIT_VALUE,
  rawFieldValue,
  renderFieldValue,
  utf8Length,
  validateAnnotations,
  validateFieldManager,
  validateLabels,
  validateName,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.js';

// The messages below are copied from a Kubernetes 1.32 API server's output, not derived from
// the implementation, so that a typo in either place shows up.
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const QUALIFIED_NAME =
  "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('isDNS1123Subdomain', () => {
  it.each<[string, string[]]>([
    ['example.com', []],
    ['a', []],
    ['0-a.b-1', []],
    ['a'.repeat(253), []],
    ['a'.repeat(254), ['must be no more than 253 characters']],
    ['Bad_Name', [SUBDOMAIN]],
    ['', [SUBDOMAIN]],
    ['-a', [SUBDOMAIN]],
    ['a.', [SUBDOMAIN]],
    ['a..b', [SUBDOMAIN]],
    [`${'A'.repeat(254)}`, ['must be no more than 253 characters', SUBDOMAIN]],
  ])('%j', (value, want) => {
    expect(isDNS1123Subdomain(value)).toEqual(want);
  });
});

describe('isDNS1123Label', () => {
  it.each<[string, string[]]>([
    ['my-name', []],
    ['123-abc', []],
    ['a'.repeat(63), []],
    ['a'.repeat(64), ['must be no more than 63 characters']],
    ['a.b', ['must not contain dots']],
    ['A', [LABEL]],
    ['a_b', [LABEL]],
    ['', [LABEL]],
    ['-a', [LABEL]],
  ])('%j', (value, want) => {
    expect(isDNS1123Label(value)).toEqual(want);
  });
});

describe('isDNS1035Label', () => {
  it.each<[string, string[]]>([
    ['my-name', []],
    ['abc-123', []],
    ['1abc', [DNS1035]],
    ['a.b', [DNS1035]],
    ['a'.repeat(64), ['must be no more than 63 characters']],
  ])('%j', (value, want) => {
    expect(isDNS1035Label(value)).toEqual(want);
  });
});

describe('isQualifiedName', () => {
  it.each<[string, string[]]>([
    ['app', []],
    ['MyName', []],
    ['my.name', []],
    ['A_b.c-1', []],
    ['example.com/app', []],
    ['kubernetes.io/metadata.name', []],
    ['a'.repeat(63), []],
    ['a'.repeat(64), ['name part must be no more than 63 characters']],
    ['-a', [NAME_PART]],
    ['a b', [NAME_PART]],
    ['', ['name part must be non-empty', NAME_PART]],
    ['a/', ['name part must be non-empty', NAME_PART]],
    ['/a', ['prefix part must be non-empty']],
    ['Example.com/a', [`prefix part ${SUBDOMAIN}`]],
    [`${'a'.repeat(254)}/a`, ['prefix part must be no more than 253 characters']],
    ['a/b/c', [QUALIFIED_NAME]],
    ['Example.com/-', [`prefix part ${SUBDOMAIN}`, NAME_PART]],
  ])('%j', (value, want) => {
    expect(isQualifiedName(value)).toEqual(want);
  });
});

describe('isValidLabelValue', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['MyValue', []],
    ['my_value', []],
    ['12345', []],
    ['a'.repeat(63), []],
    ['a'.repeat(64), ['must be no more than 63 characters']],
    ['-a', [LABEL_VALUE]],
    ['a b', [LABEL_VALUE]],
    ['a/b', [LABEL_VALUE]],
    ['é', [LABEL_VALUE]],
  ])('%j', (value, want) => {
    expect(isValidLabelValue(value)).toEqual(want);
  });
});

describe('validateName', () => {
  it.each<[string, Parameters<typeof validateName>[1], boolean, string[]]>([
    ['web', 'subdomain', false, []],
    ['web-', 'subdomain', true, []],
    ['web-', 'subdomain', false, [SUBDOMAIN]],
    ['web.', 'subdomain', true, [SUBDOMAIN]],
    ['ns-', 'label', true, []],
    ['a.b', 'label', false, ['must not contain dots']],
    ['svc-', 'label1035', true, []],
    ['1svc', 'label1035', false, [DNS1035]],
    ['Any_Thing', 'path-segment', false, []],
    ['.', 'path-segment', false, ["may not be '.'"]],
    ['..', 'path-segment', false, ["may not be '..'"]],
    ['a/b%c', 'path-segment', false, ["may not contain '/'", "may not contain '%'"]],
    ['..', 'path-segment', true, []],
    ['a/', 'path-segment', true, ["may not contain '/'"]],
  ])('%j as %s (prefix %s)', (name, rule, prefix, want) => {
    expect(validateName(name, rule, prefix)).toEqual(want);
  });
});

describe('goQuote and renderFieldValue', () => {
  it.each<[string, string]>([
    ['plain', '"plain"'],
    ['', '""'],
    ['a"b', '"a\\"b"'],
    ['a\\b', '"a\\\\b"'],
    ['line\nbreak\ttab\r', '"line\\nbreak\\ttab\\r"'],
    ['\x07\x08\x0b\x0c', '"\\a\\b\\v\\f"'],
    ['\x01\x7f', '"\\x01\\x7f"'],
    ['é ü 日本', '"é ü 日本"'],
    ['\u00a0', '"\\u00a0"'],
    ['😀', '"😀"'],
  ])('goQuote(%j)', (value, want) => {
    expect(goQuote(value)).toBe(want);
  });

  it.each<[unknown, string]>([
    ['x', '"x"'],
    [5, '5'],
    [-1, '-1'],
    [1.5, '1.5'],
    [0.00001, '1e-05'],
    [1e21, '1e+21'],
    [true, 'true'],
    [false, 'false'],
    [null, '"null"'],
    [undefined, '"null"'],
    [['a', 'b'], '[]string{"a", "b"}'],
    [[], '[]string{}'],
    [{ a: 1 }, '{"a":1}'],
    [[1, 2], '[1,2]'],
    [rawFieldValue('v1.Thing{}'), 'v1.Thing{}'],
  ])('renderFieldValue(%j)', (value, want) => {
    expect(renderFieldValue(value)).toBe(want);
  });
});

describe('fieldError', () => {
  it.each<[string, ReturnType<typeof fieldError>, ReturnType<typeof fieldError>]>([
    [
      'invalid',
      fieldError('FieldValueInvalid', 'metadata.name', 'Bad_Name', 'detail'),
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: 'Invalid value: "Bad_Name": detail' },
    ],
    [
      'invalid without detail',
      fieldError('FieldValueInvalid', 'spec.x', 3),
      { reason: 'FieldValueInvalid', field: 'spec.x', message: 'Invalid value: 3' },
    ],
    [
      'required',
      fieldErrors.required('metadata.name', 'name or generateName is required'),
      {
        reason: 'FieldValueRequired',
        field: 'metadata.name',
        message: 'Required value: name or generateName is required',
      },
    ],
    [
      'required without detail',
      fieldErrors.required('metadata.namespace'),
      { reason: 'FieldValueRequired', field: 'metadata.namespace', message: 'Required value' },
    ],
    [
      'required ignores a value',
      fieldError('FieldValueRequired', 'x', 'ignored', 'd'),
      { reason: 'FieldValueRequired', field: 'x', message: 'Required value: d' },
    ],
    [
      'not supported',
      fieldErrors.notSupported('spec.policy', 'x', ['a', 'b']),
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.policy',
        message: 'Unsupported value: "x": supported values: "a", "b"',
      },
    ],
    [
      'not supported without a list',
      fieldErrors.notSupported('spec.policy', 'x', []),
      { reason: 'FieldValueNotSupported', field: 'spec.policy', message: 'Unsupported value: "x"' },
    ],
    [
      'too long',
      fieldErrors.tooLong('metadata.annotations', 262144),
      {
        reason: 'FieldValueTooLong',
        field: 'metadata.annotations',
        message: 'Too long: may not be more than 262144 bytes',
      },
    ],
    [
      'too long without a limit',
      fieldErrors.tooLong('x', -1),
      { reason: 'FieldValueTooLong', field: 'x', message: 'Too long: value is too long' },
    ],
    [
      'too many',
      fieldErrors.tooMany('spec.items', 5, 3),
      { reason: 'FieldValueTooMany', field: 'spec.items', message: 'Too many: 5: must have at most 3 items' },
    ],
    [
      'too many without the count',
      fieldErrors.tooMany('spec.items', -1, 3),
      { reason: 'FieldValueTooMany', field: 'spec.items', message: 'Too many: must have at most 3 items' },
    ],
    [
      'forbidden',
      fieldErrors.forbidden('metadata.namespace', 'not allowed on this type'),
      {
        reason: 'FieldValueForbidden',
        field: 'metadata.namespace',
        message: 'Forbidden: not allowed on this type',
      },
    ],
    [
      'duplicate',
      fieldErrors.duplicate('spec.ports[1].name', 'http'),
      { reason: 'FieldValueDuplicate', field: 'spec.ports[1].name', message: 'Duplicate value: "http"' },
    ],
    [
      'not found',
      fieldErrors.notFound('spec.volumes[0]', 'data'),
      { reason: 'FieldValueNotFound', field: 'spec.volumes[0]', message: 'Not found: "data"' },
    ],
    [
      'type invalid',
      fieldErrors.typeInvalid(
        'spec.replicas',
        'string',
        'spec.replicas in body must be of type integer: "string"',
      ),
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.replicas',
        message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      },
    ],
    [
      'internal',
      fieldErrors.internal('metadata.name', 'boom'),
      { reason: 'InternalError', field: 'metadata.name', message: 'Internal error: boom' },
    ],
    [
      'omitted value',
      fieldError('FieldValueInvalid', 'x', OMIT_VALUE, 'd'),
      { reason: 'FieldValueInvalid', field: 'x', message: 'Invalid value: d' },
    ],
  ])('%s', (_name, got, want) => {
    expect(got).toEqual(want);
  });

  it.each<[Parameters<typeof fieldError>[0], Parameters<typeof fieldError>[0]]>([
    ['invalid', 'FieldValueInvalid'],
    ['required', 'FieldValueRequired'],
    ['notFound', 'FieldValueNotFound'],
    ['duplicate', 'FieldValueDuplicate'],
    ['notSupported', 'FieldValueNotSupported'],
    ['forbidden', 'FieldValueForbidden'],
    ['tooLong', 'FieldValueTooLong'],
    ['tooMany', 'FieldValueTooMany'],
    ['internal', 'InternalError'],
    ['typeInvalid', 'FieldValueTypeInvalid'],
  ])('accepts the short name %s for %s', (short, long) => {
    expect(fieldError(short, 'f', 'v', 'd')).toEqual(fieldError(long, 'f', 'v', 'd'));
    expect(fieldError(short, 'f', 'v', 'd').reason).toBe(long);
  });

  it('renders through ApiError.invalid the way the API server does', () => {
    const err = ApiError.invalid({ group: '', kind: 'ConfigMap' }, 'Bad_Name', [
      fieldErrors.invalid('metadata.name', 'Bad_Name', SUBDOMAIN),
    ]);
    expect(err.status.message).toBe(
      `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN}`,
    );
    expect(err.code).toBe(422);
  });
});

describe('aggregateCauses', () => {
  const a = fieldErrors.required('a');
  const b = fieldErrors.forbidden('b', 'no');
  it.each<[string, ReturnType<typeof fieldError>[], string]>([
    ['none', [], ''],
    ['one', [a], 'a: Required value'],
    ['several', [a, b], '[a: Required value, b: Forbidden: no]'],
    ['duplicates dropped', [a, a], 'a: Required value'],
    ['duplicates dropped among several', [a, b, a], '[a: Required value, b: Forbidden: no]'],
  ])('%s', (_name, causes, want) => {
    expect(aggregateCauses(causes)).toBe(want);
  });
});

describe('utf8Length', () => {
  it.each<[string, number]>([
    ['', 0],
    ['abc', 3],
    ['é', 2],
    ['日', 3],
    ['😀', 4],
  ])('%j is %i bytes', (s, n) => {
    expect(utf8Length(s)).toBe(n);
  });
});

type Cause = { reason?: string; field?: string; message?: string };
const cause = (reason: string, field: string, message: string): Cause => ({ reason, field, message });
const invalid = (field: string, message: string) => cause('FieldValueInvalid', field, message);

describe('validateObjectMeta', () => {
  const cluster = { namespaced: false, nameValidation: 'subdomain', create: true } as const;
  const namespaced = { namespaced: true, nameValidation: 'subdomain', create: true } as const;

  it.each<[string, unknown, Parameters<typeof validateObjectMeta>[1], Cause[]]>([
    ['valid cluster-scoped', { name: 'web' }, cluster, []],
    ['valid namespaced', { name: 'web', namespace: 'default' }, namespaced, []],
    [
      'bad name',
      { name: 'Bad_Name' },
      cluster,
      [invalid('metadata.name', `Invalid value: "Bad_Name": ${SUBDOMAIN}`)],
    ],
    [
      'missing name',
      {},
      cluster,
      [cause('FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required')],
    ],
    [
      'no metadata at all',
      undefined,
      cluster,
      [cause('FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required')],
    ],
    ['generateName on create', { generateName: 'web-' }, cluster, []],
    [
      'generateName on update',
      { generateName: 'web-' },
      { ...cluster, create: false },
      [cause('FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required')],
    ],
    [
      'bad generateName',
      { generateName: 'Web-' },
      cluster,
      [invalid('metadata.generateName', `Invalid value: "Web-": ${SUBDOMAIN}`)],
    ],
    [
      'bad generateName and name, generateName first',
      { generateName: 'Web-', name: 'Web-abcde' },
      cluster,
      [
        invalid('metadata.generateName', `Invalid value: "Web-": ${SUBDOMAIN}`),
        invalid('metadata.name', `Invalid value: "Web-abcde": ${SUBDOMAIN}`),
      ],
    ],
    [
      'namespace required',
      { name: 'web' },
      namespaced,
      [cause('FieldValueRequired', 'metadata.namespace', 'Required value')],
    ],
    [
      'namespace invalid',
      { name: 'web', namespace: 'Bad.NS' },
      namespaced,
      [invalid('metadata.namespace', `Invalid value: "Bad.NS": ${LABEL}`)],
    ],
    [
      'namespace with dots',
      { name: 'web', namespace: 'a.b' },
      namespaced,
      [invalid('metadata.namespace', 'Invalid value: "a.b": must not contain dots')],
    ],
    [
      'namespace forbidden on cluster-scoped kinds',
      { name: 'web', namespace: 'default' },
      cluster,
      [cause('FieldValueForbidden', 'metadata.namespace', 'Forbidden: not allowed on this type')],
    ],
    [
      'label rule',
      { name: 'a.b' },
      { ...cluster, nameValidation: 'label' },
      [invalid('metadata.name', 'Invalid value: "a.b": must not contain dots')],
    ],
    [
      'DNS-1035 rule',
      { name: '1svc' },
      { ...namespaced, nameValidation: 'label1035' },
      [
        invalid('metadata.name', `Invalid value: "1svc": ${DNS1035}`),
        cause('FieldValueRequired', 'metadata.namespace', 'Required value'),
      ],
    ],
    [
      'path segment rule',
      { name: 'a/b' },
      { ...cluster, nameValidation: 'path-segment' },
      [invalid('metadata.name', `Invalid value: "a/b": may not contain '/'`)],
    ],
    [
      'negative generation',
      { name: 'web', generation: -1 },
      cluster,
      [invalid('metadata.generation', 'Invalid value: -1: must be greater than or equal to 0')],
    ],
    [
      'labels: bad key and bad value',
      { name: 'web', labels: { '-bad': 'ok', good: '-bad-', 'example.com/fine': 'Fine_1' } },
      cluster,
      [
        invalid('metadata.labels', `Invalid value: "-bad": ${NAME_PART}`),
        invalid('metadata.labels', `Invalid value: "-bad-": ${LABEL_VALUE}`),
      ],
    ],
    [
      'labels: long value',
      { name: 'web', labels: { a: 'b'.repeat(64) } },
      cluster,
      [invalid('metadata.labels', `Invalid value: "${'b'.repeat(64)}": must be no more than 63 characters`)],
    ],
    [
      'annotations: keys are case-insensitive',
      { name: 'web', annotations: { 'Example.COM/Some-Key': 'anything at all: {"json": true}' } },
      cluster,
      [],
    ],
    [
      'annotations: bad key',
      { name: 'web', annotations: { 'a b': 'x' } },
      cluster,
      [invalid('metadata.annotations', `Invalid value: "a b": ${NAME_PART}`)],
    ],
    [
      'annotations: exactly 256 KiB is fine',
      { name: 'web', annotations: { a: 'x'.repeat(262143) } },
      cluster,
      [],
    ],
    [
      'annotations: over 256 KiB',
      { name: 'web', annotations: { a: 'x'.repeat(262144) } },
      cluster,
      [cause('FieldValueTooLong', 'metadata.annotations', 'Too long: may not be more than 262144 bytes')],
    ],
    [
      'annotations: the size counts bytes',
      { name: 'web', annotations: { a: 'é'.repeat(131072) } },
      cluster,
      [cause('FieldValueTooLong', 'metadata.annotations', 'Too long: may not be more than 262144 bytes')],
    ],
    [
      'ownerReferences: valid',
      {
        name: 'web',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'u', controller: true },
        ],
      },
      cluster,
      [],
    ],
    [
      'ownerReferences: everything missing',
      { name: 'web', ownerReferences: [{}] },
      cluster,
      [
        invalid('metadata.ownerReferences.apiVersion', 'Invalid value: "": version must not be empty'),
        invalid('metadata.ownerReferences.kind', 'Invalid value: "": kind must not be empty'),
        invalid('metadata.ownerReferences.name', 'Invalid value: "": name must not be empty'),
        invalid('metadata.ownerReferences.uid', 'Invalid value: "": uid must not be empty'),
      ],
    ],
    [
      'ownerReferences: group without version',
      { name: 'web', ownerReferences: [{ apiVersion: 'apps/', kind: 'K', name: 'n', uid: 'u' }] },
      cluster,
      [invalid('metadata.ownerReferences.apiVersion', 'Invalid value: "apps/": version must not be empty')],
    ],
    [
      'ownerReferences: too many slashes',
      { name: 'web', ownerReferences: [{ apiVersion: 'a/b/c', kind: 'K', name: 'n', uid: 'u' }] },
      cluster,
      [invalid('metadata.ownerReferences.apiVersion', 'Invalid value: "a/b/c": version must not be empty')],
    ],
    [
      'ownerReferences: an Event cannot own',
      { name: 'web', ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' }] },
      cluster,
      [
        invalid(
          'metadata.ownerReferences',
          'Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
        ),
      ],
    ],
    [
      'ownerReferences: wrong types',
      {
        name: 'web',
        ownerReferences: ['x', { apiVersion: 'v1', kind: 'K', name: 'n', uid: 'u', controller: 'yes' }],
      },
      cluster,
      [
        cause(
          'FieldValueTypeInvalid',
          'metadata.ownerReferences[0]',
          'Invalid value: "string": metadata.ownerReferences[0] in body must be of type object: "string"',
        ),
        cause(
          'FieldValueTypeInvalid',
          'metadata.ownerReferences[1].controller',
          'Invalid value: "string": metadata.ownerReferences[1].controller in body must be of type boolean: "string"',
        ),
      ],
    ],
    [
      'finalizers: bad name',
      { name: 'web', finalizers: ['example.com/ok', 'orphan', 'bad finalizer'] },
      cluster,
      [invalid('metadata.finalizers', `Invalid value: "bad finalizer": ${NAME_PART}`)],
    ],
    [
      'finalizers: orphan and foregroundDeletion together',
      { name: 'web', finalizers: ['orphan', 'foregroundDeletion'] },
      cluster,
      [
        invalid(
          'metadata.finalizers',
          'Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
        ),
      ],
    ],
    [
      'managedFields',
      {
        name: 'web',
        managedFields: [
          { manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1' },
          { manager: 'a\u0007', operation: 'Bogus', fieldsType: 'FieldsV2' },
          { manager: 'm'.repeat(129), operation: 'Update', subresource: 's'.repeat(257) },
        ],
      },
      cluster,
      [
        invalid('metadata.managedFields[1].operation', 'Invalid value: "Bogus": must be `Apply` or `Update`'),
        invalid('metadata.managedFields[1].fieldsType', 'Invalid value: "FieldsV2": must be `FieldsV1`'),
        invalid(
          'metadata.managedFields[1].manager',
          'Invalid value: "a\\a": invalid character U+0007 (at position 1)',
        ),
        cause(
          'FieldValueTooLong',
          'metadata.managedFields[2].manager',
          'Too long: may not be more than 128 bytes',
        ),
        cause(
          'FieldValueTooLong',
          'metadata.managedFields[2].subresource',
          'Too long: may not be more than 256 bytes',
        ),
      ],
    ],
    [
      'metadata of the wrong type',
      'oops',
      cluster,
      [
        cause(
          'FieldValueTypeInvalid',
          'metadata',
          'Invalid value: "string": metadata in body must be of type object: "string"',
        ),
      ],
    ],
    [
      'labels of the wrong type',
      { name: 'web', labels: ['a'] },
      cluster,
      [
        cause(
          'FieldValueTypeInvalid',
          'metadata.labels',
          'Invalid value: "array": metadata.labels in body must be of type object: "array"',
        ),
      ],
    ],
    [
      'label value of the wrong type',
      { name: 'web', labels: { a: 1, b: null } },
      cluster,
      [
        cause(
          'FieldValueTypeInvalid',
          'metadata.labels.a',
          'Invalid value: "integer": metadata.labels.a in body must be of type string: "integer"',
        ),
        cause(
          'FieldValueTypeInvalid',
          'metadata.labels.b',
          'Invalid value: "null": metadata.labels.b in body must be of type string: "null"',
        ),
      ],
    ],
    [
      'name of the wrong type',
      { name: 5 },
      cluster,
      [
        cause(
          'FieldValueTypeInvalid',
          'metadata.name',
          'Invalid value: "integer": metadata.name in body must be of type string: "integer"',
        ),
        cause('FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required'),
      ],
    ],
    [
      'generation of the wrong type',
      { name: 'web', generation: 1.5 },
      cluster,
      [
        cause(
          'FieldValueTypeInvalid',
          'metadata.generation',
          'Invalid value: "number": metadata.generation in body must be of type integer: "number"',
        ),
      ],
    ],
    [
      'finalizer of the wrong type',
      { name: 'web', finalizers: [true] },
      cluster,
      [
        cause(
          'FieldValueTypeInvalid',
          'metadata.finalizers[0]',
          'Invalid value: "boolean": metadata.finalizers[0] in body must be of type string: "boolean"',
        ),
      ],
    ],
    [
      'nulls read as absent',
      { name: 'web', labels: null, annotations: null, finalizers: null, generation: null },
      cluster,
      [],
    ],
  ])('%s', (_name, meta, opts, want) => {
    expect(validateObjectMeta(meta, opts)).toEqual(want);
  });

  it('orders causes as the Go code does and renders them like kube-apiserver', () => {
    const causes = validateObjectMeta(
      { name: 'Bad_Name', namespace: 'default', labels: { 'a b': 'c' }, finalizers: ['x y'] },
      cluster,
    );
    expect(causes.map((c) => c.field)).toEqual([
      'metadata.name',
      'metadata.namespace',
      'metadata.labels',
      'metadata.finalizers',
    ]);
    const err = ApiError.invalid({ group: '', kind: 'ConfigMap' }, 'Bad_Name', causes);
    expect(err.status.message).toBe(
      `ConfigMap "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN}, ` +
        'metadata.namespace: Forbidden: not allowed on this type, ' +
        `metadata.labels: Invalid value: "a b": ${NAME_PART}, ` +
        `metadata.finalizers: Invalid value: "x y": ${NAME_PART}]`,
    );
  });

  it('reports two controller references', () => {
    const refs = [
      { apiVersion: 'apps/v1', kind: 'A', name: 'a', uid: '1', controller: true },
      { apiVersion: 'apps/v1', kind: 'B', name: 'b', uid: '2', controller: false },
      { apiVersion: 'apps/v1', kind: 'C', name: 'c', uid: '3', controller: true },
    ];
    const causes = validateObjectMeta({ name: 'web', ownerReferences: refs }, cluster);
    expect(causes).toEqual([
      invalid(
        'metadata.ownerReferences',
        `Invalid value: ${JSON.stringify(refs)}: Only one reference can have Controller set to true. Found "true" in references for A/a and C/c`,
      ),
    ]);
  });
});

describe('validateLabels and validateAnnotations', () => {
  it('accept a plain record or entries, and report on the given field', () => {
    const want = [invalid('spec.selector.matchLabels', `Invalid value: "-": ${LABEL_VALUE}`)];
    expect(validateLabels({ a: '-' }, 'spec.selector.matchLabels')).toEqual(want);
    expect(validateLabels([['a', '-']], 'spec.selector.matchLabels')).toEqual(want);
    expect(
      validateAnnotations(
        new Map([
          ['A/B', 'x'],
          ['a b', 'y'],
        ]),
        'metadata.annotations',
      ),
    ).toEqual([invalid('metadata.annotations', `Invalid value: "a b": ${NAME_PART}`)]);
  });
});

describe('validateFieldManager', () => {
  it('reports a printable non-ASCII character as fine and a control character with its byte position', () => {
    expect(validateFieldManager('héllo', 'fieldManager')).toEqual([]);
    expect(validateFieldManager('é\u0001', 'fieldManager')).toEqual([
      invalid('fieldManager', 'Invalid value: "é\\x01": invalid character U+0001 (at position 2)'),
    ]);
  });
});

describe('validateObjectMetaUpdate', () => {
  const old = {
    name: 'web',
    namespace: 'default',
    uid: 'u1',
    resourceVersion: '5',
    generation: 3,
    creationTimestamp: '2024-01-02T03:04:05Z',
    finalizers: ['example.com/a'],
  };

  it.each<[string, Record<string, unknown>, Record<string, unknown>, Cause[]]>([
    ['unchanged', { ...old }, old, []],
    [
      'name, namespace and uid are immutable',
      { ...old, name: 'other', namespace: 'ns2', uid: 'u2' },
      old,
      [
        invalid('metadata.name', 'Invalid value: "other": field is immutable'),
        invalid('metadata.namespace', 'Invalid value: "ns2": field is immutable'),
        invalid('metadata.uid', 'Invalid value: "u2": field is immutable'),
      ],
    ],
    [
      'creationTimestamp is immutable and prints as a Go time',
      { ...old, creationTimestamp: '2025-06-07T08:09:10Z' },
      old,
      [
        invalid(
          'metadata.creationTimestamp',
          'Invalid value: 2025-06-07 08:09:10 +0000 UTC: field is immutable',
        ),
      ],
    ],
    [
      'resourceVersion is required',
      { ...old, resourceVersion: undefined },
      old,
      [invalid('metadata.resourceVersion', 'Invalid value: "": must be specified for an update')],
    ],
    [
      'generation cannot go back',
      { ...old, generation: 2 },
      old,
      [invalid('metadata.generation', 'Invalid value: 2: must not be decremented')],
    ],
    [
      'no new finalizers once deleting',
      { ...old, deletionTimestamp: '2024-02-01T00:00:00Z', finalizers: ['example.com/a', 'z', 'b'] },
      { ...old, deletionTimestamp: '2024-02-01T00:00:00Z' },
      [
        cause(
          'FieldValueForbidden',
          'metadata.finalizers',
          'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b", "z"}',
        ),
      ],
    ],
    [
      'removing finalizers while deleting is fine',
      { ...old, deletionTimestamp: '2024-02-01T00:00:00Z', finalizers: [] },
      { ...old, deletionTimestamp: '2024-02-01T00:00:00Z' },
      [],
    ],
    [
      'deletionTimestamp cannot be set by an update',
      { ...old, deletionTimestamp: '2024-02-01T00:00:00Z' },
      old,
      [
        invalid(
          'metadata.deletionTimestamp',
          'Invalid value: 2024-02-01 00:00:00 +0000 UTC: field is immutable',
        ),
      ],
    ],
    [
      'labels are still validated',
      { ...old, labels: { a: '-' } },
      old,
      [invalid('metadata.labels', `Invalid value: "-": ${LABEL_VALUE}`)],
    ],
  ])('%s', (_name, next, prev, want) => {
    expect(validateObjectMetaUpdate(next, prev)).toEqual(want);
  });
});
