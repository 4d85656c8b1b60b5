/**
 * The schema engine's front door: a CRD version's schema compiled once into everything the
 * API server (and an operator's unit test) needs — validation, defaulting and pruning with
 * kube's semantics and messages.
 */
import type { StatusCause } from '../api/status.js';
import { fieldErrors, validateObjectMeta, validateObjectMetaUpdate } from '../api/validation.js';
import { CelValidator } from './cel/validator.js';
import { applyDefaultsStructural } from './defaulting.js';
import { validateListSetsAndMaps } from './listtype.js';
import { validateEmbeddedObjectMeta } from './objectmeta.js';
import { type PruneOptions, pruneStructural } from './pruning.js';
import { type Structural, toStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';
import { deepEqualJSON, goNumberValue, isObj } from './util.js';
import { compileValueValidator, type ValidationSink } from './validate.js';

/** Options of {@link CompiledSchema.validate}. */
export interface SchemaValidateOptions {
  /**
   * Skip errors on values that did not change from `old` (kube's CRD validation ratcheting,
   * on by default since 1.30). Default true when `old` is given.
   */
  ratcheting?: boolean;
  /** Receives CEL errors that were ratcheted into warnings. */
  warnings?: string[];
  /** Runtime CEL cost budget for the object (default 10,000,000). */
  celBudget?: number;
}

/** A CRD version schema compiled once and reused for every object. */
export interface CompiledSchema {
  /** The schema as given. */
  readonly schema: JSONSchemaProps;
  /** Its structural form. */
  readonly structural: Structural;
  /** Whether the schema has `x-kubernetes-validations` anywhere. */
  readonly hasCelRules: boolean;
  /**
   * Validates an object against the schema as the custom resource strategy does after metadata:
   * OpenAPI validation, embedded resources' metadata, list-type set/map uniqueness, then CEL
   * rules — skipped, with kube's "some validation rules were not checked" cause, when a
   * blocking error (type, required, enum, too long, too many) was found. `old` enables
   * transition rules and ratcheting.
   */
  validate(obj: unknown, old?: unknown, opts?: SchemaValidateOptions): StatusCause[];
  /** Applies defaults in place (non-nullable nulls without defaults are dropped first). */
  applyDefaults(obj: unknown): void;
  /** Prunes unknown fields in place and returns their paths (`spec.foo`). */
  prune(obj: unknown, opts?: PruneOptions): string[];
}

/** Options of {@link compileSchema}. */
export interface CompileSchemaOptions {
  /** The schema describes a whole resource (apiVersion/kind/metadata at its root). Default true. */
  isResourceRoot?: boolean;
}

const BLOCKING = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

/** The cause kube adds when schema errors prevent CEL rules from running. */
export const CEL_SKIPPED_CAUSE: StatusCause = fieldErrors.invalid(
  '<nil>',
  null,
  'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
);

function lookup(root: unknown, field: string): { found: boolean; value: unknown } {
  if (field === '<nil>' || field === '') return { found: true, value: root };
  const parts = field.match(/[^.[\]]+|\[[^\]]*\]/g) ?? [];
  let v: unknown = root;
  for (const p of parts) {
    if (p.startsWith('[')) {
      const k = p.slice(1, -1);
      if (Array.isArray(v) && /^\d+$/.test(k)) v = v[Number(k)];
      else if (isObj(v) && Object.hasOwn(v, k)) v = v[k];
      else return { found: false, value: undefined };
    } else if (isObj(v) && Object.hasOwn(v, p)) v = v[p];
    else return { found: false, value: undefined };
  }
  return { found: true, value: v };
}

// kube ratchets a schema error when the value it is about did not change on update.
function unchanged(cause: StatusCause, obj: unknown, old: unknown): boolean {
  let field = cause.field ?? '';
  if (field === '<nil>') return false;
  if (cause.reason === 'FieldValueRequired') {
    const i = Math.max(field.lastIndexOf('.'), field.lastIndexOf('['));
    field = i > 0 ? field.slice(0, i) : '';
  }
  const a = lookup(obj, field);
  const b = lookup(old, field);
  return a.found && b.found && deepEqualJSON(a.value, b.value);
}

const cache = new WeakMap<object, CompiledSchema>();
type Runner = (
  obj: unknown,
  old: unknown,
  opts: SchemaValidateOptions,
  afterSchema: ((errs: StatusCause[]) => void) | undefined,
) => StatusCause[];
const runners = new WeakMap<CompiledSchema, Runner>();

/**
 * Compiles a CRD version's `openAPIV3Schema` once (structural form, value validators, CEL
 * programs) and caches the result per schema object.
 *
 * @example
 * ```ts
 * const foo = compileSchema(crd.spec.versions[0].schema.openAPIV3Schema);
 * const unknown = foo.prune(obj);          // ['spec.typo']
 * foo.applyDefaults(obj);
 * const causes = foo.validate(obj);        // [] when valid
 * ```
 */
