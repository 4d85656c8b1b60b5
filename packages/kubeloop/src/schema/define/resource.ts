/**
 * `defineResource`: a custom resource declared once in TypeScript (TypeBox). The declaration is
 * at once the static type of the objects, a client descriptor (`client.api(Foo)`), the CRD
 * (`Foo.crd()`), and a local validator that answers as the API server does (`Foo.parse(obj)`).
 */
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import type { TObject, TProperties, TSchema, Static as TypeBoxStatic } from 'typebox';
import { ApiError, type StatusCause } from '../../api/status.js';
import type { ResourceDescriptor } from '../../client/descriptor.js';
import type { KubeObject } from '../../client/types.js';
import { validateCustomResourceDefinition } from '../crd.js';
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionVersion,
  JSONSchemaProps,
  ValidationRule,
} from '../types.js';
import { checkKubernetesSchema, type DialectProblem, SchemaDialectError } from './dialect.js';
import { type LocalValidateOptions, localParse, localValidate } from './local.js';
import { pluralOf } from './names.js';

/** One `additionalPrinterColumns` entry: what `kubectl get` shows. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  /** A JSONPath into the object, e.g. `.status.availableReplicas`. */
  readonly jsonPath: string;
  readonly description?: string;
  readonly format?: string;
  /** 0 (default) shows in `kubectl get`; higher shows only with `-o wide`. */
  readonly priority?: number;
}

/** The scale subresource: lets `kubectl scale` and autoscalers drive the resource. */
export interface ScaleSubresource {
  /** e.g. `.spec.replicas` */
  readonly specReplicasPath: string;
  /** e.g. `.status.replicas` */
  readonly statusReplicasPath: string;
  /** e.g. `.status.selector` (a string label selector, for HorizontalPodAutoscalers). */
  readonly labelSelectorPath?: string;
}

/** Everything one version of a resource declares. */
export interface ResourceVersionOptions {
  /** The schema of `spec`. Wrap it in `Type.Optional` when objects may omit `spec`. */
  readonly spec?: TSchema;
  /** The schema of `status` (always optional on objects). */
  readonly status?: TSchema;
  /**
   * Top-level fields besides `spec` and `status` (e.g. `data`), for kinds shaped like ConfigMap.
   * `Type.Optional` makes a field optional.
   */
  readonly properties?: TProperties;
  /** Restrictions on `metadata.name` / `metadata.generateName` (the only ones Kubernetes allows). */
  readonly metadata?: TSchema;
  /** Keep unknown top-level fields instead of pruning them. */
  readonly preserveUnknownFields?: boolean;
  /** CEL rules on the whole object (`self.spec`, `self.status`, `self.metadata.name`). */
  readonly validations?: readonly ValidationRule[];
  /** Description of the kind (the root schema's, shown by `kubectl explain`). */
  readonly description?: string;
  readonly printerColumns?: readonly PrinterColumn[];
  /** The status subresource; on by default when `status` is declared. */
  readonly statusSubresource?: boolean;
  readonly scale?: ScaleSubresource;
  /** JSONPaths usable in field selectors (`.spec.color`). */
  readonly selectableFields?: readonly string[];
  /** Whether the API serves this version (default true). */
  readonly served?: boolean;
  /** The version objects are stored at; exactly one version has it (implied with a single version). */
  readonly storage?: boolean;
  readonly deprecated?: boolean;
  /** The warning clients get when using a deprecated version. */
  readonly deprecationWarning?: string;
}

/** CRD conversion between versions. */
export type ConversionOptions =
  | { readonly strategy: 'None' }
  | {
      readonly strategy: 'Webhook';
      readonly webhook: {
        readonly clientConfig: {
          readonly url?: string;
          readonly service?: {
            readonly namespace: string;
            readonly name: string;
            readonly path?: string;
            readonly port?: number;
          };
          readonly caBundle?: string;
        };
        readonly conversionReviewVersions: readonly string[];
      };
    };

