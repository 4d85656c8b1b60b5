/**
 * Custom resources validated against their version's OpenAPI v3 schema and CEL rules, as the
 * API server answers: one table row per keyword of the kitchen-sink CRD, with Kubernetes'
 * messages, `details.causes`, and several errors joined as Kubernetes joins them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { crPath, establish, type Http, httpClient, type Json, seedCrd } from './support.js';

const G = 'kitchen.example.com';
const SINKS = crPath(G, 'v1', 'sinks');
const NOT_CHECKED: Cause = [
  '<nil>',
  'FieldValueInvalid',
  'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
];

type Cause = [field: string, reason: string, message: string];

let cp: ControlPlane;
let http: Http;
let n = 0;
beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
  await establish(http, seedCrd('kitchensink'));
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

const sink = (name: string, spec: Json): Json => ({
  apiVersion: `${G}/v1`,
  kind: 'Sink',
  metadata: { name },
  spec,
});
const create = (spec: Json) => http.post(SINKS, sink(`s${++n}`, spec));
const causesOf = (res: Json): Cause[] =>
  res.json.details.causes.map((c: Json) => [c.field, c.reason, c.message]);

describe('OpenAPI v3 keywords, one row each', () => {
  test.each<[keyword: string, spec: Json, causes: Cause[]]>([
    [
      'type',
      { name: 'abc', replicas: 'two' },
      [
        [
          'spec.replicas',
          'FieldValueTypeInvalid',
          'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        ],
        // The scale subresource reads .spec.replicas too (ValidateScaleSpec, after the schema).
        [
          '.spec.replicas',
          'FieldValueInvalid',
          'Invalid value: 0: .spec.replicas accessor error: two is of the type string, expected int64',
        ],
        NOT_CHECKED,
      ],
    ],
    [
      'type of an array item',
      { name: 'abc', tags: ['a', 1] },
      [
        [
          'spec.tags[1]',
          'FieldValueTypeInvalid',
          'Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"',
        ],
        NOT_CHECKED,
      ],
    ],
    [
      'format int64 (still an integer)',
      { name: 'abc', count64: 1.5 },
      // kube-openapi checks the format first: a float64 is not an int64.
      [
        [
          'spec.count64',
          'FieldValueTypeInvalid',
          'Invalid value: "float64": spec.count64 in body must be of type int64: "float64"',
        ],
        NOT_CHECKED,
      ],
    ],
    [
      'format date-time',
      { name: 'abc', created: 'yesterday' },
      [
        [
          'spec.created',
          'FieldValueTypeInvalid',
          'Invalid value: "yesterday": spec.created in body must be of type date-time: "yesterday"',
        ],
        NOT_CHECKED,
      ],
    ],
    [
      'format byte',
      { name: 'abc', data: 'not base64!' },
      [
        [
          'spec.data',
          'FieldValueTypeInvalid',
          'Invalid value: "not base64!": spec.data in body must be of type byte: "not base64!"',
        ],
        NOT_CHECKED,
      ],
    ],
    [
      'format uuid',
      { name: 'abc', id: 'nope' },
      [
        [
          'spec.id',
          'FieldValueTypeInvalid',
          'Invalid value: "nope": spec.id in body must be of type uuid: "nope"',
        ],
        NOT_CHECKED,
      ],
    ],
    [
      'enum',
      { name: 'abc', color: 'pink' },
      [
        [
          'spec.color',
          'FieldValueNotSupported',
          'Unsupported value: "pink": supported values: "red", "green", "blue"',
        ],
        NOT_CHECKED,
      ],
    ],
    [
      'pattern',
      { name: 'ABC' },
      [['spec.name', 'FieldValueInvalid', `Invalid value: "ABC": spec.name in body should match '^[a-z]+$'`]],
    ],
    [
      'minLength',
      { name: 'ab' },
      [
        [
          'spec.name',
          'FieldValueInvalid',
          'Invalid value: "ab": spec.name in body should be at least 3 chars long',
        ],
      ],
    ],
    [
      'maxLength',
      { name: 'abcdefghijk' },
      [['spec.name', 'FieldValueTooLong', 'Too long: may not be more than 10 bytes'], NOT_CHECKED],
    ],
    [
      'minimum',
      { name: 'abc', replicas: -2 },
      [
        [
          'spec.replicas',
          'FieldValueInvalid',
          'Invalid value: -2: spec.replicas in body should be greater than or equal to 0',
        ],
        ['.spec.replicas', 'FieldValueInvalid', 'Invalid value: -2: should be a non-negative integer'],
      ],
    ],
    [
      'maximum',
      { name: 'abc', replicas: 102 },
      [
        [
          'spec.replicas',
          'FieldValueInvalid',
          'Invalid value: 102: spec.replicas in body should be less than or equal to 100',
        ],
      ],
    ],
    [
      'exclusiveMinimum',
      { name: 'abc', ratio: 0 },
      [['spec.ratio', 'FieldValueInvalid', 'Invalid value: 0: spec.ratio in body should be greater than 0']],
    ],
    [
      'exclusiveMaximum',
      { name: 'abc', ratio: 1 },
      [['spec.ratio', 'FieldValueInvalid', 'Invalid value: 1: spec.ratio in body should be less than 1']],
    ],
    [
      'multipleOf (integer)',
      { name: 'abc', replicas: 3 },
      [
        [
          'spec.replicas',
          'FieldValueInvalid',
          'Invalid value: 3: spec.replicas in body should be a multiple of 2',
        ],
      ],
    ],
    [
      'multipleOf (number)',
      { name: 'abc', weight: 1.25 },
      [
        [
          'spec.weight',
          'FieldValueInvalid',
          'Invalid value: 1.25: spec.weight in body should be a multiple of 0.5',
        ],
      ],
    ],
    [
      'minItems',
      { name: 'abc', tags: [] },
      [
        [
          'spec.tags',
          'FieldValueInvalid',
          'Invalid value: 0: spec.tags in body should have at least 1 items',
        ],
      ],
    ],
    [
      'maxItems',
      { name: 'abc', tags: ['a', 'b', 'c', 'd'] },
      [['spec.tags', 'FieldValueTooMany', 'Too many: 4: must have at most 3 items'], NOT_CHECKED],
    ],
    [
      'minProperties',
      { name: 'abc', labels: {} },
      [
        [
          'spec.labels',
          'FieldValueInvalid',
          'Invalid value: 0: spec.labels in body should have at least 1 properties',
        ],
      ],
    ],
    [
      'maxProperties',
      { name: 'abc', labels: { a: '1', b: '2', c: '3' } },
      [['spec.labels', 'FieldValueTooMany', 'Too many: 3: must have at most 2 items'], NOT_CHECKED],
    ],
    ['required', { color: 'red' }, [['spec.name', 'FieldValueRequired', 'Required value'], NOT_CHECKED]],
    ['nullable: false', { name: 'abc', ratio: null }, []],
    ['nullable: true', { name: 'abc', nickname: null }, []],
    ['x-kubernetes-int-or-string (int)', { name: 'abc', port: 8080 }, []],
    ['x-kubernetes-int-or-string (string)', { name: 'abc', port: 'http' }, []],
    [
      'x-kubernetes-int-or-string (other)',
      { name: 'abc', port: true },
      [
        [
          'spec.port',
          'FieldValueTypeInvalid',
          'Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
        ],
        // The anyOf of the int-or-string pattern fails too, with the errors of its first branch.
        [
          '<nil>',
          'FieldValueInvalid',
          'Invalid value: "": "spec.port" must validate at least one schema (anyOf)',
        ],
        [
          'spec.port',
          'FieldValueTypeInvalid',
          'Invalid value: "boolean": spec.port in body must be of type integer: "boolean"',
        ],
        NOT_CHECKED,
      ],
    ],
    [
      'x-kubernetes-embedded-resource',
      { name: 'abc', template: { kind: 'Pod', metadata: { name: 'a/b' } } },
      [
        ['spec.template.apiVersion', 'FieldValueRequired', 'Required value: must not be empty'],
        // An embedded name is only a path segment (ValidatePathSegmentName).
        ['spec.template.metadata.name', 'FieldValueInvalid', `Invalid value: "a/b": may not contain '/'`],
        NOT_CHECKED,
      ],
    ],
    [
      'x-kubernetes-embedded-resource (empty kind, valid name)',
      { name: 'abc', template: { apiVersion: 'v1', kind: '', metadata: { name: 'Not_A_DNS_Name' } } },
      [['spec.template.kind', 'FieldValueInvalid', 'Invalid value: "": must not be empty']],
    ],
    [
      'x-kubernetes-embedded-resource (valid)',
      { name: 'abc', template: { apiVersion: 'v1', kind: 'Pod', spec: { any: 1 } } },
      [],
    ],
    [
      'x-kubernetes-preserve-unknown-fields keeps anything',
      { name: 'abc', extra: { known: 'k', anything: [1, { deep: true }] } },
      [],
    ],
    [
      'x-kubernetes-list-type: set',
      { name: 'abc', tags: ['a', 'a'] },
      [['spec.tags[1]', 'FieldValueDuplicate', 'Duplicate value: "a"']],
    ],
    [
      'x-kubernetes-list-type: map (keys unique)',
      { name: 'abc', ports: [{ name: 'http' }, { name: 'http', port: 8080 }] },
      [['spec.ports[1]', 'FieldValueDuplicate', 'Duplicate value: map[string]interface {}{"name":"http"}']],
    ],
    [
      'x-kubernetes-list-type: map (keys required)',
      { name: 'abc', ports: [{ port: 1 }] },
      [['spec.ports[0].name', 'FieldValueRequired', 'Required value'], NOT_CHECKED],
    ],
    ['x-kubernetes-list-type: atomic', { name: 'abc', args: ['a', 'a'] }, []],
    [
      'x-kubernetes-map-type: atomic and granular accept any keys of their schema',
      { name: 'abc', selector: { app: 'x' }, labels: { a: 'b' } },
      [],
    ],
  ])('%s', async (_keyword, spec, causes) => {
    const res = await create(spec);
    if (causes.length === 0) {
      expect(res.status, res.text).toBe(201);
      return;
    }
    expect(res.status, res.text).toBe(422);
    expect(causesOf(res)).toEqual(causes);
    const name = res.json.details.name;
    const joined = causes.map(([f, , m]) => `${f}: ${m}`);
    expect(res.json).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Invalid',
      code: 422,
      details: { name, group: G, kind: 'Sink' },
      message: `Sink.${G} "${name}" is invalid: ${joined.length === 1 ? joined[0] : `[${joined.join(', ')}]`}`,
    });
  });
});

describe('CEL x-kubernetes-validations, one row each', () => {
  test.each<[what: string, spec: Json, causes: Cause[]]>([
    [
      'rule with message and fieldPath (root rule, integers typed as integers)',
      { name: 'abc', replicas: 4, maxReplicas: 2 },
      [
        [
          'spec.replicas',
          'FieldValueInvalid',
          'Invalid value: "object": replicas must not exceed maxReplicas',
        ],
      ],
    ],
    ['rule that holds', { name: 'abc', replicas: 2, maxReplicas: 2 }, []],
    [
      'lists library (sum)',
      { name: 'abc', weights: [50, 40] },
      [['spec.weights', 'FieldValueInvalid', 'Invalid value: "array": weights must add up to 100']],
    ],
    ['lists library holds', { name: 'abc', weights: [50, 50] }, []],
    [
      'url library',
      { name: 'abc', endpoint: 'http://example.com' },
      [['spec.endpoint', 'FieldValueInvalid', 'Invalid value: "string": endpoint must be an https URL']],
    ],
    [
      'quantity library with messageExpression',
      { name: 'abc', memory: '128Gi' },
      [['spec.memory', 'FieldValueInvalid', 'Invalid value: "string": memory 128Gi is more than 64Gi']],
    ],
    ['quantity library holds', { name: 'abc', memory: '512Mi' }, []],
    [
      'format library',
      { name: 'abc', hostname: 'Not_A_Host' },
      [['spec.hostname', 'FieldValueInvalid', 'Invalid value: "string": hostname must be a DNS subdomain']],
    ],
    [
      'strings and regex libraries with reason FieldValueForbidden',
      { name: 'abc', slug: 'Mixed-Case' },
      [['spec.slug', 'FieldValueForbidden', 'Forbidden: slug must be lowercase letters, digits and dashes']],
    ],
    [
      // (kube walks the object's fields in map order: the order of these two is not fixed)
      'several rules fail: all reported',
      { name: 'abc', endpoint: 'ftp://x', slug: 'X' },
      [
        ['spec.endpoint', 'FieldValueInvalid', 'Invalid value: "string": endpoint must be an https URL'],
        ['spec.slug', 'FieldValueForbidden', 'Forbidden: slug must be lowercase letters, digits and dashes'],
      ],
    ],
    ['transition rule is not evaluated on create', { name: 'abc', immutable: 'x' }, []],
  ])('%s', async (_what, spec, causes) => {
    const res = await create(spec);
    if (causes.length === 0) {
      expect(res.status, res.text).toBe(201);
      return;
    }
    expect(res.status, res.text).toBe(422);
    expect(causesOf(res)).toEqual(causes);
  });

  test('transition rules see oldSelf on update, and only when an old value exists', async () => {
    const created = await http.post(SINKS, sink('tr', { name: 'abc' }));
    expect(created.status).toBe(201);
    // No old value: the rule does not run when the field is added.
    const added = await http.patch(
      `${SINKS}/tr`,
      { spec: { immutable: 'one' } },
      'application/merge-patch+json',
    );
    expect(added.status, added.text).toBe(200);
    const changed = await http.patch(
      `${SINKS}/tr`,
      { spec: { immutable: 'two' } },
      'application/merge-patch+json',
    );
    expect(changed.status).toBe(422);
    expect(changed.json.message).toBe(
      `Sink.${G} "tr" is invalid: spec.immutable: Forbidden: immutable is immutable`,
    );
    expect(causesOf(changed)).toEqual([
      ['spec.immutable', 'FieldValueForbidden', 'Forbidden: immutable is immutable'],
    ]);
    // An unchanged value passes.
    const same = await http.patch(`${SINKS}/tr`, { spec: { color: 'blue' } }, 'application/merge-patch+json');
    expect(same.status, same.text).toBe(200);
  });

  test('schema errors on update are ratcheted: an unchanged invalid value does not block other changes', async () => {
    // Created valid, the object stays updatable even if a later field is invalid only in new writes.
    const created = await http.post(SINKS, sink('rat', { name: 'abc', tags: ['a'] }));
    expect(created.status).toBe(201);
    const bad = await http.patch(
      `${SINKS}/rat`,
      { spec: { tags: ['a', 'a'] } },
      'application/merge-patch+json',
    );
    expect(bad.status).toBe(422);
    expect(causesOf(bad)).toEqual([['spec.tags[1]', 'FieldValueDuplicate', 'Duplicate value: "a"']]);
  });
});

describe('joined errors', () => {
  test('several schema errors are joined in one message and listed as causes', async () => {
    const res = await http.post(SINKS, sink('many', { name: 'AB', replicas: 101, ratio: 2 }));
    expect(res.status).toBe(422);
    const causes = causesOf(res);
    expect(causes).toEqual(
      expect.arrayContaining([
        ['spec.name', 'FieldValueInvalid', `Invalid value: "AB": spec.name in body should match '^[a-z]+$'`],
        [
          'spec.name',
          'FieldValueInvalid',
          'Invalid value: "AB": spec.name in body should be at least 3 chars long',
        ],
        [
          'spec.replicas',
          'FieldValueInvalid',
          'Invalid value: 101: spec.replicas in body should be less than or equal to 100',
        ],
        [
          'spec.replicas',
          'FieldValueInvalid',
          'Invalid value: 101: spec.replicas in body should be a multiple of 2',
        ],
        ['spec.ratio', 'FieldValueInvalid', 'Invalid value: 2: spec.ratio in body should be less than 1'],
      ]),
    );
    expect(causes).toHaveLength(5);
    expect(res.json.message).toBe(
      `Sink.${G} "many" is invalid: [${causes.map(([f, , m]) => `${f}: ${m}`).join(', ')}]`,
    );
  });

  test('metadata errors come first, once', async () => {
    const res = await http.post(SINKS, { ...sink('Bad_Name', { name: 'abc', replicas: 3 }) });
    expect(res.status).toBe(422);
    expect(causesOf(res)).toEqual([
      [
        'metadata.name',
        'FieldValueInvalid',
        `Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      ],
      [
        'spec.replicas',
        'FieldValueInvalid',
        'Invalid value: 3: spec.replicas in body should be a multiple of 2',
      ],
    ]);
  });
});

describe('CEL cost limits', () => {
  const costCrd = (maxItems: number) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `costs${maxItems}.cost.example.com` },
    spec: {
      group: 'cost.example.com',
      scope: 'Namespaced',
      names: { plural: `costs${maxItems}`, kind: `Cost${maxItems}` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    list: {
                      type: 'array',
                      maxItems,
                      items: { type: 'string', maxLength: 4 },
                      'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y))' }],
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  });

  test('a rule whose estimated cost is too high is refused with the CRD', async () => {
    const res = await http.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', costCrd(2000));
    expect(res.status).toBe(422);
    expect(causesOf(res)[0]).toEqual([
      'spec.validation.openAPIV3Schema.properties[spec].properties[list].x-kubernetes-validations[0].rule',
      'FieldValueForbidden',
      'Forbidden: estimated rule cost exceeds budget by factor of 81.6x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    ]);
  });

  test('a rule that runs over the per-call cost limit fails the object', async () => {
    await establish(http, costCrd(300));
    const list = Array.from({ length: 300 }, () => 'aaaa');
    const res = await http.post(crPath('cost.example.com', 'v1', 'costs300'), {
      apiVersion: 'cost.example.com/v1',
      kind: 'Cost300',
      metadata: { name: 'expensive' },
      spec: { list },
    });
    expect(res.status).toBe(422);
    expect(causesOf(res)).toEqual([
      [
        'spec.list',
        'FieldValueInvalid',
        `Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, x == y))`,
      ],
    ]);
    const cheap = await http.post(crPath('cost.example.com', 'v1', 'costs300'), {
      apiVersion: 'cost.example.com/v1',
      kind: 'Cost300',
      metadata: { name: 'cheap' },
      spec: { list: ['a', 'a'] },
    });
    expect(cheap.status, cheap.text).toBe(201);
  });
});
