/**
 * The seeds' kinds declared in TypeScript with `defineResource` — what an operator author
 * writes instead of Go types with markers — plus a kitchen-sink kind that uses every feature.
 */
import { defineResource, Kube, type Static, Type } from 'kubeloop';

/** sample-controller's Foo (seed 003). */
export const Foo = defineResource({
  group: 'samplecontroller.k8s.io',
  version: 'v1alpha1',
  kind: 'Foo',
  annotations: { 'api-approved.kubernetes.io': 'unapproved, experimental-only' },
  spec: Type.Object({
    deploymentName: Type.String(),
    replicas: Type.Integer({ minimum: 1, maximum: 10 }),
  }),
  status: Type.Object({ availableReplicas: Type.Optional(Type.Integer()) }),
  printerColumns: [{ name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' }],
});
export type Foo = Static<typeof Foo>;

/** FooBar (seed): spec.target is required. */
export const FooBar = defineResource({
  group: 'example.com',
  version: 'v1',
  kind: 'FooBar',
  shortNames: ['fb'],
  spec: Type.Object({
    target: Type.String({ minLength: 1 }),
    message: Type.Optional(Type.String()),
  }),
  status: Type.Object({ observed: Type.Optional(Type.String()) }),
  printerColumns: [
    { name: 'Target', type: 'string', jsonPath: '.spec.target' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type FooBar = Static<typeof FooBar>;

/** GenericDaemon (seed): spec.image is required. */
export const GenericDaemon = defineResource({
  group: 'mydomain.com',
  version: 'v1beta1',
  kind: 'GenericDaemon',
  shortNames: ['gd'],
  spec: Type.Object({
    label: Type.Optional(Type.String()),
    image: Type.String(),
  }),
  status: Type.Object({ count: Type.Optional(Type.Integer()) }),
});
export type GenericDaemon = Static<typeof GenericDaemon>;

/** EtcdCluster (seed): an odd size, a version that never goes down, a scale subresource. */
export const EtcdCluster = defineResource({
  group: 'etcd.database.coreos.com',
  version: 'v1beta2',
  kind: 'EtcdCluster',
  shortNames: ['etcd'],
  categories: ['all'],
  spec: Type.Object({
    size: Kube.Rules(Type.Integer({ minimum: 1, maximum: 7 }), {
      rule: 'self % 2 == 1',
      message: 'size must be odd',
    }),
    version: Type.Optional(
      Type.String({
        default: '3.5.0',
        pattern: '^\\d+\\.\\d+\\.\\d+$',
        'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'version may not be downgraded' }],
      }),
    ),
  }),
  status: Type.Object({ size: Type.Optional(Type.Integer()), phase: Type.Optional(Type.String()) }),
  scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' },
  printerColumns: [
    { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
  ],
});
export type EtcdCluster = Static<typeof EtcdCluster>;

const SinkSpec = Type.Object({
  name: Type.String({
    minLength: 3,
    maxLength: 10,
    pattern: '^[a-z]+$',
    description: 'A short lowercase name.',
  }),
  color: Type.Optional(
    Type.Union([Type.Literal('red'), Type.Literal('green'), Type.Literal('blue')], { default: 'red' }),
  ),
  level: Type.Optional(Kube.Enum([1, 2, 3])),
  replicas: Type.Optional(
    Type.Integer({ format: 'int32', minimum: 0, maximum: 100, multipleOf: 2, default: 2 }),
  ),
  maxReplicas: Type.Optional(Type.Integer()),
  ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
  enabled: Type.Optional(Type.Boolean()),
  data: Type.Optional(Type.String({ format: 'byte' })),
  args: Type.Optional(Kube.ListAtomic(Type.String({ maxLength: 16 }), { maxItems: 4 })),
  weights: Type.Optional(
    Type.Array(Type.Integer(), {
      maxItems: 8,
      'x-kubernetes-validations': [{ rule: 'self.sum() == 100', message: 'weights must add up to 100' }],
    }),
  ),
  endpoint: Type.Optional(
    Kube.Rules(Type.String({ maxLength: 256 }), {
      rule: "isURL(self) && url(self).getScheme() == 'https'",
      message: 'endpoint must be an https URL',
    }),
  ),
  memory: Type.Optional(
    Kube.Rules(Kube.Quantity(), {
      rule: "quantity(string(self)).compareTo(quantity('64Gi')) <= 0",
      messageExpression: "'memory ' + string(self) + ' is more than 64Gi'",
    }),
  ),
  slug: Type.Optional(
    Kube.Rules(Type.String({ maxLength: 63 }), {
      rule: "self.matches('^[a-z][a-z0-9-]*$')",
      message: 'slug must be lowercase letters, digits and dashes',
      reason: 'FieldValueForbidden',
    }),
  ),
  created: Type.Optional(Type.String({ format: 'date-time' })),
  id: Type.Optional(Type.String({ format: 'uuid' })),
  port: Type.Optional(Kube.IntOrString()),
  nickname: Type.Optional(Kube.Nullable(Type.String())),
  tags: Type.Optional(Kube.ListSet(Type.String(), { minItems: 1, maxItems: 3 })),
  ports: Type.Optional(
    Kube.ListMap(Type.Object({ name: Type.String(), port: Type.Optional(Type.Integer({ default: 80 })) }), [
      'name',
    ]),
  ),
  labels: Type.Optional(Kube.Map(Type.String(), { minProperties: 1, maxProperties: 2 })),
  selector: Type.Optional(
    Type.Object({ app: Type.Optional(Type.String()) }, { 'x-kubernetes-map-type': 'atomic' }),
  ),
  template: Type.Optional(Kube.EmbeddedResource()),
  extra: Type.Optional(Kube.PreserveUnknownFields({ known: Type.Optional(Type.String()) })),
  raw: Type.Optional(Kube.Any()),
  storage: Type.Optional(
    Type.Union([
      Type.Object({ kind: Type.Literal('disk'), size: Type.Integer({ minimum: 1 }) }),
      Type.Object({ kind: Type.Literal('memory'), medium: Type.Optional(Type.String()) }),
    ]),
  ),
  limits: Type.Optional(
    Type.Intersect([
      Type.Object({ cpu: Type.Optional(Kube.Quantity()) }),
      Type.Object({ pods: Type.Optional(Type.Integer({ minimum: 0 })) }),
    ]),
  ),
  immutable: Type.Optional(
    Type.String({
      'x-kubernetes-validations': [
        { rule: 'self == oldSelf', message: 'immutable is immutable', reason: 'FieldValueForbidden' },
      ],
    }),
  ),
});

/** A kind that uses every feature of `defineResource`. */
export const Sink = defineResource({
  group: 'kitchen.example.com',
  kind: 'Sink',
  shortNames: ['sk'],
  categories: ['kitchen'],
  versions: {
    v1: {
      storage: true,
      description: 'A kitchen sink: every schema feature Kubernetes has.',
      metadata: Type.Object({ name: Type.Optional(Type.String({ maxLength: 20 })) }),
      spec: SinkSpec,
      status: Type.Object({
        replicas: Type.Optional(Type.Integer()),
        selector: Type.Optional(Type.String()),
        conditions: Type.Optional(Kube.Conditions()),
      }),
      validations: [
        {
          rule: '!has(self.spec.maxReplicas) || self.spec.replicas <= self.spec.maxReplicas',
          message: 'replicas must not exceed maxReplicas',
          fieldPath: '.spec.replicas',
        },
      ],
      printerColumns: [
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Color', type: 'string', jsonPath: '.spec.color', priority: 1 },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      },
      selectableFields: ['.spec.color', '.spec.enabled'],
    },
    v1beta1: {
      deprecated: true,
      deprecationWarning: 'kitchen.example.com/v1beta1 Sink is deprecated; use kitchen.example.com/v1',
      spec: Type.Object({ name: Type.String({ minLength: 3 }), color: Type.Optional(Type.String()) }),
      status: Type.Object({ replicas: Type.Optional(Type.Integer()) }),
    },
    v1alpha1: {
      served: false,
      spec: Type.Optional(Type.Object({ name: Type.Optional(Type.String()) })),
    },
  },
});
export type Sink = Static<typeof Sink>;

/** Every declared kind, by name. */
export const KINDS = { Foo, FooBar, GenericDaemon, EtcdCluster, Sink } as const;
