/**
 * A version's `schema` as a whole (`ValidateCustomResourceDefinitionValidation`): what the root
 * may hold, structural-ness, and the defaults the schema declares.
 */
import type { StatusCause } from '../../api/status.js';
import { fieldErrors, rawFieldValue } from '../../api/validation.js';
import {
  CelSchemaCompiler,
  CelValidator,
  costErrorMessage,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from '../cel/validator.js';
import { validateEmbeddedObjectMeta } from '../objectmeta.js';
import { pruneStructural } from '../pruning.js';
import {
  type Structural,
  StructuralConversionError,
  toStructural,
  validateStructural,
} from '../structural.js';
import type { JSONSchemaProps } from '../types.js';
import { deepCopyJSON, deepEqualJSON, goBadValue, isObj } from '../util.js';
import { validateValue } from '../validate.js';
import { child, key } from './internal.js';
import { type CelContext, META_FIELDS, validateOpenAPISchema } from './openapi-schema.js';

// JSONSchemaProps field order (Go struct), with the fields allowed at the root when /status is on.
const ROOT_FIELD_ORDER: Array<[string, string, boolean]> = [
  ['id', 'ID', false],
  ['$schema', 'Schema', false],
  ['$ref', 'Ref', false],
  ['description', 'Description', true],
  ['type', 'Type', true],
  ['format', 'Format', true],
  ['title', 'Title', true],
  ['default', 'Default', false],
  ['maximum', 'Maximum', true],
  ['exclusiveMaximum', 'ExclusiveMaximum', true],
  ['minimum', 'Minimum', true],
  ['exclusiveMinimum', 'ExclusiveMinimum', true],
  ['maxLength', 'MaxLength', true],
  ['minLength', 'MinLength', true],
  ['pattern', 'Pattern', true],
  ['maxItems', 'MaxItems', true],
  ['minItems', 'MinItems', true],
  ['uniqueItems', 'UniqueItems', true],
  ['multipleOf', 'MultipleOf', true],
  ['enum', 'Enum', false],
  ['maxProperties', 'MaxProperties', false],
  ['minProperties', 'MinProperties', false],
  ['required', 'Required', true],
  ['items', 'Items', true],
  ['allOf', 'AllOf', false],
  ['oneOf', 'OneOf', false],
  ['anyOf', 'AnyOf', false],
  ['not', 'Not', false],
  ['properties', 'Properties', true],
  ['additionalProperties', 'AdditionalProperties', false],
  ['patternProperties', 'PatternProperties', false],
  ['dependencies', 'Dependencies', false],
  ['additionalItems', 'AdditionalItems', false],
  ['definitions', 'Definitions', false],
  ['externalDocs', 'ExternalDocs', true],
  ['example', 'Example', true],
  ['nullable', 'Nullable', false],
  ['x-kubernetes-preserve-unknown-fields', 'XPreserveUnknownFields', true],
  ['x-kubernetes-embedded-resource', 'XEmbeddedResource', false],
  ['x-kubernetes-int-or-string', 'XIntOrString', false],
  ['x-kubernetes-list-map-keys', 'XListMapKeys', false],
  ['x-kubernetes-list-type', 'XListType', false],
  ['x-kubernetes-map-type', 'XMapType', false],
  ['x-kubernetes-validations', 'XValidations', true],
];
const ALLOWED_AT_ROOT = `[${ROOT_FIELD_ORDER.filter(([, , ok]) => ok)
  .map(([, g]) => g)
  .join(' ')}]`;

const isZero = (v: unknown) =>
  v === undefined ||
  v === null ||
  v === false ||
  v === '' ||
  v === 0 ||
  (Array.isArray(v) && v.length === 0) ||
  (isObj(v) && Object.keys(v).length === 0);

export function hasSchemaWith(
  s: JSONSchemaProps | undefined,
  pred: (s: JSONSchemaProps) => boolean,
): boolean {
  if (!s) return false;
  if (pred(s)) return true;
  const subs: Array<JSONSchemaProps | undefined> = [
    ...(Array.isArray(s.items) ? s.items : [s.items]),
    ...(s.allOf ?? []),
    ...(s.anyOf ?? []),
    ...(s.oneOf ?? []),
    s.not,
    ...Object.values(s.properties ?? {}),
    isObj(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined,
    ...Object.values(s.patternProperties ?? {}),
    ...Object.values(s.definitions ?? {}),
  ];
  return subs.some((x) => hasSchemaWith(x, pred));
}

export function validateValidation(
  validation: { openAPIV3Schema?: JSONSchemaProps } | undefined,
  statusEnabled: boolean,
  path: string,
): StatusCause[] {
  const errs: StatusCause[] = [];
  const schema = validation?.openAPIV3Schema;
  if (!schema) return errs;
  const sp = child(path, 'openAPIV3Schema');
  if (statusEnabled) {
    for (const [jsonKey, goName, allowed] of ROOT_FIELD_ORDER) {
      const v = (schema as Record<string, unknown>)[jsonKey];
      if (isZero(v)) continue;
      if (goName === 'Type') {
        if (v !== 'object') {
          errs.push(
            fieldErrors.invalid(
              `${path}.openAPIV3Schema.type`,
              v,
              `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`,
            ),
          );
          break;
        }
        continue;
      }
      if (!allowed) {
        errs.push(
          fieldErrors.invalid(
            sp,
            rawFieldValue(`apiextensions.JSONSchemaProps{${goName}:…}`),
            `only ${ALLOWED_AT_ROOT} fields are allowed at the root of the schema if the status subresource is enabled`,
          ),
        );
        break;
      }
    }
  }
  if (schema.nullable)
    errs.push(
      fieldErrors.forbidden(`${path}.openAPIV3Schema.nullable`, 'nullable cannot be true at the root'),
    );

  let cel: CelContext | undefined;
  const initErrs: StatusCause[] = [];
  let structural: Structural | undefined;
  try {
    structural = toStructural(schema);
  } catch (e) {
    if (!(e instanceof StructuralConversionError)) throw e;
    initErrs.push(fieldErrors.invalid(sp, '', e.message));
  }
  if (structural) {
    const se = validateStructural(schema, sp);
    if (se.length > 0) errs.push(...se);
    else {
      const de = validateDefaults(structural, sp);
      if (de.length > 0) errs.push(...de);
      else {
        cel = {
          compiler: lazyCompiler(structural),
          node: structural,
          cardinality: 1,
          total: { cost: 0, expensive: [] },
        };
      }
    }
  }
  const oe = validateOpenAPISchema(
    schema,
    sp,
    { allowDefaults: true, disallowDefaultsReason: '', insideResourceMeta: false },
    true,
    cel,
  );
  errs.push(...oe.schema, ...oe.cel);
  if (errs.length === 0 && initErrs.length > 0) errs.push(...initErrs);
  if (cel && cel.total.cost > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    const expensive = [...cel.total.expensive].sort((a, b) => b.cost - a.cost).slice(0, 4);
    for (const e of expensive)
      errs.push(
        fieldErrors.forbidden(
          e.path,
          'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
        ),
      );
    errs.push(
      fieldErrors.forbidden(
        sp,
        costErrorMessage(
          'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema',
          cel.total.cost,
          STATIC_ESTIMATED_CRD_COST_LIMIT,
        ),
      ),
    );
  }
  return errs;
}

/**
 * Validates the defaults of a structural schema (apiextensions `defaulting.ValidateDefaults`):
 * each default must be pruned (no unknown fields), valid against its schema, valid metadata
 * inside resources, and pass the node's CEL rules.
 */
export function validateDefaults(root: Structural, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  const walk = (s: Structural, p: string, insideMeta: boolean, isRes: boolean) => {
    const embedded = s.embeddedResource || isRes;
    if (s.default !== undefined && !insideMeta) {
      const dp = child(p, 'default');
      const pruned = deepCopyJSON(s.default);
      pruneStructural(s, pruned, { isResourceRoot: embedded, pruneMetadata: false });
      if (!deepEqualJSON(pruned, s.default))
        errs.push(fieldErrors.invalid(dp, goBadValue(s.default), 'must not have unknown fields'));
      else {
        const me = validateEmbeddedObjectMeta(s, s.default, embedded, dp);
        if (me.length > 0) errs.push(...me);
        else {
          const ve = validateValue(s.raw, s.default, dp);
          if (ve.length > 0) errs.push(...ve);
          else if (hasSchemaWith(s.raw, (x) => (x['x-kubernetes-validations']?.length ?? 0) > 0)) {
            try {
              errs.push(...new CelValidator(s, embedded).validate(s.default, s.default, {}, dp));
            } catch {
              // Rules that do not compile are reported by the rule checks.
            }
          }
        }
      }
    }
    if (s.items) walk(s.items, child(p, 'items'), insideMeta, false);
    for (const [k, sub] of Object.entries(s.properties ?? {})) {
      const meta = insideMeta || (embedded && META_FIELDS.has(k));
      walk(sub, key(child(p, 'properties'), k), meta, false);
    }
  };
  walk(root, path, false, true);
  return errs;
}

/**
 * The schema's CEL compiler, built when a node with `x-kubernetes-validations` first needs it, as
 * kube-apiserver builds its type information only then (`CELSchemaContext.TypeInfo`): a schema
 * without rules (most of them, and every resource an operator declares without rules at start)
 * never pays for CEL's environment. A failure is thrown to each node that needs it.
 */
function lazyCompiler(structural: Structural): () => CelSchemaCompiler {
  let built: CelSchemaCompiler | undefined;
  let failure: unknown;
  return () => {
    if (built) return built;
    if (failure !== undefined) throw failure;
    try {
      built = new CelSchemaCompiler(structural, true);
      return built;
    } catch (e) {
      failure = e;
      throw e;
    }
  };
}