/** Names, scope and CRD-level settings shared by every version. */
export interface ResourceOptionsBase {
  readonly group: string;
  /** CamelCase kind, e.g. `Foo`. */
  readonly kind: string;
  /** Lowercase plural used in URLs; derived from the kind when omitted (`Policy` → `policies`). */
  readonly plural?: string;
  /** Lowercase singular; the lowercase kind when omitted. */
  readonly singular?: string;
  /** `<Kind>List` when omitted. */
  readonly listKind?: string;
  readonly shortNames?: readonly string[];
  /** Groups of resources, e.g. `all`, so that `kubectl get all` includes this one. */
  readonly categories?: readonly string[];
  /** Default `Namespaced`. */
  readonly scope?: 'Namespaced' | 'Cluster';
  /** Annotations of the CRD (e.g. `api-approved.kubernetes.io` for `*.k8s.io` groups). */
  readonly annotations?: Readonly<Record<string, string>>;
  /** Labels of the CRD. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly conversion?: ConversionOptions;
}

/** A resource with one version. */
export interface SingleVersionResourceOptions extends ResourceOptionsBase, ResourceVersionOptions {
  readonly version: string;
}

/** A resource with several versions, keyed by name (in the order the CRD lists them). */
export interface MultiVersionResourceOptions extends ResourceOptionsBase {
  readonly versions: { readonly [name: string]: ResourceVersionOptions };
}

/** Either form of options. */
export type ResourceOptions = SingleVersionResourceOptions | MultiVersionResourceOptions;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type SpecPart<VO> = VO extends { readonly spec: infer S extends TSchema }
  ? S extends { '~optional': true }
    ? { spec?: TypeBoxStatic<S> }
    : { spec: TypeBoxStatic<S> }
  : unknown;
type StatusPart<VO> = VO extends { readonly status: infer S extends TSchema }
  ? { status?: TypeBoxStatic<S> }
  : unknown;
type FieldsPart<VO> = VO extends { readonly properties: infer P extends TProperties }
  ? TypeBoxStatic<TObject<P>>
  : unknown;
type PreservePart<VO> = VO extends { readonly preserveUnknownFields: true }
  ? { [field: string]: unknown }
  : unknown;

/**
 * The static type of an object of one version: `apiVersion` and `kind` as literal types,
 * `metadata`, then `spec`, `status?` and any other declared fields.
 */
export type ResourceObject<G extends string, V extends string, K extends string, VO> = Simplify<
  { apiVersion: `${G}/${V}`; kind: K; metadata: ObjectMeta } & SpecPart<VO> &
    StatusPart<VO> &
    FieldsPart<VO> &
    PreservePart<VO>
>;

type StorageKeys<VS> = { [N in keyof VS]: VS[N] extends { readonly storage: true } ? N : never }[keyof VS];
/** The name of the storage version of a `versions` map (the only one when there is one). */
export type StorageVersionOf<VS> = [StorageKeys<VS>] extends [never]
  ? keyof VS & string
  : StorageKeys<VS> & string;

/** The object type of every version of a multi-version declaration. */
export type VersionObjects<O extends MultiVersionResourceOptions> = {
  [N in keyof O['versions'] & string]: ResourceObject<O['group'], N, O['kind'], O['versions'][N]>;
};

/** What {@link ResourceDefinition.build} needs: the object without apiVersion and kind. */
export type ObjectInit<T> = { [K in keyof T as K extends 'apiVersion' | 'kind' ? never : K]: T[K] };

/**
 * A declared custom resource. It is a client descriptor (`client.api(Foo, 'default')` is typed as
 * `Foo` objects) and carries the CRD and a local validator.
 */
export interface ResourceDefinition<
  T extends KubeObject = KubeObject,
  VS extends Record<string, KubeObject> = Record<string, KubeObject>,
> extends ResourceDescriptor<T> {
  readonly group: string;
  /** The version this definition addresses (the storage version, unless taken with `at()`). */
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** `group/version`. */
  readonly apiVersion: string;
  readonly scope: 'Namespaced' | 'Cluster';
  /** All names of the CRD, defaults filled in. */
  readonly names: Readonly<CustomResourceDefinitionNames> & {
    readonly singular: string;
    readonly listKind: string;
  };
  /** The version names, in the order of the CRD. */
  readonly versions: readonly string[];
  readonly storageVersion: string;
  /** The `openAPIV3Schema` of this version, in Kubernetes' dialect. */
  readonly schema: JSONSchemaProps;
  /** The CRD's entry for this version. */
  readonly crdVersion: CustomResourceDefinitionVersion;
  /** The same resource at another of its versions, typed for that version. */
  at<N extends keyof VS & string>(version: N): ResourceDefinition<VS[N], VS>;
  /** The CustomResourceDefinition (a fresh copy each call). */
  crd(): CustomResourceDefinition;
  /**
   * What the API server would say about writing `obj` at this version: the causes of its 422
   * (`[]` when valid). Unknown fields are pruned first, defaults applied, then the schema, CEL
   * rules and metadata are checked, with the server's field paths and messages.
   */
  validate(obj: unknown, options?: LocalValidateOptions): StatusCause[];
  /**
   * The object as the API server would store it (pruned, defaulted) or the {@link ApiError} it
   * would answer: 400 for unknown fields under `fieldValidation: 'Strict'`, 422 when invalid.
   */
  parse(obj: unknown, options?: LocalValidateOptions): T;
  /** A new object with `apiVersion` and `kind` filled in. */
  build(init: ObjectInit<T>): T;
}

/** A {@link ResourceDefinition} as `defineResource` returns it for a single version. */
export type SingleVersionDefinition<O extends SingleVersionResourceOptions> = ResourceDefinition<
  ResourceObject<O['group'], O['version'], O['kind'], O>,
  { [N in O['version']]: ResourceObject<O['group'], O['version'], O['kind'], O> }
>;

/** A {@link ResourceDefinition} as `defineResource` returns it for several versions. */
export type MultiVersionDefinition<O extends MultiVersionResourceOptions> = ResourceDefinition<
  VersionObjects<O>[StorageVersionOf<O['versions']>],
  VersionObjects<O>
>;

/**
 * The static type of a declared resource's objects, or of a TypeBox schema.
 *
 * @example
 * ```ts
 * export const Foo = defineResource({ group: 'example.com', version: 'v1', kind: 'Foo', spec: Type.Object({ replicas: Type.Integer() }) });
 * export type Foo = Static<typeof Foo>; // { apiVersion: 'example.com/v1'; kind: 'Foo'; metadata: ObjectMeta; spec: { replicas: number } }
 * ```
 */
export type Static<T> =
  T extends ResourceDefinition<infer O, Record<string, KubeObject>>
    ? O
    : T extends TSchema
      ? TypeBoxStatic<T>
      : never;

const API_VERSION_DOC =
  'APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DOC =
  'Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

const isOptional = (s: TSchema) => (s as { '~optional'?: boolean })['~optional'] === true;

function rootSchema(vo: ResourceVersionOptions, problems: DialectProblem[]): JSONSchemaProps {
  const convert = (s: TSchema, path: string): JSONSchemaProps => {
    const r = checkKubernetesSchema(s, { path });
    problems.push(...r.problems);
    return r.schema;
  };
  const properties: Record<string, JSONSchemaProps> = {
    apiVersion: { type: 'string', description: API_VERSION_DOC },
    kind: { type: 'string', description: KIND_DOC },
    metadata: vo.metadata ? convert(vo.metadata, 'metadata') : { type: 'object' },
  };
  const required: string[] = [];
  if (vo.spec) {
    properties.spec = convert(vo.spec, 'spec');
    if (!isOptional(vo.spec)) required.push('spec');
  }
  if (vo.status) properties.status = convert(vo.status, 'status');
  for (const [name, s] of Object.entries(vo.properties ?? {})) {
    if (name in properties) {
      problems.push({ path: name, message: `"${name}" is declared twice (properties and ${name})` });
      continue;
    }
    properties[name] = convert(s, name);
    if (!isOptional(s)) required.push(name);
  }
  return {
    ...(vo.description !== undefined && { description: vo.description }),
    type: 'object',
    ...(required.length > 0 && { required }),
    properties,
    ...(vo.preserveUnknownFields && { 'x-kubernetes-preserve-unknown-fields': true }),
    ...(vo.validations?.length && { 'x-kubernetes-validations': vo.validations.map((r) => ({ ...r })) }),
  };
}

function crdVersion(
  name: string,
  vo: ResourceVersionOptions,
  storage: boolean,
  problems: DialectProblem[],
): CustomResourceDefinitionVersion {
  const statusSubresource = vo.statusSubresource ?? vo.status !== undefined;
  const subresources = {
    ...(statusSubresource && { status: {} }),
    ...(vo.scale && { scale: { ...vo.scale } }),
  };
  return {
    name,
    served: vo.served ?? true,
    storage,
    ...(vo.deprecated && { deprecated: true }),
    ...(vo.deprecationWarning !== undefined && { deprecationWarning: vo.deprecationWarning }),
    ...(vo.printerColumns?.length && {
      additionalPrinterColumns: vo.printerColumns.map((c) => ({ ...c }) as CustomResourceColumnDefinition),
    }),
    ...(vo.selectableFields?.length && {
      selectableFields: vo.selectableFields.map((jsonPath) => ({ jsonPath })),
    }),
    ...(Object.keys(subresources).length > 0 && { subresources }),
    schema: { openAPIV3Schema: rootSchema(vo, problems) },
  };
}

function deepCopy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function freezeDeep<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) freezeDeep(x);
  }
  return v;
}

