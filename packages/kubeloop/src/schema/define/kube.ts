/**
 * TypeBox builders for the parts of Kubernetes' schema dialect that plain JSON Schema has no
 * word for: int-or-string, quantities, maps, preserved unknown fields, embedded resources, list
 * types and CEL rules. Each one gives the right static type and emits the `x-kubernetes-*`
 * extension the CRD needs, so a declaration reads like the Go markers it replaces.
 */
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import type {
  Static,
  TArray,
  TArrayOptions,
  TNull,
  TObject,
  TObjectOptions,
  TProperties,
  TSchema,
  TSchemaOptions,
  TUnion,
  TUnsafe,
} from 'typebox';
import type { ValidationRule } from '../types.js';
import { Type } from './typebox.js';

/** Options every Kubernetes builder accepts: TypeBox's, plus CEL rules. */
export type KubeSchemaOptions = TSchemaOptions & {
  /** CEL rules of this node (`x-kubernetes-validations`). */
  'x-kubernetes-validations'?: readonly ValidationRule[];
};

/** An embedded Kubernetes object (`x-kubernetes-embedded-resource`): apiVersion, kind, metadata and more. */
export interface EmbeddedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

/** `metav1.Condition`, the standard shape of `status.conditions[]`. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** The pattern controller-gen gives `resource.Quantity` fields. */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

const INT_OR_STRING_ANY_OF = [{ type: 'integer' }, { type: 'string' }];

function schemaOf(s: TSchema): Record<string, unknown> {
  // Enumerable keys only: TypeBox keeps its markers (`~kind`, `~optional`) non-enumerable.
  return { ...(s as Record<string, unknown>) };
}

/** `anyOf: [integer, string]` with `x-kubernetes-int-or-string` (Go's `intstr.IntOrString`). */
function IntOrString(options: KubeSchemaOptions = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({
    ...options,
    anyOf: INT_OR_STRING_ANY_OF.map((b) => ({ ...b })),
    'x-kubernetes-int-or-string': true,
  });
}

/**
 * A `resource.Quantity` (`500m`, `1Gi`, `2`): int-or-string with the quantity pattern, exactly as
 * controller-gen emits it. CEL rules can use `quantity(self)`.
 */
function Quantity(options: KubeSchemaOptions = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({
    ...options,
    anyOf: INT_OR_STRING_ANY_OF.map((b) => ({ ...b })),
    pattern: QUANTITY_PATTERN,
    'x-kubernetes-int-or-string': true,
  });
}

/** `T | null`: emitted as the schema of `T` with `nullable: true`. */
function Nullable<T extends TSchema>(schema: T, options: KubeSchemaOptions = {}): TUnion<[T, TNull]> {
  return Type.Union([schema, Type.Null()], options as TSchemaOptions);
}

/** Options of {@link Kube.Map}. */
export type KubeMapOptions = TObjectOptions & {
  /** `granular` (default: keys merge independently in server-side apply) or `atomic`. */
  'x-kubernetes-map-type'?: 'granular' | 'atomic';
  'x-kubernetes-validations'?: readonly ValidationRule[];
};

/**
 * A string-keyed map (`map[string]V`): emitted as `additionalProperties`. Kubernetes cannot
 * constrain the keys with a pattern; use a CEL rule (`self.all(k, k.matches('^[a-z]+$'))`).
 */
function KubeMap<V extends TSchema>(
  value: V,
  options: KubeMapOptions = {},
): TUnsafe<Record<string, Static<V>>> {
  return Type.Unsafe<Record<string, Static<V>>>({
    ...options,
    type: 'object',
    additionalProperties: value,
  });
}

/**
 * Any JSON value, kept as it is (`x-kubernetes-preserve-unknown-fields` without a type), like
 * Go's `runtime.RawExtension` or `apiextensionsv1.JSON`.
 */
function Any(options: KubeSchemaOptions = {}): TUnsafe<unknown> {
  return Type.Unsafe<unknown>({ ...options, 'x-kubernetes-preserve-unknown-fields': true });
}

/**
 * An object whose unknown fields are kept rather than pruned (`x-kubernetes-preserve-unknown-fields`),
 * optionally with known properties that are typed and validated.
 */
function PreserveUnknownFields<P extends TProperties = Record<never, never>>(
  properties?: P,
  options: KubeSchemaOptions = {},
): TUnsafe<Static<TObject<P>> & Record<string, unknown>> {
  const base = properties ? schemaOf(Type.Object(properties)) : { type: 'object' };
  return Type.Unsafe({ ...base, ...options, 'x-kubernetes-preserve-unknown-fields': true });
}

/**
 * A whole Kubernetes object inside this one (a Pod template, an arbitrary manifest):
 * `x-kubernetes-embedded-resource`. Its apiVersion, kind and metadata are validated like a real
 * object's; without `properties` every other field is preserved.
 */
function EmbeddedResource<P extends TProperties = Record<never, never>>(
  properties?: P,
  options: KubeSchemaOptions = {},
): TUnsafe<EmbeddedObject & Static<TObject<P>>> {
  const base = properties
    ? schemaOf(Type.Object(properties))
    : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return Type.Unsafe({ ...base, ...options, 'x-kubernetes-embedded-resource': true });
}

/** The keys of an object schema's static type whose values may serve as list-map keys. */
type MapKeyOf<T extends TSchema> = Extract<keyof Static<T>, string>;

