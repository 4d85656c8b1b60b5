/**
 * Structural schemas (apiextensions `pkg/apiserver/schema`): the conversion of a CRD's
 * OpenAPI schema into the tree that pruning, defaulting, list-type and CEL validation walk
 * (`NewStructural`), and the checks that make a schema structural (`ValidateStructural`).
 */
import type { StatusCause } from '../api/status.js';
import { causeText, fieldErrors } from '../api/validation.js';
import { GoRegexpError, goRegexp } from './regex.js';
import type { JSONSchemaProps, ValidationRule } from './types.js';
import { isObj } from './util.js';

/** A node of a structural schema (`schema.Structural`). */
export interface Structural {
  type: string;
  format: string;
  nullable: boolean;
  /** The default value; `undefined` when none is declared. */
  default: unknown;
  items?: Structural;
  properties?: Record<string, Structural>;
  /** `additionalProperties`: a schema, or `true`/`false` without one. */
  additionalProperties?: { schema?: Structural; allows: boolean };
  preserveUnknownFields: boolean;
  embeddedResource: boolean;
  intOrString: boolean;
  listType?: string;
  listMapKeys?: string[];
  mapType?: string;
  validations?: ValidationRule[];
  maxItems?: number;
  maxLength?: number;
  maxProperties?: number;
  enum?: unknown[];
  /** The schema node this was built from (for value validation). */
  raw: JSONSchemaProps;
}

/** Error of `NewStructural` for schema features a structural schema cannot express. */
export class StructuralConversionError extends Error {}

function unsupported(s: JSONSchemaProps): string | undefined {
  if (s.id) return "OpenAPIV3Schema 'id' is not supported";
  if (s.$schema) return "OpenAPIV3Schema 'schema' is not supported";
  if (s.$ref) return "OpenAPIV3Schema '$ref' is not supported";
  if (s.patternProperties && Object.keys(s.patternProperties).length > 0)
    return "OpenAPIV3Schema 'patternProperties' is not supported";
  if (s.dependencies && Object.keys(s.dependencies).length > 0)
    return "OpenAPIV3Schema 'dependencies' is not supported";
  if (s.additionalItems !== undefined) return "OpenAPIV3Schema 'additionalItems' is not supported";
  if (s.definitions && Object.keys(s.definitions).length > 0)
    return "OpenAPIV3Schema 'definitions' is not supported";
  return undefined;
}

function checkNested(s: JSONSchemaProps | undefined): void {
  if (!s) return;
  const err = unsupported(s);
  if (err) throw new StructuralConversionError(err);
  if (s['x-kubernetes-preserve-unknown-fields'] === false)
    throw new StructuralConversionError(
      "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined",
    );
  if (Array.isArray(s.items))
    throw new StructuralConversionError("OpenAPIV3Schema 'items' must be a schema, but is an array");
  checkNested(s.items);
  checkNested(s.not);
  for (const x of s.allOf ?? []) checkNested(x);
  for (const x of s.anyOf ?? []) checkNested(x);
  for (const x of s.oneOf ?? []) checkNested(x);
  for (const x of Object.values(s.properties ?? {})) checkNested(x);
  if (isObj(s.additionalProperties)) checkNested(s.additionalProperties as JSONSchemaProps);
}

/**
 * Converts a CRD schema into its structural form (apiextensions `NewStructural`). Throws
 * {@link StructuralConversionError} for `$ref`, `id`, `definitions`, … and `items` arrays.
 *
 * @example
 * ```ts
 * const s = toStructural({ type: 'object', properties: { spec: { type: 'object' } } });
 * s.properties?.spec?.type; // 'object'
 * ```
 */
