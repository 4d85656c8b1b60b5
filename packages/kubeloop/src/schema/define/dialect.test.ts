import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../compile.js';
import { validateStructural } from '../structural.js';
import type { JSONSchemaProps } from '../types.js';
import { SchemaDialectError, toKubernetesSchema } from './dialect.js';
import { Kube, QUANTITY_PATTERN } from './kube.js';

/** The problems (path and keyword) the pass reports for a schema. */
function problems(schema: unknown): Array<[string, string | undefined]> {
  try {
    toKubernetesSchema(schema, { path: 'spec' });
  } catch (e) {
    if (e instanceof SchemaDialectError) return e.problems.map((p) => [p.path, p.keyword]);
    throw e;
  }
  return [];
}

/** A converted field checked as Kubernetes would: structural, and valid as a CRD schema node. */
function kube(schema: unknown): JSONSchemaProps {
  const out = toKubernetesSchema(schema);
  const root: JSONSchemaProps = { type: 'object', properties: { f: out } };
  expect(validateStructural(root, 'schema')).toEqual([]);
  return out;
}

/** Kubernetes' verdict on a value of the field (true when valid). */
function kubeAccepts(field: JSONSchemaProps, value: unknown): boolean {
  const compiled = compileSchema({ type: 'object', properties: { f: field } }, { isResourceRoot: false });
  return compiled.validate({ f: value }).length === 0;
}

