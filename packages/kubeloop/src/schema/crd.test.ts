import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { causeText } from '../api/validation.js';
import { validateCustomResourceDefinition } from './crd.js';
import type { CustomResourceDefinition, JSONSchemaProps } from './types.js';

const load = (f: string): CustomResourceDefinition =>
  parse(readFileSync(new URL(`./testdata/${f}`, import.meta.url), 'utf8'));

const base = (): CustomResourceDefinition => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    names: { kind: 'Widget', plural: 'widgets' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
          },
        },
      },
    ],
  },
});

const withSchema = (spec: JSONSchemaProps): CustomResourceDefinition => {
  const crd = base();
  (crd.spec.versions[0] as { schema: unknown }).schema = {
    openAPIV3Schema: { type: 'object', properties: { spec } },
  };
  return crd;
};

const run = (crd: CustomResourceDefinition, old?: CustomResourceDefinition) =>
  validateCustomResourceDefinition(crd, old).map(causeText);
const S = 'spec.validation.openAPIV3Schema.properties[spec]';

describe('validateCustomResourceDefinition', () => {
  test('the seed CRDs are valid', () => {
    for (const f of [
      'foobar-crd.yaml',
      'foo-crd.yaml',
      'genericdaemon-crd.yaml',
      'etcdcluster-crd.yaml',
      'kitchensink-crd.yaml',
    ])
      expect(run(load(f)), f).toEqual([]);
  });

  test.each<[string, (c: CustomResourceDefinition) => void, string[]]>([
    [
      'name must be plural.group',
      (c) => (c.metadata = { name: 'foo.example.com' }),
      ['metadata.name: Invalid value: "foo.example.com": must be spec.names.plural+"."+spec.group'],
    ],
    [
      'group needs a dot',
      (c) => {
        c.spec.group = 'example';
        c.metadata = { name: 'widgets.example' };
      },
      ['spec.group: Invalid value: "example": should be a domain with at least one dot'],
    ],
    ['scope required', (c) => (c.spec.scope = ''), ['spec.scope: Required value']],
    [
      'scope supported',
      (c) => (c.spec.scope = 'Global'),
      ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
    ],
    [
      'plural must be a DNS-1035 label',
      (c) => {
        c.spec.names.plural = 'Widgets';
        c.metadata = { name: 'Widgets.example.com' };
      },
      [
        `metadata.name: Invalid value: "Widgets.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
        `spec.names.plural: Invalid value: "Widgets": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      ],
    ],
    [
      'kind and listKind differ',
      (c) => (c.spec.names.listKind = 'Widget'),
      ['spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same'],
    ],
    [
      'short names',
      (c) => (c.spec.names.shortNames = ['w_1']),
      [
        `spec.names.shortNames[0]: Invalid value: "w_1": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      ],
    ],
    [
      'version names',
      (c) => ((c.spec.versions[0] as { name: string }).name = 'V1'),
      [
        `spec.versions[0].name: Invalid value: "V1": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
        `spec.version: Invalid value: "V1": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      ],
    ],
    [
      'schema required',
      (c) => delete (c.spec.versions[0] as { schema?: unknown }).schema,
      ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'],
    ],
    [
      'protected group needs approval',
      (c) => {
        c.spec.group = 'widgets.k8s.io';
        c.metadata = { name: 'widgets.widgets.k8s.io' };
      },
      [
        'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
      ],
    ],
    [
      'printer column type',
      (c) => {
        (c.spec.versions[0] as { additionalPrinterColumns: unknown }).additionalPrinterColumns = [
          { name: 'X', type: 'float', jsonPath: 'spec.x' },
        ];
      },
      [
        'spec.additionalPrinterColumns[0].type: Invalid value: "float": must be one of boolean,date,integer,number,string',
        'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must be a simple json path starting with .',
      ],
    ],
    [
      // Measured against kube-apiserver: a negative priority is stored, only the rest is checked.
      'printer column with a negative priority',
      (c) => {
        (c.spec.versions[0] as { additionalPrinterColumns: unknown }).additionalPrinterColumns = [
          { name: 'X', type: 'string', jsonPath: '.spec.x', priority: -1 },
        ];
      },
      [],
    ],
    [
      // kube's words, with the extension's name as kube misspells it.
      'preserveUnknownFields set to true',
      (c) => {
        (c.spec as { preserveUnknownFields?: boolean }).preserveUnknownFields = true;
      },
      [
        'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ],
    ],
    [
      'scale paths',
      (c) => {
        (c.spec.versions[0] as { subresources: unknown }).subresources = {
          scale: { specReplicasPath: '.status.x', statusReplicasPath: '.spec.y' },
        };
      },
      [
        'spec.subresources.scale.specReplicasPath: Invalid value: ".status.x": should be a json path under .spec',
        'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.y": should be a json path under .status',
      ],
    ],
    [
      'webhook conversion needs a client config',
      (c) => (c.spec.conversion = { strategy: 'Webhook' }),
      [
        'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
        'spec.conversion.conversionReviewVersions: Required value',
      ],
    ],
    [
      'selectable fields must be scalars',
      (c) => {
        (c.spec.versions[0] as { selectableFields: unknown }).selectableFields = [
          { jsonPath: '.spec' },
          { jsonPath: '.spec.nope' },
        ];
      },
      [
        'spec.selectableFields[0].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        'spec.selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
      ],
    ],
    [
      'exactly one storage version',
      (c) => ((c.spec.versions[0] as { storage: boolean }).storage = false),
      [
        'spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:false, …}}: must have exactly one version marked as storage version',
        'status.storedVersions: Invalid value: []string(nil): must have at least one stored version',
      ],
    ],
  ])('%s', (_n, mutate, expected) => {
    const crd = base();
    mutate(crd);
    expect(run(crd)).toEqual(expected);
  });

  test.each<[string, JSONSchemaProps, string[]]>([
    [
      'structural: type required',
      { type: 'object', properties: { replicas: {} } },
      [`${S}.properties[replicas].type: Required value: must not be empty for specified object fields`],
    ],
    [
      'uniqueItems forbidden',
      { type: 'array', uniqueItems: true, items: { type: 'string' } },
      [
        `${S}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      ],
    ],
    ['$ref forbidden', { type: 'object', $ref: '#/x' }, [`${S}.$ref: Forbidden: $ref is not supported`]],
    [
      'properties with additionalProperties',
      { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
      [`${S}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
    ],
    [
      'list-map keys required',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        items: { type: 'object', properties: { name: { type: 'string' } } },
      },
      [`${S}.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`],
    ],
    [
      'list-map key must be required or defaulted',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' } } },
      },
      [
        `${S}.items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      ],
    ],
    [
      'set items must be atomic',
      {
        type: 'array',
        'x-kubernetes-list-type': 'set',
        items: { type: 'object', properties: { a: { type: 'string' } } },
      },
      [
        `${S}.items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
      ],
    ],
    [
      'map-type values',
      { type: 'object', 'x-kubernetes-map-type': 'sparse' },
      [`${S}.x-kubernetes-map-type: Unsupported value: "sparse": supported values: "atomic", "granular"`],
    ],
    [
      'default must validate',
      { type: 'object', properties: { size: { type: 'integer', maximum: 3, default: 5 } } },
      [`${S}.properties[size].default: Invalid value: 5:  in body should be less than or equal to 3`],
    ],
    [
      'default must be pruned',
      { type: 'object', properties: { o: { type: 'object', default: { x: 1 }, properties: {} } } },
      [
        `${S}.properties[o].default: Invalid value: map[string]interface {}{"x":1}: must not have unknown fields`,
      ],
    ],
    [
      'CEL compile error',
      {
        type: 'object',
        properties: { a: { type: 'integer' } },
        'x-kubernetes-validations': [{ rule: 'self.b > 1' }],
      },
      [
        `${S}.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.b > 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'b'\n | self.b > 1\n | ....^`,
      ],
    ],
    [
      'CEL must be bool',
      {
        type: 'object',
        properties: { a: { type: 'integer' } },
        'x-kubernetes-validations': [{ rule: 'self.a' }],
      },
      [
        `${S}.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.a", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool`,
      ],
    ],
    [
      'CEL reason',
      { type: 'object', 'x-kubernetes-validations': [{ rule: 'true', reason: 'Bad' }] },
      [
        `${S}.x-kubernetes-validations[0].reason: Unsupported value: "Bad": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
      ],
    ],
    [
      'CEL multi-line rule needs a message',
      { type: 'object', 'x-kubernetes-validations': [{ rule: 'true &&\ntrue' }] },
      [
        `${S}.x-kubernetes-validations[0].message: Required value: message must be specified if rule contains line breaks`,
      ],
    ],
    [
      'CEL oldSelf in atomic list items',
      {
        type: 'array',
        maxItems: 10,
        items: { type: 'string', maxLength: 10, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] },
      },
      [
        `${S}.items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${S}`,
      ],
    ],
    [
      'CEL estimated cost',
      {
        type: 'array',
        items: { type: 'string' },
        'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y))' }],
      },
      [
        `${S}.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
        'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
        'spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
      ],
    ],
  ])('%s', (_n, spec, expected) => {
    expect(run(withSchema(spec))).toEqual(expected);
  });

  test('per-version schemas keep per-version paths', () => {
    const crd = base();
    crd.spec.versions.push({
      name: 'v2',
      served: true,
      storage: false,
      schema: {
        openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: {} } } } },
      },
    });
    expect(run(crd)).toEqual([
      'spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[n].type: Required value: must not be empty for specified object fields',
    ]);
  });

  test('update: group and plural are immutable, scope and kind once established', () => {
    const old = base();
    old.status = { storedVersions: ['v1'], conditions: [{ type: 'Established', status: 'True' }] };
    old.metadata = { ...old.metadata, resourceVersion: '1' };
    const crd = base();
    crd.metadata = { ...crd.metadata, resourceVersion: '1' };
    crd.spec.scope = 'Cluster';
    crd.spec.names.kind = 'Gadget';
    expect(run(crd, old)).toEqual([
      'spec.scope: Invalid value: "Cluster": field is immutable',
      'spec.names.kind: Invalid value: "Gadget": field is immutable',
    ]);
  });
});