export function toStructural(s: JSONSchemaProps): Structural {
  const err = unsupported(s);
  if (err) throw new StructuralConversionError(err);
  if (s['x-kubernetes-preserve-unknown-fields'] === false)
    throw new StructuralConversionError(
      "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined",
    );
  checkNested(s.not);
  for (const x of s.allOf ?? []) checkNested(x);
  for (const x of s.anyOf ?? []) checkNested(x);
  for (const x of s.oneOf ?? []) checkNested(x);
  const out: Structural = {
    type: s.type ?? '',
    format: s.format ?? '',
    nullable: s.nullable === true,
    default: s.default === null ? undefined : s.default,
    preserveUnknownFields: s['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource: s['x-kubernetes-embedded-resource'] === true,
    intOrString: s['x-kubernetes-int-or-string'] === true,
    raw: s,
  };
  if (s['x-kubernetes-list-type'] !== undefined) out.listType = s['x-kubernetes-list-type'];
  if (s['x-kubernetes-list-map-keys'] !== undefined) out.listMapKeys = s['x-kubernetes-list-map-keys'];
  if (s['x-kubernetes-map-type'] !== undefined) out.mapType = s['x-kubernetes-map-type'];
  if (s['x-kubernetes-validations']?.length) out.validations = s['x-kubernetes-validations'];
  if (s.maxItems !== undefined) out.maxItems = s.maxItems;
  if (s.maxLength !== undefined) out.maxLength = s.maxLength;
  if (s.maxProperties !== undefined) out.maxProperties = s.maxProperties;
  if (s.enum !== undefined) out.enum = s.enum;
  if (s.items !== undefined) {
    if (Array.isArray(s.items))
      throw new StructuralConversionError("OpenAPIV3Schema 'items' must be a schema, but is an array");
    out.items = toStructural(s.items);
  }
  if (s.properties && Object.keys(s.properties).length > 0) {
    const props: Record<string, Structural> = Object.create(null);
    for (const [k, v] of Object.entries(s.properties)) props[k] = toStructural(v);
    out.properties = props;
  }
  if (s.additionalProperties !== undefined) {
    if (typeof s.additionalProperties === 'boolean')
      out.additionalProperties = { allows: s.additionalProperties };
    else out.additionalProperties = { schema: toStructural(s.additionalProperties), allows: true };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// ValidateStructural
// ---------------------------------------------------------------------------------------------

type Level = 'root' | 'item' | 'field';

const isIntType = (x: JSONSchemaProps | undefined, t: string): boolean =>
  x !== undefined && Object.keys(x).length === 1 && x.type === t;

// The two int-or-string patterns apiextensions exempts from the "nested type" rule.
const isIntOrStringAnyOf = (anyOf: JSONSchemaProps[] | undefined): boolean =>
  anyOf !== undefined &&
  anyOf.length === 2 &&
  isIntType(anyOf[0], 'integer') &&
  isIntType(anyOf[1], 'string');

const child = (p: string, c: string) => `${p}.${c}`;
const key = (p: string, k: string) => `${p}[${k}]`;
const idx = (p: string, i: number) => `${p}[${i}]`;

function validateInvariants(
  s: JSONSchemaProps | undefined,
  lvl: Level,
  path: string,
  errs: StatusCause[],
): void {
  if (!s) return;
  const items = Array.isArray(s.items) ? undefined : s.items;
  if (s.type === 'array' && items === undefined)
    errs.push(fieldErrors.required(child(path, 'items'), 'must be specified'));
  validateInvariants(items, 'item', child(path, 'items'), errs);
  for (const [k, v] of Object.entries(s.properties ?? {}))
    validateInvariants(v, 'field', key(child(path, 'properties'), k), errs);
  if (s.additionalProperties !== undefined) {
    if (lvl === 'root')
      errs.push(fieldErrors.forbidden(child(path, 'additionalProperties'), 'must not be used at the root'));
    if (isObj(s.additionalProperties))
      validateInvariants(
        s.additionalProperties as JSONSchemaProps,
        'field',
        child(path, 'additionalProperties'),
        errs,
      );
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve)
    errs.push(
      fieldErrors.invalid(
        child(path, 'x-kubernetes-preserve-unknown-fields'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  if (intOrString && embedded)
    errs.push(
      fieldErrors.invalid(
        child(path, 'x-kubernetes-embedded-resource'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  const skipAnyOf = isIntOrStringAnyOf(s.anyOf);
  const skipFirstAllOfAnyOf = (s.allOf?.length ?? 0) >= 1 && isIntOrStringAnyOf(s.allOf?.[0]?.anyOf);
  validateValueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, path, errs);

  const checkMetadata = lvl === 'root' || embedded;
  const type = s.type ?? '';
  if (embedded && type !== 'object') {
    if (type === '')
      errs.push(
        fieldErrors.required(child(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'),
      );
    else
      errs.push(
        fieldErrors.invalid(
          child(path, 'type'),
          type,
          'must be object if x-kubernetes-embedded-resource is true',
        ),
      );
  } else if (type === '' && !intOrString && !preserve) {
    const why =
      lvl === 'root'
        ? 'must not be empty at the root'
        : lvl === 'item'
          ? 'must not be empty for specified array items'
          : 'must not be empty for specified object fields';
    errs.push(fieldErrors.required(child(path, 'type'), why));
  }
  if (embedded && s.additionalProperties !== undefined)
    errs.push(
      fieldErrors.forbidden(
        child(path, 'additionalProperties'),
        'must not be used if x-kubernetes-embedded-resource is set',
      ),
    );
  if (lvl === 'root' && type !== '' && type !== 'object')
    errs.push(fieldErrors.invalid(child(path, 'type'), type, 'must be object at the root'));

  const props = s.properties ?? {};
  if (checkMetadata && props.kind && (props.kind.type ?? '') !== 'string')
    errs.push(
      fieldErrors.invalid(
        child(key(child(path, 'properties'), 'kind'), 'type'),
        props.kind.type ?? '',
        'must be string',
      ),
    );
  if (checkMetadata && props.apiVersion && (props.apiVersion.type ?? '') !== 'string')
    errs.push(
      fieldErrors.invalid(
        child(key(child(path, 'properties'), 'apiVersion'), 'type'),
        props.apiVersion.type ?? '',
        'must be string',
      ),
    );
  if (props.metadata)
    validateMetadataInvariants(
      props.metadata,
      checkMetadata,
      lvl,
      key(child(path, 'properties'), 'metadata'),
      errs,
    );
  if (embedded && !preserve && Object.keys(props).length === 0)
    errs.push(
      fieldErrors.required(
        child(path, 'properties'),
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
}

function validateMetadataInvariants(
  s: JSONSchemaProps,
  checkMetadata: boolean,
  lvl: Level,
  path: string,
  errs: StatusCause[],
): void {
  if (checkMetadata && s.type !== 'object')
    errs.push(fieldErrors.invalid(child(path, 'type'), s.type ?? '', 'must be object'));
  if (lvl === 'root') {
    // Only `type`, `default` and properties limited to name/generateName may be given.
    const keys = Object.keys(s.properties ?? {});
    const onlyNames =
      keys.length === 0 || (keys.length <= 2 && keys.every((k) => k === 'name' || k === 'generateName'));
    const rest = Object.keys(s).filter(
      (k) =>
        k !== 'type' &&
        k !== 'default' &&
        k !== 'properties' &&
        (s as Record<string, unknown>)[k] !== undefined,
    );
    const meaningful = rest.filter((k) => {
      const v = (s as Record<string, unknown>)[k];
      // Zero values are equal to an unset field in Go.
      return !(
        v === false ||
        v === '' ||
        (Array.isArray(v) && v.length === 0) ||
        (isObj(v) && Object.keys(v).length === 0)
      );
    });
    if (!onlyNames || meaningful.length > 0)
      errs.push(
        fieldErrors.forbidden(
          path,
          'must not specify anything other than name and generateName, but metadata is implicitly specified',
        ),
      );
  }
}

function validateValueValidation(
  v: JSONSchemaProps,
  skipAnyOf: boolean,
  skipFirstAllOfAnyOf: boolean,
  path: string,
  errs: StatusCause[],
): void {
  if (!skipAnyOf)
    (v.anyOf ?? []).forEach((x, i) => {
      validateNested(x, false, idx(child(path, 'anyOf'), i), errs);
    });
  (v.allOf ?? []).forEach((x, i) => {
    validateNested(x, skipFirstAllOfAnyOf && i === 0, idx(child(path, 'allOf'), i), errs);
  });
  (v.oneOf ?? []).forEach((x, i) => {
    validateNested(x, false, idx(child(path, 'oneOf'), i), errs);
  });
  if (v.not) validateNested(v.not, false, child(path, 'not'), errs);
  if (v.pattern) {
    const re = goRegexp(v.pattern);
    if (re instanceof GoRegexpError)
      errs.push(
        fieldErrors.invalid(
          child(path, 'pattern'),
          v.pattern,
          `must be a valid regular expression, but isn't: ${re.message}`,
        ),
      );
  }
}

function validateNested(v: JSONSchemaProps, skipAnyOf: boolean, path: string, errs: StatusCause[]): void {
  validateValueValidation(v, skipAnyOf, false, path, errs);
  if (v.items && !Array.isArray(v.items)) validateNested(v.items, false, child(path, 'items'), errs);
  for (const [k, fld] of Object.entries(v.properties ?? {}))
    validateNested(fld, false, key(child(path, 'properties'), k), errs);
  if (v.type) errs.push(fieldErrors.forbidden(child(path, 'type'), 'must be empty to be structural'));
  if (v.additionalProperties !== undefined)
    errs.push(
      fieldErrors.forbidden(child(path, 'additionalProperties'), 'must be undefined to be structural'),
    );
  if (v.default !== undefined && v.default !== null)
    errs.push(fieldErrors.forbidden(child(path, 'default'), 'must be undefined to be structural'));
  if (v.title) errs.push(fieldErrors.forbidden(child(path, 'title'), 'must be empty to be structural'));
  if (v.description)
    errs.push(fieldErrors.forbidden(child(path, 'description'), 'must be empty to be structural'));
  if (v.nullable) errs.push(fieldErrors.forbidden(child(path, 'nullable'), 'must be false to be structural'));
  if (v.externalDocs)
    errs.push(fieldErrors.forbidden(child(path, 'externalDocs'), 'must be undefined to be structural'));
  if (v['x-kubernetes-preserve-unknown-fields'])
    errs.push(
      fieldErrors.forbidden(
        child(path, 'x-kubernetes-preserve-unknown-fields'),
        'must be false to be structural',
      ),
    );
  if (v['x-kubernetes-embedded-resource'])
    errs.push(
      fieldErrors.forbidden(child(path, 'x-kubernetes-embedded-resource'), 'must be false to be structural'),
    );
  if (v['x-kubernetes-int-or-string'])
    errs.push(
      fieldErrors.forbidden(child(path, 'x-kubernetes-int-or-string'), 'must be false to be structural'),
    );
  if (v['x-kubernetes-list-map-keys']?.length)
    errs.push(
      fieldErrors.forbidden(child(path, 'x-kubernetes-list-map-keys'), 'must be empty to be structural'),
    );
  if (v['x-kubernetes-list-type'] !== undefined)
    errs.push(
      fieldErrors.forbidden(child(path, 'x-kubernetes-list-type'), 'must be undefined to be structural'),
    );
  if (v['x-kubernetes-map-type'] !== undefined)
    errs.push(
      fieldErrors.forbidden(child(path, 'x-kubernetes-map-type'), 'must be undefined to be structural'),
    );
  if (v['x-kubernetes-validations']?.length)
    errs.push(
      fieldErrors.forbidden(child(path, 'x-kubernetes-validations'), 'must be empty to be structural'),
    );
  if (v.properties?.metadata)
    errs.push(
      fieldErrors.forbidden(
        key(child(path, 'properties'), 'metadata'),
        'must not be specified in a nested context',
      ),
    );
}

function validateCompleteness(
  v: JSONSchemaProps,
  s: JSONSchemaProps | undefined,
  sPath: string,
  vPath: string,
  errs: StatusCause[],
): void {
  if (!s) {
    errs.push(fieldErrors.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  if (v.not) validateNestedCompleteness(v.not, s, sPath, child(vPath, 'not'), errs);
  (v.allOf ?? []).forEach((x, i) => {
    validateNestedCompleteness(x, s, sPath, idx(child(vPath, 'allOf'), i), errs);
  });
  (v.anyOf ?? []).forEach((x, i) => {
    validateNestedCompleteness(x, s, sPath, idx(child(vPath, 'anyOf'), i), errs);
  });
  (v.oneOf ?? []).forEach((x, i) => {
    validateNestedCompleteness(x, s, sPath, idx(child(vPath, 'oneOf'), i), errs);
  });
}

function validateNestedCompleteness(
  v: JSONSchemaProps,
  s: JSONSchemaProps | undefined,
  sPath: string,
  vPath: string,
  errs: StatusCause[],
): void {
  if (!s) {
    errs.push(fieldErrors.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  validateCompleteness(v, s, sPath, vPath, errs);
  if (v.items && !Array.isArray(v.items)) {
    const sItems = Array.isArray(s.items) ? undefined : s.items;
    if (!sItems)
      errs.push(
        fieldErrors.required(child(sPath, 'items'), `because it is defined in ${child(vPath, 'items')}`),
      );
    else validateNestedCompleteness(v.items, sItems, child(sPath, 'items'), child(vPath, 'items'), errs);
  }
  for (const [k, vFld] of Object.entries(v.properties ?? {})) {
    const sFld = s.properties?.[k];
    const sp = key(child(sPath, 'properties'), k);
    const vp = key(child(vPath, 'properties'), k);
    if (!sFld) errs.push(fieldErrors.required(sp, `because it is defined in ${vp}`));
    else validateNestedCompleteness(vFld, sFld, sp, vp, errs);
  }
}

/**
 * Checks that a CRD schema is structural (apiextensions `ValidateStructural`): every field
 * typed, nothing specified only inside `allOf`/`anyOf`/`oneOf`/`not`, metadata restricted to
 * name and generateName, and the `x-kubernetes-*` extensions used consistently. Errors are
 * sorted by their text, as the Go code sorts them.
 *
 * @param path the field path of the schema, e.g. `spec.versions[0].schema.openAPIV3Schema`.
 * @example
 * ```ts
 * validateStructural({ type: 'object', properties: { spec: {} } }, 'spec.validation.openAPIV3Schema');
 * // [{ field: 'spec.validation.openAPIV3Schema.properties[spec].type',
 * //    message: 'Required value: must not be empty for specified object fields', … }]
 * ```
 */
export function validateStructural(schema: JSONSchemaProps, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  validateInvariants(schema, 'root', path, errs);
  validateCompleteness(schema, schema, path, path, errs);
  return errs.sort((a, b) => {
    const x = causeText(a);
    const y = causeText(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