export function compileSchema(schema: JSONSchemaProps, opts: CompileSchemaOptions = {}): CompiledSchema {
  const isRoot = opts.isResourceRoot ?? true;
  const hit = isRoot ? cache.get(schema) : undefined;
  if (hit) return hit;
  const structural = toStructural(schema);
  const value = compileValueValidator(schema);
  let cel: CelValidator | undefined | null = null;
  const celValidator = () => {
    if (cel === null) {
      const v = new CelValidator(structural, isRoot);
      cel = v.hasRules ? v : undefined;
    }
    return cel;
  };
  const hasCelRules = JSON.stringify(schema).includes('"x-kubernetes-validations"');
  const compiled: CompiledSchema = {
    schema,
    structural,
    hasCelRules,
    validate(obj, old, vopts = {}) {
      return run(obj, old, vopts, undefined);
    },
    applyDefaults(obj) {
      applyDefaultsStructural(structural, obj);
    },
    prune(obj, popts) {
      return pruneStructural(structural, obj, { isResourceRoot: isRoot, ...popts });
    },
  };
  function run(
    obj: unknown,
    old: unknown,
    vopts: SchemaValidateOptions,
    afterSchema: ((errs: StatusCause[]) => void) | undefined,
  ) {
    const sink: ValidationSink = { prefix: '', causes: [] };
    value(obj, '', sink);
    let errs = sink.causes;
    afterSchema?.(errs);
    errs.push(...validateEmbeddedObjectMeta(structural, obj, false));
    const ratchet = old !== undefined && vopts.ratcheting !== false;
    if (old === undefined || validateListSetsAndMaps(structural, old).length === 0)
      errs.push(...validateListSetsAndMaps(structural, obj));
    if (ratchet) errs = errs.filter((c) => !unchanged(c, obj, old));
    if (hasCelRules) {
      const v = celValidator();
      if (v) {
        if (errs.some((c) => BLOCKING.has(c.reason ?? ''))) errs.push({ ...CEL_SKIPPED_CAUSE });
        else
          errs.push(
            ...v.validate(obj, old, {
              ...(vopts.celBudget !== undefined && { budget: vopts.celBudget }),
              ...(ratchet && vopts.warnings && { warnings: vopts.warnings }),
            }),
          );
      }
    }
    return errs;
  }
  runners.set(compiled, run);
  if (isRoot) cache.set(schema, compiled);
  return compiled;
}

/**
 * Validates an object against a schema (compiled and cached on first use).
 *
 * @example
 * ```ts
 * validate(fooSchema, { apiVersion: 'samplecontroller.k8s.io/v1alpha1', kind: 'Foo', spec: { replicas: 11 } });
 * // [{ reason: 'FieldValueInvalid', field: 'spec.replicas',
 * //    message: 'Invalid value: 11: spec.replicas in body should be less than or equal to 10' }]
 * ```
 */
export function validate(
  schema: JSONSchemaProps,
  obj: unknown,
  old?: unknown,
  opts?: SchemaValidateOptions,
): StatusCause[] {
  return compileSchema(schema).validate(obj, old, opts);
}

/**
 * Applies a schema's defaults to an object in place.
 *
 * @example
 * ```ts
 * const obj = { spec: {} };
 * applyDefaults(schema, obj); // obj.spec.replicas === 1 when the schema defaults it
 * ```
 */
export function applyDefaults(schema: JSONSchemaProps, obj: unknown): void {
  compileSchema(schema).applyDefaults(obj);
}

/**
 * Removes unknown fields in place and returns their paths, which the server reports as
 * `unknown field "spec.foo"` (strict: 400 `strict decoding error: unknown field "spec.foo"`,
 * warn: a `Warning` header).
 *
 * @example
 * ```ts
 * prune(schema, { spec: { replicas: 1, typo: true } }); // ['spec.typo']
 * ```
 */
export function prune(schema: JSONSchemaProps, obj: unknown, opts?: PruneOptions): string[] {
  return compileSchema(schema).prune(obj, opts);
}

/** What {@link validateCustomResource} needs to know about the custom resource's kind. */
export interface CustomResourceKind {
  group: string;
  version: string;
  kind: string;
  namespaced: boolean;
  /** The scale subresource of the version, when it has one. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}

/** Go's `%v` of a value decoded from JSON into `interface{}`. */
function goV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return goNumberValue(v);
  if (Array.isArray(v)) return `[${v.map(goV).join(' ')}]`;
  if (isObj(v))
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goV(v[k])}`)
      .join(' ')}]`;
  return String(v);
}

/** Go's `%T` of a value decoded from JSON into `interface{}`. */
function goT(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  return 'map[string]interface {}';
}

/**
 * `unstructured.NestedFieldNoCopy` along a scale path: the value, or apimachinery's accessor
 * error when a step is not an object.
 */
