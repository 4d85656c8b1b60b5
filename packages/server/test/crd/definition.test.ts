/**
 * Creating CustomResourceDefinitions over HTTP: what apiextensions' validation refuses (422 with
 * the field path of every problem) and what it accepts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { CRDS, type Http, httpClient, type Json, seedCrd, simpleCrd } from './support.js';

let cp: ControlPlane;
let http: Http;
beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

// Every case gets its own names: a CRD accepted by mistake must not turn the next case into a 409.
let n = 0;
const fresh = () => {
  n++;
  return simpleCrd(`gadgets${n}`, `Gadget${n}`);
};
const schemaCrd = (spec: Json): Json => {
  const c = fresh();
  c.spec.versions[0].schema.openAPIV3Schema = { type: 'object', properties: { spec } };
  return c;
};
const S = 'spec.validation.openAPIV3Schema.properties[spec]';
const DNS1035 = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`;

type Row = [what: string, crd: () => Json, causes: [field: string, reason: string, message: string][]];

/** A CRD, mutated. */
const mutated =
  (f: (c: Json) => void, base = fresh) =>
  () => {
    const c = base();
    f(c);
    return c;
  };

describe('CRD validation answers 422 Invalid with every cause', () => {
  test.each<Row>([
    [
      'metadata.name must be plural.group',
      mutated((c) => (c.metadata.name = 'gadget.example.com')),
      [
        [
          'metadata.name',
          'FieldValueInvalid',
          'Invalid value: "gadget.example.com": must be spec.names.plural+"."+spec.group',
        ],
      ],
    ],
    [
      'plural must be lowercase',
      mutated((c) => {
        c.spec.names.plural = 'Gadgets';
        c.metadata.name = 'gadgets-x.example.com';
      }),
      [
        [
          'metadata.name',
          'FieldValueInvalid',
          'Invalid value: "gadgets-x.example.com": must be spec.names.plural+"."+spec.group',
        ],
        [
          'spec.names.plural',
          'FieldValueInvalid',
          `Invalid value: "Gadgets": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
        ],
      ],
    ],
    [
      'singular must be a DNS-1035 label',
      mutated((c) => (c.spec.names.singular = 'Gadget')),
      [
        [
          'spec.names.singular',
          'FieldValueInvalid',
          `Invalid value: "Gadget": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
        ],
      ],
    ],
    [
      'kind is required (singular and listKind are defaulted from it)',
      mutated((c) => delete c.spec.names.kind),
      [
        ['spec.names.singular', 'FieldValueRequired', 'Required value'],
        ['spec.names.kind', 'FieldValueRequired', 'Required value'],
        ['spec.names.listKind', 'FieldValueRequired', 'Required value'],
      ],
    ],
    [
      'kind may have mixed case only',
      mutated((c) => (c.spec.names.kind = 'Gad_get')),
      [
        ['spec.names.singular', 'FieldValueInvalid', `Invalid value: "gad_get": ${DNS1035}`],
        [
          'spec.names.kind',
          'FieldValueInvalid',
          `Invalid value: "Gad_get": may have mixed case, but should otherwise match: ${DNS1035}`,
        ],
        [
          'spec.names.listKind',
          'FieldValueInvalid',
          `Invalid value: "Gad_getList": may have mixed case, but should otherwise match: ${DNS1035}`,
        ],
      ],
    ],
    [
      'listKind differs from kind',
      mutated((c) => {
        c.spec.names.kind = 'Gadget';
        c.spec.names.listKind = 'Gadget';
      }),
      [
        [
          'spec.names.listKind',
          'FieldValueInvalid',
          'Invalid value: "Gadget": kind and listKind may not be the same',
        ],
      ],
    ],
    [
      'short names are DNS-1035 labels',
      mutated((c) => (c.spec.names.shortNames = ['gd', 'G_D'])),
      [
        [
          'spec.names.shortNames[1]',
          'FieldValueInvalid',
          `Invalid value: "G_D": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
        ],
      ],
    ],
    [
      'categories are DNS-1035 labels',
      mutated((c) => (c.spec.names.categories = ['all', 'My Things'])),
      [
        [
          'spec.names.categories[1]',
          'FieldValueInvalid',
          `Invalid value: "My Things": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
        ],
      ],
    ],
    [
      'scope is Namespaced or Cluster',
      mutated((c) => (c.spec.scope = 'Global')),
      [
        [
          'spec.scope',
          'FieldValueNotSupported',
          'Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        ],
      ],
    ],
    [
      'at least one version',
      mutated((c) => (c.spec.versions = [])),
      [
        [
          'spec.versions',
          'FieldValueInvalid',
          'Invalid value: []apiextensions.CustomResourceDefinitionVersion{}: must have exactly one version marked as storage version',
        ],
        [
          'status.storedVersions',
          'FieldValueInvalid',
          'Invalid value: []string(nil): must have at least one stored version',
        ],
      ],
    ],
    [
      'exactly one storage version',
      mutated((c) => {
        c.spec.versions.push({ ...c.spec.versions[0], name: 'v2' });
      }),
      [
        [
          'spec.versions',
          'FieldValueInvalid',
          'Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:true, …}, apiextensions.CustomResourceDefinitionVersion{Name:"v2", Served:true, Storage:true, …}}: must have exactly one version marked as storage version',
        ],
        // PrepareForCreate records the first storage version only.
        [
          'status.storedVersions',
          'FieldValueInvalid',
          'Invalid value: []string{"v1"}: must have the storage version v2',
        ],
      ],
    ],
    [
      'protected group without approval',
      mutated((c) => {
        c.spec.group = 'gadgets.k8s.io';
        c.metadata.name = `${c.spec.names.plural}.gadgets.k8s.io`;
      }),
      [
        [
          'metadata.annotations[api-approved.kubernetes.io]',
          'FieldValueRequired',
          'Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
        ],
      ],
    ],
    [
      'structural: every field has a type',
      () => schemaCrd({ type: 'object', properties: { size: {} } }),
      [
        [
          `${S}.properties[size].type`,
          'FieldValueRequired',
          'Required value: must not be empty for specified object fields',
        ],
      ],
    ],
    [
      'structural: additionalProperties and properties are exclusive',
      () =>
        schemaCrd({
          type: 'object',
          properties: { a: { type: 'string' } },
          additionalProperties: { type: 'string' },
        }),
      [
        [
          `${S}.additionalProperties`,
          'FieldValueForbidden',
          'Forbidden: additionalProperties and properties are mutual exclusive',
        ],
      ],
    ],
    [
      'structural: uniqueItems true is forbidden',
      () => schemaCrd({ type: 'array', uniqueItems: true, items: { type: 'string' } }),
      [
        [
          `${S}.uniqueItems`,
          'FieldValueForbidden',
          'Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
        ],
      ],
    ],
    [
      'structural: int-or-string excludes preserve-unknown-fields',
      () =>
        schemaCrd({
          type: 'object',
          properties: {
            port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true },
          },
        }),
      [
        [
          `${S}.properties[port].x-kubernetes-preserve-unknown-fields`,
          'FieldValueInvalid',
          'Invalid value: true: must be false if x-kubernetes-int-or-string is true',
        ],
      ],
    ],
    [
      'structural: embedded-resource needs type object',
      () =>
        schemaCrd({
          type: 'object',
          properties: { t: { type: 'string', 'x-kubernetes-embedded-resource': true } },
        }),
      [
        // Structural errors are sorted by their text, as ValidateStructural does.
        [
          `${S}.properties[t].properties`,
          'FieldValueRequired',
          'Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
        ],
        [
          `${S}.properties[t].type`,
          'FieldValueInvalid',
          'Invalid value: "string": must be object if x-kubernetes-embedded-resource is true',
        ],
      ],
    ],
    [
      'structural: preserve-unknown-fields false is forbidden',
      () => schemaCrd({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false }),
      [
        [
          `${S}.x-kubernetes-preserve-unknown-fields`,
          'FieldValueInvalid',
          'Invalid value: false: must be true or undefined',
        ],
      ],
    ],
    [
      'forbidden keyword: patternProperties',
      () => schemaCrd({ type: 'object', patternProperties: { '^a': { type: 'string' } } }),
      [[`${S}.patternProperties`, 'FieldValueForbidden', 'Forbidden: patternProperties is not supported']],
    ],
    [
      'forbidden keyword: additionalProperties at the root',
      mutated((c) => {
        c.spec.versions[0].schema.openAPIV3Schema = {
          type: 'object',
          additionalProperties: { type: 'string' },
        };
      }),
      [
        [
          'spec.validation.openAPIV3Schema.additionalProperties',
          'FieldValueForbidden',
          'Forbidden: must not be used at the root',
        ],
      ],
    ],
    [
      'metadata may only restrict name and generateName',
      mutated((c) => {
        c.spec.versions[0].schema.openAPIV3Schema = {
          type: 'object',
          properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
        };
      }),
      [
        [
          'spec.validation.openAPIV3Schema.properties[metadata]',
          'FieldValueForbidden',
          'Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
        ],
      ],
    ],
    [
      'list-type map needs keys',
      () =>
        schemaCrd({
          type: 'array',
          'x-kubernetes-list-type': 'map',
          items: { type: 'object', properties: { name: { type: 'string' } } },
        }),
      [
        [
          `${S}.x-kubernetes-list-map-keys`,
          'FieldValueRequired',
          'Required value: must not be empty if x-kubernetes-list-type is map',
        ],
      ],
    ],
    [
      'list-map-keys only with list-type map',
      () =>
        schemaCrd({
          type: 'array',
          'x-kubernetes-list-type': 'atomic',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        }),
      [
        [
          `${S}.x-kubernetes-list-type`,
          'FieldValueInvalid',
          'Invalid value: "atomic": must be map if x-kubernetes-list-map-keys is non-empty',
        ],
      ],
    ],
    [
      'map-type values',
      () => schemaCrd({ type: 'object', 'x-kubernetes-map-type': 'sparse' }),
      [
        [
          `${S}.x-kubernetes-map-type`,
          'FieldValueNotSupported',
          'Unsupported value: "sparse": supported values: "atomic", "granular"',
        ],
      ],
    ],
    [
      'a default must validate against its schema',
      () => schemaCrd({ type: 'object', properties: { size: { type: 'integer', maximum: 3, default: 5 } } }),
      [
        [
          `${S}.properties[size].default`,
          'FieldValueInvalid',
          'Invalid value: 5:  in body should be less than or equal to 3',
        ],
      ],
    ],
    [
      'a CEL rule that does not compile',
      () =>
        schemaCrd({
          type: 'object',
          properties: { a: { type: 'integer' } },
          'x-kubernetes-validations': [{ rule: 'self.b > 1' }],
        }),
      [
        [
          `${S}.x-kubernetes-validations[0].rule`,
          'FieldValueInvalid',
          `Invalid value: apiextensions.ValidationRule{Rule:"self.b > 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'b'\n | self.b > 1\n | ....^`,
        ],
      ],
    ],
    [
      'a CEL messageExpression that does not compile',
      () =>
        schemaCrd({
          type: 'object',
          properties: { a: { type: 'integer' } },
          'x-kubernetes-validations': [{ rule: 'self.a > 1', messageExpression: 'self.a' }],
        }),
      [
        [
          `${S}.x-kubernetes-validations[0].messageExpression`,
          'FieldValueInvalid',
          `Invalid value: apiextensions.ValidationRule{Rule:"self.a > 1", Message:"", MessageExpression:"self.a", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: messageExpression must evaluate to a string`,
        ],
      ],
    ],
    [
      'a CEL fieldPath that does not exist',
      () =>
        schemaCrd({
          type: 'object',
          properties: { a: { type: 'integer' } },
          'x-kubernetes-validations': [{ rule: 'self.a > 1', fieldPath: '.b' }],
        }),
      [
        [
          `${S}.x-kubernetes-validations[0].fieldPath`,
          'FieldValueInvalid',
          'Invalid value: ".b": fieldPath must be a valid path',
        ],
      ],
    ],
  ])('%s', async (_what, build, expected) => {
    const crd = build();
    const res = await http.post(CRDS, crd);
    expect(res.status, res.text).toBe(422);
    const causes = res.json.details.causes.map((c: Json) => [c.field, c.reason, c.message]);
    expect(causes).toEqual(expected);
    expect(res.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Invalid',
      code: 422,
      details: { name: crd.metadata.name, group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
    });
    const joined = expected.map(([f, , m]) => `${f}: ${m}`);
    expect(res.json.message).toBe(
      `CustomResourceDefinition.apiextensions.k8s.io "${crd.metadata.name}" is invalid: ${joined.length === 1 ? joined[0] : `[${joined.join(', ')}]`}`,
    );
    // Nothing was stored.
    expect((await http.get(`${CRDS}/${crd.metadata.name}`)).status).toBe(404);
  });
});