describe('TypeBox → Kubernetes dialect', () => {
  it('turns const into enum and infers the type of a bare enum', () => {
    expect(kube(Type.Literal('x'))).toEqual({ type: 'string', enum: ['x'] });
    expect(kube(Type.Enum(['a', 'b']))).toEqual({ type: 'string', enum: ['a', 'b'] });
    expect(kube(Type.Enum([1, 2]))).toEqual({ type: 'integer', enum: [1, 2] });
    expect(kube(Kube.Enum([1.5, 2], { type: 'number' }))).toEqual({ type: 'number', enum: [1.5, 2] });
    expect(kube(Type.Union([Type.Literal('a'), Type.Literal('b')], { default: 'a' }))).toEqual({
      type: 'string',
      default: 'a',
      enum: ['a', 'b'],
    });
  });

  it('turns a union with null into nullable', () => {
    expect(kube(Type.Union([Type.String({ maxLength: 3 }), Type.Null()]))).toEqual({
      type: 'string',
      nullable: true,
      maxLength: 3,
    });
    expect(kube(Kube.Nullable(Type.Object({ a: Type.String() })))).toEqual({
      type: 'object',
      nullable: true,
      required: ['a'],
      properties: { a: { type: 'string' } },
    });
    expect(kube(Type.Union([Type.Literal('a'), Type.Literal('b'), Type.Null()]))).toEqual({
      type: 'string',
      enum: ['a', 'b'],
      nullable: true,
    });
  });

  it('turns maps (Record) into additionalProperties and open objects into preserve-unknown-fields', () => {
    expect(kube(Type.Record(Type.String(), Type.Integer()))).toEqual({
      type: 'object',
      additionalProperties: { type: 'integer' },
    });
    expect(kube(Kube.Map(Type.String(), { 'x-kubernetes-map-type': 'atomic' }))).toEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
      'x-kubernetes-map-type': 'atomic',
    });
    expect(kube(Type.Object({ a: Type.String() }, { additionalProperties: false }))).toEqual({
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'string' } },
    });
    expect(kube(Type.Object({ a: Type.String() }, { additionalProperties: true }))).toEqual({
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'string' } },
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(kube(Type.Unknown())).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(kube(Type.Any({ description: 'anything' }))).toEqual({
      description: 'anything',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(kube(Type.Object({}))).toEqual({ type: 'object' });
  });

  it('turns integer-or-string unions into int-or-string, keeping per-type constraints', () => {
    const ios = { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true };
    expect(kube(Type.Union([Type.Integer(), Type.String()]))).toEqual(ios);
    expect(kube(Kube.IntOrString({ description: 'port' }))).toEqual({ description: 'port', ...ios });
    const constrained = kube(
      Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[a-z]+$' })]),
    );
    expect(constrained).toEqual({ ...ios, minimum: 1, pattern: '^[a-z]+$' });
    expect(kubeAccepts(constrained, 0)).toBe(false);
    expect(kubeAccepts(constrained, 8080)).toBe(true);
    expect(kubeAccepts(constrained, 'http')).toBe(true);
    expect(kubeAccepts(constrained, 'HTTP')).toBe(false);
    expect(kube(Kube.Quantity())).toEqual({ ...ios, pattern: QUANTITY_PATTERN });
  });

  it('rewrites JSON Schema 2020 exclusive bounds into OpenAPI v3.0 ones, keeping the stricter bound', () => {
    expect(kube(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }))).toEqual({
      type: 'number',
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 1,
      exclusiveMaximum: true,
    });
    expect(kube(Type.Integer({ minimum: 5, exclusiveMinimum: 2 }))).toEqual({ type: 'integer', minimum: 5 });
    expect(kube(Type.Integer({ minimum: 2, exclusiveMinimum: 2 }))).toEqual({
      type: 'integer',
      minimum: 2,
      exclusiveMinimum: true,
    });
  });

  it('merges unions of one type into a skeleton and value validations', () => {
    const strings = kube(Type.Union([Type.String({ pattern: '^a' }), Type.String({ format: 'uuid' })]));
    expect(strings).toEqual({ type: 'string', anyOf: [{ pattern: '^a' }, { format: 'uuid' }] });
    const shape = Type.Union([
      Type.Object({ kind: Type.Literal('disk'), size: Type.Integer({ minimum: 1 }) }),
      Type.Object({ kind: Type.Literal('memory'), medium: Type.Optional(Type.String()) }),
    ]);
    const u = kube(shape);
    expect(u).toEqual({
      type: 'object',
      properties: {
        kind: { type: 'string' },
        size: { type: 'integer' },
        medium: { type: 'string' },
      },
      anyOf: [
        { required: ['kind', 'size'], properties: { kind: { enum: ['disk'] }, size: { minimum: 1 } } },
        { required: ['kind'], properties: { kind: { enum: ['memory'] } } },
      ],
    });
    // Same verdicts as TypeBox's own validator.
    for (const v of [
      { kind: 'disk', size: 2 },
      { kind: 'disk', size: 0 },
      { kind: 'disk' },
      { kind: 'memory' },
      { kind: 'memory', medium: 'tmpfs' },
      { kind: 'tape' },
      {},
    ])
      expect([v, kubeAccepts(u, v)]).toEqual([v, Value.Check(shape, v)]);
    // An alternative without constraints makes the union as wide as the skeleton.
    expect(kube(Type.Union([Type.String({ minLength: 2 }), Type.String()]))).toEqual({ type: 'string' });
  });

  it('merges intersections', () => {
    const both = Type.Intersect([
      Type.Object({ a: Type.String() }),
      Type.Object({ b: Type.Optional(Type.Integer({ maximum: 3 })) }),
    ]);
    expect(kube(both)).toEqual({
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'string' }, b: { type: 'integer', maximum: 3 } },
    });
  });

  it('keeps Kubernetes extensions and CEL rules at any node', () => {
    const s = Type.Object(
      {
        ports: Kube.ListMap(Type.Object({ name: Type.String(), port: Type.Integer() }), ['name'], {
          maxItems: 4,
        }),
        tags: Kube.ListSet(Type.String()),
        size: Kube.Rules(Type.Optional(Type.Integer()), {
          rule: 'self % 2 == 1',
          message: 'size must be odd',
        }),
        template: Kube.EmbeddedResource(),
        pod: Kube.EmbeddedResource({ spec: Type.Optional(Kube.Any()) }),
        extra: Kube.PreserveUnknownFields({ known: Type.Optional(Type.String()) }),
      },
      { 'x-kubernetes-validations': [{ rule: 'has(self.ports)' }] },
    );
    const out = kube(s);
    expect(out.required).toEqual(['ports', 'tags', 'template', 'pod', 'extra']);
    expect(out['x-kubernetes-validations']).toEqual([{ rule: 'has(self.ports)' }]);
    const p = out.properties!;
    expect(p.ports).toMatchObject({
      type: 'array',
      maxItems: 4,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', required: ['name', 'port'] },
    });
    expect(p.tags).toEqual({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' });
    expect(p.size).toEqual({
      type: 'integer',
      'x-kubernetes-validations': [{ rule: 'self % 2 == 1', message: 'size must be odd' }],
    });
    expect(p.template).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-embedded-resource': true,
    });
    expect(p.pod).toEqual({
      type: 'object',
      properties: { spec: { 'x-kubernetes-preserve-unknown-fields': true } },
      'x-kubernetes-embedded-resource': true,
    });
    expect(p.extra).toEqual({
      type: 'object',
      properties: { known: { type: 'string' } },
      'x-kubernetes-preserve-unknown-fields': true,
    });
    const conditions = kube(Kube.Conditions());
    expect(conditions).toMatchObject({
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
        properties: { status: { type: 'string', enum: ['True', 'False', 'Unknown'] } },
      },
    });
  });

  it('drops annotations Kubernetes has no field for', () => {
    expect(kube(Type.String({ $id: 'Name', examples: ['a'], readOnly: true, title: 'Name' }))).toEqual({
      type: 'string',
      title: 'Name',
    });
  });

  it('refuses what Kubernetes refuses, naming the field and the keyword', () => {
    expect(problems(Type.Object({ a: Type.Ref('A') }))).toEqual([['spec.a', '$ref']]);
    expect(problems(Type.Cyclic({ A: Type.Object({ self: Type.Optional(Type.Ref('A')) }) }, 'A'))).toEqual([
      ['spec', '$defs'],
      ['spec', '$ref'],
    ]);
    expect(problems(Type.Object({ m: Type.Record(Type.String({ pattern: '^x-' }), Type.String()) }))).toEqual(
      [['spec.m', 'patternProperties']],
    );
    expect(problems(Type.Object({ t: Type.Tuple([Type.String()]) }))).toEqual([
      ['spec.t', 'additionalItems'],
      ['spec.t', 'items'],
    ]);
    expect(problems(Type.Object({ n: Type.Null() }))).toEqual([['spec.n', 'type']]);
    expect(problems(Type.Object({ b: Type.BigInt() }))).toEqual([['spec.b', 'type']]);
    expect(problems(Type.Object({ x: Type.Union([Type.String(), Type.Boolean()]) }))).toEqual([
      ['spec.x', 'anyOf'],
    ]);
    expect(problems(Type.Object({ a: Type.String() }, { dependentRequired: { a: ['b'] } }))).toEqual([
      ['spec', 'dependentRequired'],
    ]);
    expect(problems(Type.Array(Type.String(), { uniqueItems: true }))).toEqual([['spec', 'uniqueItems']]);
    expect(
      problems(Type.Array(Type.Array(Type.String({ pattern: 'a' }), { contains: Type.String() }))),
    ).toEqual([['spec[*]', 'contains']]);
    expect(
      problems(Type.Object({ a: Type.String() }, { propertyNames: Type.String({ maxLength: 3 }) })),
    ).toEqual([['spec', 'propertyNames']]);
    expect(problems(Type.Object({ 'odd key': Type.String({ if: Type.String() }) }))).toEqual([
      ['spec["odd key"]', 'if'],
    ]);
    expect(problems({ type: 'string', 'x-made-up': 1 })).toEqual([['spec', 'x-made-up']]);
    expect(problems(Type.Object({ a: Type.String() }, { additionalProperties: Type.String() }))).toEqual([
      ['spec', 'additionalProperties'],
    ]);
    expect(problems({ type: 'string', const: 'a', enum: ['b'] })).toEqual([['spec', 'const']]);
    expect(problems(true)).toEqual([['spec', undefined]]);
    expect(problems(Type.Object({ r: Type.Refine(Type.String(), (v) => v.length > 1) }))).toEqual([
      ['spec.r', 'refine'],
    ]);
  });

  it('explains each refusal and what to write instead', () => {
    expect(() => toKubernetesSchema(Type.Object({ a: Type.Ref('A') }), { path: 'spec' })).toThrow(
      /spec\.a: Kubernetes does not resolve references \(\$ref\): inline the schema/,
    );
    expect(() => toKubernetesSchema(Type.Array(Type.String(), { uniqueItems: true }))).toThrow(
      /use x-kubernetes-list-type 'set' \(Kube\.ListSet\)/,
    );
    expect(() => toKubernetesSchema(Type.Object({ n: Type.Null() }))).toThrow(
      /n: type null is refused by Kubernetes: use nullable/,
    );
  });
});