function nestedField(obj: unknown, path: string): { value: unknown; found: boolean; err?: string } {
  const parts = path.replace(/^\./, '').split('.');
  let v: unknown = obj;
  for (let i = 0; i < parts.length; i++) {
    if (v === undefined || v === null) return { value: undefined, found: false };
    if (!isObj(v))
      return {
        value: undefined,
        found: false,
        err: `.${parts.slice(0, i + 1).join('.')} accessor error: ${goV(v)} is of the type ${goT(v)}, expected map[string]interface{}`,
      };
    if (!Object.hasOwn(v, parts[i]!)) return { value: undefined, found: false };
    v = v[parts[i]!];
  }
  return { value: v, found: true };
}

/** `unstructured.NestedInt64`: 0 when absent, an accessor error when not an integer. */
function nestedInt(obj: unknown, path: string): { value: number; err?: string } {
  const f = nestedField(obj, path);
  if (f.err) return { value: 0, err: f.err };
  if (!f.found) return { value: 0 };
  const v = f.value;
  if (typeof v !== 'number' || !Number.isInteger(v))
    return {
      value: 0,
      err: `.${path.replace(/^\./, '')} accessor error: ${goV(v)} is of the type ${goT(v)}, expected int64`,
    };
  return { value: v };
}

function validateScale(
  obj: unknown,
  scale: NonNullable<CustomResourceKind['scale']>,
  spec: boolean,
): StatusCause[] {
  const errs: StatusCause[] = [];
  const check = (p: string) => {
    const r = nestedInt(obj, p);
    if (r.err) errs.push(fieldErrors.invalid(p, r.value, r.err));
    else if (r.value < 0) errs.push(fieldErrors.invalid(p, r.value, 'should be a non-negative integer'));
    else if (r.value > 2147483647)
      errs.push(fieldErrors.invalid(p, r.value, 'should be less than or equal to 2147483647'));
  };
  if (spec) check(scale.specReplicasPath);
  check(scale.statusReplicasPath);
  if (scale.labelSelectorPath) {
    // `unstructured.NestedString`: only a string (or nothing) is a selector.
    const f = nestedField(obj, scale.labelSelectorPath);
    const err =
      f.err ??
      (f.found && typeof f.value !== 'string'
        ? `.${scale.labelSelectorPath.replace(/^\./, '')} accessor error: ${goV(f.value)} is of the type ${goT(f.value)}, expected string`
        : undefined);
    if (err) errs.push(fieldErrors.invalid(scale.labelSelectorPath, '', err));
  }
  return errs;
}

/**
 * The whole validation of a custom resource on create (or update with `old`), in the order of
 * apiextensions' customResourceStrategy: kind and apiVersion, ObjectMeta, the schema (OpenAPI),
 * scale paths, embedded resources, list-type invariants, then CEL rules.
 *
 * @example
 * ```ts
 * const causes = validateCustomResource(compiled, obj, { group: 'samplecontroller.k8s.io', version: 'v1alpha1', kind: 'Foo', namespaced: true });
 * if (causes.length) throw ApiError.invalid({ group: 'samplecontroller.k8s.io', kind: 'Foo' }, name, causes);
 * // kubectl prints: The Foo "example-foo" is invalid: spec.replicas: Invalid value: 11: …
 * ```
 */
export function validateCustomResource(
  compiled: CompiledSchema,
  obj: Record<string, unknown>,
  kind: CustomResourceKind,
  old?: Record<string, unknown>,
  opts?: SchemaValidateOptions & {
    /** A write to the status subresource: the spec replicas of the scale subresource are not checked. */
    statusOnly?: boolean;
    /**
     * Validate ObjectMeta too (default true). A server whose generic registry validates metadata
     * for every kind turns it off so that a bad name is not reported twice.
     */
    objectMeta?: boolean;
  },
): StatusCause[] {
  const errs: StatusCause[] = [];
  const gv = `${kind.group}/${kind.version}`;
  if (obj.kind !== kind.kind) errs.push(fieldErrors.invalid('kind', obj.kind ?? '', `must be ${kind.kind}`));
  if (obj.apiVersion !== gv)
    errs.push(fieldErrors.invalid('apiVersion', obj.apiVersion ?? '', `must be ${gv}`));
  if (errs.length > 0) return errs;
  if (opts?.objectMeta === false) {
    // The caller validates metadata.
  } else if (old) {
    errs.push(
      ...validateObjectMeta(obj.metadata, {
        namespaced: kind.namespaced,
        nameValidation: 'subdomain',
        create: false,
      }),
    );
    errs.push(...validateObjectMetaUpdate(obj.metadata, old.metadata));
  } else {
    errs.push(
      ...validateObjectMeta(obj.metadata, {
        namespaced: kind.namespaced,
        nameValidation: 'subdomain',
        create: true,
      }),
    );
  }
  const run = runners.get(compiled);
  const scale = kind.scale;
  const after = scale
    ? (e: StatusCause[]) => e.push(...validateScale(obj, scale, !opts?.statusOnly))
    : undefined;
  errs.push(...(run ? run(obj, old, opts ?? {}, after) : compiled.validate(obj, old, opts)));
  return errs;
}
