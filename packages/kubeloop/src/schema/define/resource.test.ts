import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ApiError } from '../../api/status.js';
import type { ResourceApi } from '../../client/api.js';
import type { Client } from '../../client/client.js';
import type { ObjectOf } from '../../client/descriptor.js';
import { SchemaDialectError } from './dialect.js';
import { Type } from './index.js';
import { Kube } from './kube.js';
import { defineResource, type Static } from './resource.js';

const Foo = defineResource({
  group: 'samplecontroller.example.com',
  version: 'v1alpha1',
  kind: 'Foo',
  spec: Type.Object({
    deploymentName: Type.String({ minLength: 1 }),
    replicas: Type.Integer({ minimum: 1, maximum: 10, default: 1 }),
  }),
  status: Type.Object({ availableReplicas: Type.Optional(Type.Integer()) }),
  printerColumns: [{ name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' }],
});
type Foo = Static<typeof Foo>;

const specV1 = Type.Object({ size: Type.Integer({ minimum: 1 }), mode: Kube.Enum(['fast', 'safe']) });
const specV1beta1 = Type.Object({ count: Type.Integer() });
const Bar = defineResource({
  group: 'example.com',
  kind: 'Bar',
  scope: 'Cluster',
  shortNames: ['br'],
  categories: ['all', 'examples'],
  versions: {
    v1: { spec: specV1, status: Type.Object({ ready: Type.Boolean() }), storage: true },
    v1beta1: {
      spec: Type.Optional(specV1beta1),
      deprecated: true,
      deprecationWarning: 'example.com/v1beta1 Bar is deprecated; use example.com/v1',
    },
  },
});

describe('defineResource: static types', () => {
  it('derives the object type with literal apiVersion and kind, spec and optional status', () => {
    expectTypeOf<Foo>().toEqualTypeOf<{
      apiVersion: 'samplecontroller.example.com/v1alpha1';
      kind: 'Foo';
      metadata: ObjectMeta;
      spec: { deploymentName: string; replicas: number };
      status?: { availableReplicas?: number };
    }>();
    type BarV1 = Static<typeof Bar>;
    expectTypeOf<BarV1['apiVersion']>().toEqualTypeOf<'example.com/v1'>();
    expectTypeOf<BarV1['spec']>().toEqualTypeOf<{ size: number; mode: 'fast' | 'safe' }>();
    type BarV1beta1 = Static<ReturnType<typeof Bar.at<'v1beta1'>>>;
    expectTypeOf<BarV1beta1['apiVersion']>().toEqualTypeOf<'example.com/v1beta1'>();
    expectTypeOf<BarV1beta1['spec']>().toEqualTypeOf<{ count: number } | undefined>();
    expectTypeOf<Static<typeof specV1>>().toEqualTypeOf<{ size: number; mode: 'fast' | 'safe' }>();
  });

  it('is a client descriptor typed with its objects', () => {
    const typecheck = (client: Client) => {
      expectTypeOf(client.api(Foo, 'default')).toEqualTypeOf<ResourceApi<Foo>>();
      expectTypeOf(client.api(Foo).get('a')).resolves.toEqualTypeOf<Foo>();
      expectTypeOf<ObjectOf<typeof Foo>>().toEqualTypeOf<Foo>();
      void client.patchStatus({} as Foo, { availableReplicas: 2 });
      // @ts-expect-error availableReplicas is a number
      void client.patchStatus({} as Foo, { availableReplicas: 'two' });
      // @ts-expect-error replicas is required
      Foo.build({ metadata: { name: 'x' }, spec: { deploymentName: 'd' } });
    };
    expectTypeOf(typecheck).toBeFunction();
  });

  it('types the Kubernetes vocabulary', () => {
    const s = Type.Object({
      port: Kube.IntOrString(),
      memory: Kube.Quantity(),
      nick: Kube.Nullable(Type.String()),
      labels: Kube.Map(Type.String()),
      raw: Kube.Any(),
      extra: Kube.PreserveUnknownFields({ known: Type.String() }),
      template: Kube.EmbeddedResource(),
      ports: Kube.ListMap(Type.Object({ name: Type.String(), port: Type.Integer() }), ['name']),
      tags: Kube.ListSet(Type.String()),
      conditions: Kube.Conditions(),
    });
    type S = Static<typeof s>;
    expectTypeOf<S['port']>().toEqualTypeOf<number | string>();
    expectTypeOf<S['nick']>().toEqualTypeOf<string | null>();
    expectTypeOf<S['labels']>().toEqualTypeOf<Record<string, string>>();
    expectTypeOf<S['raw']>().toEqualTypeOf<unknown>();
    expectTypeOf<S['extra']['known']>().toEqualTypeOf<string>();
    expectTypeOf<S['extra']>().toMatchTypeOf<Record<string, unknown>>();
    expectTypeOf<S['template']['metadata']>().toEqualTypeOf<ObjectMeta | undefined>();
    expectTypeOf<S['ports'][number]>().toEqualTypeOf<{ name: string; port: number }>();
    expectTypeOf<S['conditions'][number]['status']>().toEqualTypeOf<'True' | 'False' | 'Unknown'>();
    // @ts-expect-error list-map keys are fields of the items
    Kube.ListMap(Type.Object({ name: Type.String() }), ['nope']);
  });
});

describe('defineResource: descriptor and CRD', () => {
  it('fills in names, scope and the storage version', () => {
    expect(Foo).toMatchObject({
      group: 'samplecontroller.example.com',
      version: 'v1alpha1',
      kind: 'Foo',
      plural: 'foos',
      namespaced: true,
      apiVersion: 'samplecontroller.example.com/v1alpha1',
      storageVersion: 'v1alpha1',
    });
    const crd = Foo.crd();
    expect(crd.metadata?.name).toBe('foos.samplecontroller.example.com');
    expect(crd.spec.names).toEqual({ plural: 'foos', singular: 'foo', kind: 'Foo', listKind: 'FooList' });
    expect(crd.spec.scope).toBe('Namespaced');
    const v = crd.spec.versions[0]!;
    expect(v).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    expect(v.additionalPrinterColumns).toEqual([
      { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
    ]);
    const root = v.schema!.openAPIV3Schema!;
    expect(root.type).toBe('object');
    expect(root.required).toEqual(['spec']);
    expect(Object.keys(root.properties!)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(root.properties!.spec).toEqual({
      type: 'object',
      required: ['deploymentName', 'replicas'],
      properties: {
        deploymentName: { type: 'string', minLength: 1 },
        replicas: { type: 'integer', default: 1, minimum: 1, maximum: 10 },
      },
    });
    // A fresh copy each time: callers may edit theirs.
    crd.spec.names.plural = 'changed';
    expect(Foo.crd().spec.names.plural).toBe('foos');
  });

  it('declares several versions: served, storage, deprecated with a warning', () => {
    expect(Bar.version).toBe('v1');
    expect(Bar.namespaced).toBe(false);
    expect(Bar.versions).toEqual(['v1', 'v1beta1']);
    const crd = Bar.crd();
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names).toMatchObject({ shortNames: ['br'], categories: ['all', 'examples'] });
    const [v1, v1beta1] = crd.spec.versions;
    expect(v1).toMatchObject({ name: 'v1', served: true, storage: true, subresources: { status: {} } });
    expect(v1?.deprecated).toBeUndefined();
    expect(v1beta1).toMatchObject({
      name: 'v1beta1',
      served: true,
      storage: false,
      deprecated: true,
      deprecationWarning: 'example.com/v1beta1 Bar is deprecated; use example.com/v1',
    });
    expect(v1beta1?.subresources).toBeUndefined();
    expect(v1beta1?.schema?.openAPIV3Schema?.required).toBeUndefined();
    const beta = Bar.at('v1beta1');
    expect(beta).toMatchObject({
      version: 'v1beta1',
      apiVersion: 'example.com/v1beta1',
      storageVersion: 'v1',
    });
    expect(beta.schema.properties?.spec?.properties?.count).toEqual({ type: 'integer' });
    expect(Bar.at('v1')).toBe(Bar);
    expect(() => (Bar.at as (v: string) => unknown)('v2')).toThrow(/Bar has no version "v2"/);
  });

  it('emits subresources, selectable fields, root CEL rules, top-level fields and metadata rules', () => {
    const Sink = defineResource({
      group: 'kitchen.example.com',
      version: 'v1',
      kind: 'Sink',
      plural: 'sinkz',
      singular: 'sinky',
      listKind: 'SinkCollection',
      description: 'A kitchen sink.',
      metadata: Type.Object({ name: Type.Optional(Type.String({ maxLength: 20 })) }),
      spec: Type.Object({ replicas: Type.Integer(), color: Type.Optional(Type.String()) }),
      status: Type.Object({
        replicas: Type.Optional(Type.Integer()),
        selector: Type.Optional(Type.String()),
      }),
      properties: { data: Type.Optional(Kube.Map(Type.String())) },
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      },
      selectableFields: ['.spec.color'],
      validations: [{ rule: 'self.metadata.name.startsWith("s")', message: 'name must start with s' }],
      annotations: { 'example.com/owner': 'kitchen' },
    });
    const crd = Sink.crd();
    expect(crd.metadata).toEqual({
      name: 'sinkz.kitchen.example.com',
      annotations: { 'example.com/owner': 'kitchen' },
    });
    expect(crd.spec.names).toEqual({
      plural: 'sinkz',
      singular: 'sinky',
      kind: 'Sink',
      listKind: 'SinkCollection',
    });
    const v = crd.spec.versions[0]!;
    expect(v.subresources).toEqual({
      status: {},
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      },
    });
    expect(v.selectableFields).toEqual([{ jsonPath: '.spec.color' }]);
    const root = v.schema!.openAPIV3Schema!;
    expect(root.description).toBe('A kitchen sink.');
    expect(root['x-kubernetes-validations']).toEqual([
      { rule: 'self.metadata.name.startsWith("s")', message: 'name must start with s' },
    ]);
    expect(root.properties?.metadata).toEqual({
      type: 'object',
      properties: { name: { type: 'string', maxLength: 20 } },
    });
    expect(root.properties?.data).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
    expect(
      Sink.validate({
        apiVersion: 'kitchen.example.com/v1',
        kind: 'Sink',
        metadata: { name: 'tap' },
        spec: { replicas: 1 },
      }),
    ).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: '<nil>',
        message: 'Invalid value: "object": name must start with s',
      },
    ]);
    type Sink = Static<typeof Sink>;
    expectTypeOf<Sink['data']>().toEqualTypeOf<Record<string, string> | undefined>();
  });

  it('refuses, naming the field, what Kubernetes would refuse', () => {
    const bad = () =>
      defineResource({
        group: 'example.com',
        version: 'v1',
        kind: 'Bad',
        spec: Type.Object({
          byPattern: Type.Record(Type.String({ pattern: '^a' }), Type.String()),
          pair: Type.Tuple([Type.String(), Type.Number()]),
          either: Type.Union([Type.String(), Type.Boolean()]),
        }),
      });
    expect(bad).toThrow(SchemaDialectError);
    try {
      bad();
    } catch (e) {
      const err = e as SchemaDialectError;
      expect(err.problems.map((p) => [p.path, p.keyword])).toEqual([
        ['spec.byPattern', 'patternProperties'],
        ['spec.pair', 'additionalItems'],
        ['spec.pair', 'items'],
        ['spec.either', 'anyOf'],
      ]);
      expect(err.message).toContain('defineResource(Bad)');
      expect(err.message).toContain('spec.either: a union of string and boolean cannot be expressed');
    }
  });

  it("refuses a CRD the API server would refuse, with the server's answer", () => {
    let err: unknown;
    try {
      defineResource({
        group: 'example.com',
        version: 'v1',
        kind: 'Rule',
        spec: Type.Object({ size: Type.Integer({ 'x-kubernetes-validations': [{ rule: 'self.nope(' }] }) }),
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(422);
    expect((err as ApiError).message).toMatch(
      /^CustomResourceDefinition\.apiextensions\.k8s\.io "rules\.example\.com" is invalid: spec\.validation\.openAPIV3Schema\.properties\[spec\]\.properties\[size\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: .*compilation failed/,
    );
    expect(() =>
      defineResource({ group: 'samples.k8s.io', version: 'v1', kind: 'Protected', spec: Type.Object({}) }),
    ).toThrow(/protected groups must have approval annotation "api-approved.kubernetes.io"/);
    expect(() =>
      defineResource({
        group: 'example.com',
        kind: 'Two',
        versions: {
          v1: { spec: Type.Object({}), storage: true },
          v2: { spec: Type.Object({}), storage: true },
        },
      }),
    ).toThrow('defineResource(Two): exactly one version must have storage: true (found v1, v2)');
  });
});

describe('defineResource: local validation', () => {
  const foo = (spec: unknown, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'samplecontroller.example.com/v1alpha1',
    kind: 'Foo',
    metadata: { name: 'example-foo', namespace: 'default' },
    spec,
    ...extra,
  });

  it('prunes, defaults and accepts a valid object, dropping status on create', () => {
    const warnings: string[] = [];
    const out = Foo.parse(foo({ deploymentName: 'web', typo: 1 }, { status: { availableReplicas: 3 } }), {
      warnings,
    });
    expect(out.spec).toEqual({ deploymentName: 'web', replicas: 1 });
    expect(out.status).toBeUndefined();
    expect(warnings).toEqual(['unknown field "spec.typo"']);
  });

  it("answers the server's 422 for an invalid object", () => {
    expect(Foo.validate(foo({ deploymentName: 'web', replicas: 11 }))).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.replicas',
        message: 'Invalid value: 11: spec.replicas in body should be less than or equal to 10',
      },
    ]);
    let err: unknown;
    try {
      Foo.parse(foo({ replicas: 0 }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe(
      'Foo.samplecontroller.example.com "example-foo" is invalid: [spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1, spec.deploymentName: Required value]',
    );
  });

  it("answers the server's 400 for unknown fields under Strict field validation", () => {
    expect(() => Foo.parse(foo({ deploymentName: 'a', typo: 1 }), { fieldValidation: 'Strict' })).toThrow(
      'Foo in version "v1alpha1" cannot be handled as a Foo: strict decoding error: unknown field "spec.typo"',
    );
  });

  it('validates updates: status is kept from the stored object, metadata rules apply', () => {
    const old = { ...foo({ deploymentName: 'a', replicas: 2 }), status: { availableReplicas: 2 } };
    old.metadata = { ...old.metadata, resourceVersion: '5', uid: 'u1' } as typeof old.metadata;
    const next = Foo.parse(foo({ deploymentName: 'b', replicas: 3 }, { status: { availableReplicas: 9 } }), {
      old,
    });
    expect(next.spec).toEqual({ deploymentName: 'b', replicas: 3 });
    expect(next.status).toEqual({ availableReplicas: 2 });
    const status = Foo.parse(
      foo({ deploymentName: 'ignored', replicas: 1 }, { status: { availableReplicas: 7 } }),
      {
        old,
        subresource: 'status',
      },
    );
    expect(status.spec).toEqual({ deploymentName: 'a', replicas: 2 });
    expect(status.status).toEqual({ availableReplicas: 7 });
  });

  it('keeps what Kube.Any and preserved objects hold, nested arrays included', () => {
    const Bag = defineResource({
      group: 'example.com',
      version: 'v1',
      kind: 'Bag',
      spec: Type.Object({
        raw: Type.Optional(Kube.Any()),
        open: Type.Optional(Kube.PreserveUnknownFields()),
      }),
    });
    const warnings: string[] = [];
    const spec = { raw: [1, { deep: [{ x: 1 }] }], open: { list: [{ y: 2 }] } };
    const out = Bag.parse(
      { apiVersion: 'example.com/v1', kind: 'Bag', metadata: { name: 'b' }, spec },
      { warnings },
    );
    expect(out.spec).toEqual(spec);
    expect(warnings).toEqual([]);
  });

  it('builds objects with apiVersion and kind', () => {
    expect(Foo.build({ metadata: { name: 'a' }, spec: { deploymentName: 'd', replicas: 1 } })).toEqual({
      apiVersion: 'samplecontroller.example.com/v1alpha1',
      kind: 'Foo',
      metadata: { name: 'a' },
      spec: { deploymentName: 'd', replicas: 1 },
    });
  });
});