describe('CRD validation accepts', () => {
  test.each<[string, () => Json]>([
    ['the seed FooBar', () => seedCrd('foobar')],
    ['the seed Foo (approved-or-bypassed protected group)', () => seedCrd('foo')],
    ['the seed GenericDaemon', () => seedCrd('genericdaemon')],
    ['the seed EtcdCluster', () => seedCrd('etcdcluster')],
    ['the kitchen sink', () => seedCrd('kitchensink')],
    [
      'a protected group with an approval URL',
      mutated((c) => {
        c.spec.group = 'gizmos.k8s.io';
        c.metadata.name = `${c.spec.names.plural}.gizmos.k8s.io`;
        c.metadata.annotations = {
          'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/78458',
        };
      }),
    ],
    [
      'a cluster-scoped kind',
      mutated((c) => {
        c.spec.scope = 'Cluster';
        c.spec.names = { plural: 'clusterthings', kind: 'ClusterThing' };
        c.metadata.name = 'clusterthings.example.com';
      }),
    ],
  ])('%s', async (_what, build) => {
    const crd = build();
    const res = await http.post(CRDS, crd);
    expect(res.status, res.text).toBe(201);
    // Defaults of the CRD itself, as SetDefaults_CustomResourceDefinition writes them.
    expect(res.json.spec.names.singular).toBe(crd.spec.names.singular ?? crd.spec.names.kind.toLowerCase());
    expect(res.json.spec.names.listKind).toBe(crd.spec.names.listKind ?? `${crd.spec.names.kind}List`);
    expect(res.json.spec.conversion).toEqual({ strategy: 'None' });
    expect(res.json.status.storedVersions).toEqual([crd.spec.versions.find((v: Json) => v.storage).name]);
  });
});