/**
 * Declares a custom resource in TypeScript. Everything about the kind follows from this one
 * declaration: the static type of its objects (`Static<typeof Foo>`), its CRD (`Foo.crd()`,
 * structural and validated with the API server's own rules when declared), a client descriptor
 * (`client.api(Foo, 'default')`), and local validation with the server's verdicts (`Foo.parse`).
 *
 * Schemas are TypeBox types (`Type`, plus {@link Kube} for int-or-string, maps, embedded
 * resources, list types and CEL rules at any node). A schema that Kubernetes would refuse
 * (`$ref`, pattern-keyed maps, tuples, `type: null`, unions of different types, …) throws a
 * `SchemaDialectError` naming the field; a CRD the API server would refuse throws the
 * server's 422 `ApiError`.
 *
 * @example
 * ```ts
 * export const Foo = defineResource({
 *   group: 'samplecontroller.example.com', version: 'v1alpha1', kind: 'Foo',
 *   spec: Type.Object({
 *     deploymentName: Type.String({ minLength: 1 }),
 *     replicas: Type.Integer({ minimum: 1, maximum: 10, default: 1 }),
 *   }),
 *   status: Type.Object({ availableReplicas: Type.Integer() }),
 *   printerColumns: [{ name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' }],
 * });
 * export type Foo = Static<typeof Foo>;
 * const foos = client.api(Foo, 'default'); // ResourceApi<Foo>
 * ```
 *
 * Several versions:
 * ```ts
 * const Bar = defineResource({
 *   group: 'example.com', kind: 'Bar',
 *   versions: {
 *     v1: { spec: BarSpecV1, storage: true },
 *     v1beta1: { spec: BarSpecV1beta1, deprecated: true, deprecationWarning: 'use example.com/v1 Bar' },
 *   },
 * });
 * const legacy = client.api(Bar.at('v1beta1'));
 * ```
 */