/**
 * A list whose items are identified by key fields (`x-kubernetes-list-type: map`), merged by key
 * in server-side apply. The keys must be required (or defaulted) scalar fields of the items.
 */
function ListMap<T extends TSchema, const K extends readonly MapKeyOf<T>[]>(
  items: T,
  keys: K,
  options: TArrayOptions = {},
): TArray<T> {
  return Type.Array(items, {
    ...options,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': [...keys],
  });
}

/** A list of unique scalars (`x-kubernetes-list-type: set`), Kubernetes' `uniqueItems`. */
function ListSet<T extends TSchema>(items: T, options: TArrayOptions = {}): TArray<T> {
  return Type.Array(items, { ...options, 'x-kubernetes-list-type': 'set' });
}

/** A list replaced as a whole by server-side apply (`x-kubernetes-list-type: atomic`). */
function ListAtomic<T extends TSchema>(items: T, options: TArrayOptions = {}): TArray<T> {
  return Type.Array(items, { ...options, 'x-kubernetes-list-type': 'atomic' });
}

/** Options of {@link Kube.Enum}. */
export type KubeEnumOptions = KubeSchemaOptions & {
  /** The JSON type of the values; inferred from them when omitted (whole numbers → `integer`). */
  type?: 'string' | 'integer' | 'number' | 'boolean';
};

/** One of fixed values: `type` + `enum`, with the union of the values as static type. */
function KubeEnum<const V extends readonly (string | number | boolean)[]>(
  values: V,
  options: KubeEnumOptions = {},
): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ ...options, enum: [...values] });
}

/**
 * The same schema with CEL rules added (`x-kubernetes-validations`), for schemas built elsewhere.
 * `Type.String({ 'x-kubernetes-validations': [...] })` says the same inline.
 */
function Rules<T extends TSchema>(schema: T, ...rules: ValidationRule[]): T {
  const s = schema as Record<string, unknown>;
  const existing = Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'] : [];
  const out = Object.create(Object.getPrototypeOf(schema)) as Record<string, unknown>;
  // Copy every own property, TypeBox's non-enumerable markers included, so `Type.Optional` survives.
  for (const key of Reflect.ownKeys(schema)) {
    const d = Object.getOwnPropertyDescriptor(schema, key);
    if (d) Object.defineProperty(out, key, d);
  }
  out['x-kubernetes-validations'] = [...(existing as ValidationRule[]), ...rules];
  return out as T;
}

const CONDITION_TYPE_PATTERN =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$';

/** `metav1.Condition` with the validation controller-gen generates for it. */
function ConditionSchema(): TUnsafe<Condition> {
  return Type.Unsafe<Condition>(
    schemaOf(
      Type.Object(
        {
          lastTransitionTime: Type.String({
            format: 'date-time',
            description:
              'lastTransitionTime is the last time the condition transitioned from one status to another.',
          }),
          message: Type.String({
            maxLength: 32768,
            description: 'message is a human readable message indicating details about the transition.',
          }),
          observedGeneration: Type.Optional(
            Type.Integer({
              format: 'int64',
              minimum: 0,
              description:
                'observedGeneration represents the .metadata.generation that the condition was set based upon.',
            }),
          ),
          reason: Type.String({
            maxLength: 1024,
            minLength: 1,
            pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
            description:
              "reason contains a programmatic identifier indicating the reason for the condition's last transition.",
          }),
          status: Type.Unsafe({
            type: 'string',
            enum: ['True', 'False', 'Unknown'],
            description: 'status of the condition, one of True, False, Unknown.',
          }),
          type: Type.String({
            maxLength: 316,
            pattern: CONDITION_TYPE_PATTERN,
            description: 'type of condition in CamelCase or in foo.example.com/CamelCase.',
          }),
        },
        {
          description: 'Condition contains details for one aspect of the current state of this API Resource.',
        },
      ),
    ),
  );
}

/** `[]metav1.Condition` as a list-map keyed by `type`, the usual `status.conditions`. */
function Conditions(options: TArrayOptions = {}): TArray<TUnsafe<Condition>> {
  return Type.Array(ConditionSchema(), {
    ...options,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });
}

/**
 * Kubernetes' schema vocabulary for TypeBox. Use it beside `Type`:
 *
 * @example
 * ```ts
 * import { Kube, Type, defineResource } from 'kubeloop';
 * const spec = Type.Object({
 *   port: Kube.IntOrString(),
 *   memory: Type.Optional(Kube.Quantity()),
 *   labels: Type.Optional(Kube.Map(Type.String())),
 *   template: Type.Optional(Kube.EmbeddedResource()),
 *   ports: Type.Optional(Kube.ListMap(Type.Object({ name: Type.String(), port: Type.Integer() }), ['name'])),
 *   size: Kube.Rules(Type.Integer(), { rule: 'self % 2 == 1', message: 'size must be odd' }),
 * });
 * ```
 */
export const Kube = {
  IntOrString,
  Quantity,
  Nullable,
  Map: KubeMap,
  Any,
  PreserveUnknownFields,
  EmbeddedResource,
  ListMap,
  ListSet,
  ListAtomic,
  Enum: KubeEnum,
  Rules,
  Condition: ConditionSchema,
  Conditions,
} as const;