export function defineResource<const O extends SingleVersionResourceOptions>(
  options: O,
): SingleVersionDefinition<O>;
export function defineResource<const O extends MultiVersionResourceOptions>(
  options: O,
): MultiVersionDefinition<O>;
export function defineResource(options: ResourceOptions): ResourceDefinition {
  const kind = options.kind;
  const versionEntries: Array<[string, ResourceVersionOptions]> =
    'versions' in options ? Object.entries(options.versions) : [[options.version, options]];
  if (versionEntries.length === 0)
    throw new TypeError(`defineResource(${kind}): at least one version is needed`);
  const storageNames = versionEntries.filter(([, v]) => v.storage).map(([n]) => n);
  let storageVersion: string;
  if (storageNames.length === 1) storageVersion = storageNames[0]!;
  else if (storageNames.length === 0 && versionEntries.length === 1) storageVersion = versionEntries[0]![0];
  else
    throw new TypeError(
      `defineResource(${kind}): exactly one version must have storage: true (found ${storageNames.length === 0 ? 'none' : storageNames.join(', ')})`,
    );

  const plural = options.plural ?? pluralOf(kind);
  const names = {
    plural,
    singular: options.singular ?? kind.toLowerCase(),
    kind,
    listKind: options.listKind ?? `${kind}List`,
    ...(options.shortNames?.length && { shortNames: [...options.shortNames] }),
    ...(options.categories?.length && { categories: [...options.categories] }),
  };
  const scope = options.scope ?? 'Namespaced';
  const problems: DialectProblem[] = [];
  const versions = versionEntries.map(([name, vo]) =>
    crdVersion(name, vo, name === storageVersion, problems),
  );
  if (problems.length > 0) throw new SchemaDialectError(problems, `defineResource(${kind})`);

  const crd: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.${options.group}`,
      ...(options.annotations && { annotations: { ...options.annotations } }),
      ...(options.labels && { labels: { ...options.labels } }),
    },
    spec: {
      group: options.group,
      names,
      scope,
      versions,
      ...(options.conversion && {
        conversion: deepCopy(options.conversion) as CustomResourceDefinition['spec']['conversion'],
      }),
    },
  };
  // Refuse now, with the API server's own answer, what it would refuse at install time.
  const causes = validateCustomResourceDefinition(crd);
  if (causes.length > 0)
    throw ApiError.invalid(
      { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
      crd.metadata?.name ?? '',
      causes,
    );
  freezeDeep(crd);

  const byVersion = new Map<string, ResourceDefinition>();
  const make = (version: string): ResourceDefinition => {
    const hit = byVersion.get(version);
    if (hit) return hit;
    const crdVersion = versions.find((v) => v.name === version);
    if (!crdVersion)
      throw new TypeError(
        `${kind} has no version ${JSON.stringify(version)} (versions: ${versions.map((v) => v.name).join(', ')})`,
      );
    const apiVersion = `${options.group}/${version}`;
    const def: ResourceDefinition = {
      group: options.group,
      version,
      kind,
      plural,
      namespaced: scope === 'Namespaced',
      apiVersion,
      scope,
      names: crd.spec.names as ResourceDefinition['names'],
      versions: versions.map((v) => v.name),
      storageVersion,
      schema: crdVersion.schema?.openAPIV3Schema ?? {},
      crdVersion,
      at: (name: string) => make(name) as never,
      crd: () => deepCopy(crd),
      validate: (obj, opts) => localValidate(def, obj, opts),
      parse: (obj, opts) => localParse(def, obj, opts) as KubeObject,
      build: (init) => ({ apiVersion, kind, ...(init as object) }) as KubeObject,
    };
    byVersion.set(version, Object.freeze(def));
    return def;
  };
  return make(storageVersion);
}
