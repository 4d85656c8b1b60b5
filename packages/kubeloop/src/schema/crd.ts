/**
 * Validation of CustomResourceDefinition objects, as apiextensions-apiserver's
 * `ValidateCustomResourceDefinition` / `ValidateCustomResourceDefinitionUpdate` run it on a
 * v1 CRD converted to the internal version.
 *
 * The conversion matters for field paths: when every version has the same schema (or
 * subresources, or printer columns, or selectable fields), kube moves it to the top level, so
 * errors read `spec.validation.openAPIV3Schema…`, `spec.subresources…` or
 * `spec.additionalPrinterColumns[0]…`; otherwise they read `spec.versions[i].schema.openAPIV3Schema…`.
 */
import type { StatusCause } from '../api/status.js';
import {
  fieldErrors,
  goStringSlice,
  isDNS1035Label,
  isDNS1123Subdomain,
  rawFieldValue,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '../api/validation.js';
import {
  CelSchemaCompiler,
  CelValidator,
  costErrorMessage,
  goValidationRule,
  maxCardinality,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
  validFieldPath,
} from './cel/validator.js';
import { validateEmbeddedObjectMeta } from './objectmeta.js';
import { pruneStructural } from './pruning.js';
import {
  type Structural,
  StructuralConversionError,
  toStructural,
  validateStructural,
} from './structural.js';
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceSubresources,
  JSONSchemaProps,
} from './types.js';
import { deepCopyJSON, deepEqualJSON, goBadValue, isObj } from './util.js';
import { validateValue } from './validate.js';

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const PRINTER_COLUMN_TYPES = 'boolean,date,integer,number,string';
const PRINTER_COLUMN_FORMATS = 'byte,date,date-time,double,float,int32,int64,password';
const SUPPORTED_REASONS = [
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueInvalid',
  'FieldValueRequired',
];
/** Maximum number of selectable fields per version. */
export const MAX_SELECTABLE_FIELDS = 8;
const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

const child = (p: string, c: string) => `${p}.${c}`;
const key = (p: string, k: string) => `${p}[${k}]`;
const idx = (p: string, i: number) => `${p}[${i}]`;

// ---------------------------------------------------------------------------------------------
// v1 → internal
// ---------------------------------------------------------------------------------------------

interface InternalVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps } | undefined;
  subresources?: CustomResourceSubresources | undefined;
  additionalPrinterColumns?: CustomResourceColumnDefinition[] | undefined;
  selectableFields?: Array<{ jsonPath: string }> | undefined;
}

interface InternalSpec {
  group: string;
  names: CustomResourceDefinition['spec']['names'];
  scope: string;
  version: string;
  versions: InternalVersion[];
  validation?: { openAPIV3Schema?: JSONSchemaProps } | undefined;
  subresources?: CustomResourceSubresources | undefined;
  additionalPrinterColumns?: CustomResourceColumnDefinition[] | undefined;
  selectableFields?: Array<{ jsonPath: string }> | undefined;
  conversion?: {
    strategy?: string;
    webhookClientConfig?: NonNullable<
      NonNullable<CustomResourceDefinition['spec']['conversion']>['webhook']
    >['clientConfig'];
    conversionReviewVersions?: string[];
  };
  preserveUnknownFields: boolean;
}

/**
 * Applies the v1 defaults of a CRD in place (`SetDefaults_CustomResourceDefinition`):
 * `singular` and `listKind` from `kind`, `conversion.strategy: None`, and the
 * `x-kubernetes-list-map-keys`-free defaults the server stores.
 */
export function setCustomResourceDefinitionDefaults(crd: CustomResourceDefinition): void {
  const spec = crd.spec;
  if (!spec) return;
  if (spec.names) {
    if (!spec.names.singular && spec.names.kind) spec.names.singular = spec.names.kind.toLowerCase();
    if (!spec.names.listKind && spec.names.kind) spec.names.listKind = `${spec.names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  spec.conversion.strategy ??= 'None';
  if (spec.conversion.strategy === 'Webhook' && spec.conversion.webhook?.clientConfig?.service) {
    spec.conversion.webhook.clientConfig.service.port ??= 443;
  }
  for (const v of spec.versions ?? []) {
    if (v.subresources?.scale === undefined) continue;
  }
}

function toInternal(crd: CustomResourceDefinition): InternalSpec {
  const spec = crd.spec;
  const versions: InternalVersion[] = (spec.versions ?? []).map((v) => ({ ...v }));
  const out: InternalSpec = {
    group: spec.group ?? '',
    names: spec.names ?? ({} as InternalSpec['names']),
    scope: spec.scope ?? '',
    version: versions[0]?.name ?? '',
    versions,
    preserveUnknownFields: spec.preserveUnknownFields === true,
  };
  if (spec.conversion) {
    out.conversion = {
      ...(spec.conversion.strategy !== undefined && { strategy: spec.conversion.strategy }),
      ...(spec.conversion.webhook?.clientConfig && {
        webhookClientConfig: spec.conversion.webhook.clientConfig,
      }),
      ...(spec.conversion.webhook?.conversionReviewVersions && {
        conversionReviewVersions: spec.conversion.webhook.conversionReviewVersions,
      }),
    };
  }
  if (versions.length > 0) {
    const first = versions[0] as InternalVersion;
    const same = (get: (v: InternalVersion) => unknown) =>
      versions.every((v) => deepEqualJSON(get(v) ?? null, get(first) ?? null));
    if (same((v) => v.subresources)) {
      out.subresources = first.subresources;
      for (const v of versions) v.subresources = undefined;
    }
    if (same((v) => v.schema)) {
      out.validation = first.schema;
      for (const v of versions) v.schema = undefined;
    }
    const cols = (v: InternalVersion) =>
      v.additionalPrinterColumns?.length ? v.additionalPrinterColumns : null;
    if (same(cols)) {
      out.additionalPrinterColumns = first.additionalPrinterColumns;
      for (const v of versions) v.additionalPrinterColumns = undefined;
    }
    const sel = (v: InternalVersion) => (v.selectableFields?.length ? v.selectableFields : null);
    if (same(sel)) {
      out.selectableFields = first.selectableFields;
      for (const v of versions) v.selectableFields = undefined;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// schema validation
// ---------------------------------------------------------------------------------------------

interface Ssv {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
  uncorrelatable?: string | undefined;
}

interface SchemaErrors {
  schema: StatusCause[];
  cel: StatusCause[];
}

interface CelContext {
  compiler: CelSchemaCompiler;
  node: Structural;
  cardinality: number;
  total: { cost: number; expensive: Array<{ path: string; cost: number }> };
}

const hasNewlines = (s: string) => /[\n\r]+/.test(s);

function ssvValidate(s: JSONSchemaProps, path: string, ssv: Ssv): StatusCause[] {
  const errs: StatusCause[] = [];
  if (s.type && !OPENAPI_V3_TYPES.includes(s.type))
    errs.push(fieldErrors.notSupported(child(path, 'type'), s.type, OPENAPI_V3_TYPES));
  if (s.default !== undefined && !ssv.allowDefaults) {
    errs.push(
      fieldErrors.forbidden(
        child(path, 'default'),
        `must not be set${ssv.disallowDefaultsReason ? ` ${ssv.disallowDefaultsReason}` : ''}`,
      ),
    );
  }
  if (s.id) errs.push(fieldErrors.forbidden(child(path, 'id'), 'id is not supported'));
  if (s.additionalItems !== undefined)
    errs.push(fieldErrors.forbidden(child(path, 'additionalItems'), 'additionalItems is not supported'));
  if (s.patternProperties && Object.keys(s.patternProperties).length > 0)
    errs.push(fieldErrors.forbidden(child(path, 'patternProperties'), 'patternProperties is not supported'));
  if (s.definitions && Object.keys(s.definitions).length > 0)
    errs.push(fieldErrors.forbidden(child(path, 'definitions'), 'definitions is not supported'));
  if (s.dependencies !== undefined)
    errs.push(fieldErrors.forbidden(child(path, 'dependencies'), 'dependencies is not supported'));
  if (s.$ref !== undefined) errs.push(fieldErrors.forbidden(child(path, '$ref'), '$ref is not supported'));
  if (s.type === 'null')
    errs.push(
      fieldErrors.forbidden(
        child(path, 'type'),
        'type cannot be set to null, use nullable as an alternative',
      ),
    );
  if (Array.isArray(s.items) && s.items.length > 0)
    errs.push(fieldErrors.forbidden(child(path, 'items'), 'items must be a schema object and not an array'));
  if (ssv.insideResourceMeta && s['x-kubernetes-embedded-resource'])
    errs.push(
      fieldErrors.forbidden(
        child(path, 'x-kubernetes-embedded-resource'),
        'must not be used inside of resource meta',
      ),
    );
  return errs;
}

const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

function validateOpenAPISchema(
  s: JSONSchemaProps | undefined,
  path: string,
  ssv: Ssv,
  isRoot: boolean,
  cel: CelContext | undefined,
): SchemaErrors {
  const out: SchemaErrors = { schema: [], cel: [] };
  if (!s) return out;
  const add = (e: SchemaErrors) => {
    out.schema.push(...e.schema);
    out.cel.push(...e.cel);
  };
  out.schema.push(...ssvValidate(s, path, ssv));
  if (s.uniqueItems)
    out.schema.push(
      fieldErrors.forbidden(
        child(path, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  const structural = cel?.node;
  if (s.additionalProperties !== undefined) {
    if (
      s.properties &&
      Object.keys(s.properties).length > 0 &&
      (s.additionalProperties === false || isObj(s.additionalProperties))
    )
      out.schema.push(
        fieldErrors.forbidden(
          child(path, 'additionalProperties'),
          'additionalProperties and properties are mutual exclusive',
        ),
      );
    const sub = ssv.insideResourceMeta
      ? {
          ...ssv,
          allowDefaults: false,
          disallowDefaultsReason: 'inside additionalProperties applying to object metadata',
        }
      : ssv;
    if (isObj(s.additionalProperties)) {
      const apNode = structural?.additionalProperties?.schema;
      add(
        validateOpenAPISchema(
          s.additionalProperties as JSONSchemaProps,
          child(path, 'additionalProperties'),
          sub,
          false,
          cel && apNode
            ? { ...cel, node: apNode, cardinality: cel.cardinality * maxCardinality(structural) }
            : undefined,
        ),
      );
    }
  }
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    let sub: Ssv = ssv;
    if (s['x-kubernetes-map-type'] === 'atomic') sub = { ...sub, uncorrelatable: sub.uncorrelatable ?? path };
    if ((isRoot || s['x-kubernetes-embedded-resource']) && META_FIELDS.has(name)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${name}` };
    }
    const pNode = structural?.properties?.[name];
    add(
      validateOpenAPISchema(
        prop,
        key(child(path, 'properties'), name),
        sub,
        false,
        cel && pNode ? { ...cel, node: pNode } : undefined,
      ),
    );
  }
  if (s.not) add(validateOpenAPISchema(s.not, child(path, 'not'), ssv, false, undefined));
  (s.allOf ?? []).forEach((x, i) => {
    add(validateOpenAPISchema(x, idx(child(path, 'allOf'), i), ssv, false, undefined));
  });
  (s.oneOf ?? []).forEach((x, i) => {
    add(validateOpenAPISchema(x, idx(child(path, 'oneOf'), i), ssv, false, undefined));
  });
  (s.anyOf ?? []).forEach((x, i) => {
    add(validateOpenAPISchema(x, idx(child(path, 'anyOf'), i), ssv, false, undefined));
  });
  for (const [name, d] of Object.entries(s.definitions ?? {}))
    add(validateOpenAPISchema(d, key(child(path, 'definitions'), name), ssv, false, undefined));
  if (s.items !== undefined) {
    const sub: Ssv =
      s['x-kubernetes-list-type'] !== 'map' ? { ...ssv, uncorrelatable: ssv.uncorrelatable ?? path } : ssv;
    const iNode = structural?.items;
    if (Array.isArray(s.items))
      s.items.forEach((x, i) => {
        add(validateOpenAPISchema(x, idx(child(path, 'items'), i), sub, false, undefined));
      });
    else
      add(
        validateOpenAPISchema(
          s.items,
          child(path, 'items'),
          sub,
          false,
          cel && iNode
            ? { ...cel, node: iNode, cardinality: cel.cardinality * maxCardinality(structural) }
            : undefined,
        ),
      );
  }
  for (const [name, d] of Object.entries(s.dependencies ?? {})) {
    if (!Array.isArray(d))
      add(validateOpenAPISchema(d, key(child(path, 'dependencies'), name), ssv, false, undefined));
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false)
    out.schema.push(
      fieldErrors.invalid(
        child(path, 'x-kubernetes-preserve-unknown-fields'),
        false,
        'must be true or undefined',
      ),
    );
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && s.type !== 'object') {
    if (!s.type)
      out.schema.push(
        fieldErrors.required(child(path, 'type'), 'must be object if x-kubernetes-map-type is specified'),
      );
    else
      out.schema.push(
        fieldErrors.invalid(
          child(path, 'type'),
          s.type,
          'must be object if x-kubernetes-map-type is specified',
        ),
      );
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular')
    out.schema.push(
      fieldErrors.notSupported(child(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']),
    );
  const listType = s['x-kubernetes-list-type'];
  const items = Array.isArray(s.items) ? undefined : s.items;
  if (listType !== undefined && s.type !== 'array') {
    if (!s.type)
      out.schema.push(
        fieldErrors.required(child(path, 'type'), 'must be array if x-kubernetes-list-type is specified'),
      );
    else
      out.schema.push(
        fieldErrors.invalid(
          child(path, 'type'),
          s.type,
          'must be array if x-kubernetes-list-type is specified',
        ),
      );
  } else if (listType === 'set' && items) {
    if (
      items.type === 'array' &&
      items['x-kubernetes-list-type'] !== undefined &&
      items['x-kubernetes-list-type'] !== 'atomic'
    )
      out.schema.push(
        fieldErrors.invalid(
          child(child(path, 'items'), 'x-kubernetes-list-type'),
          items['x-kubernetes-list-type'],
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic')
      out.schema.push(
        fieldErrors.invalid(
          child(child(path, 'items'), 'x-kubernetes-map-type'),
          items['x-kubernetes-list-type'] === undefined ? null : items['x-kubernetes-list-type'],
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType))
    out.schema.push(
      fieldErrors.notSupported(child(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']),
    );
  const mapKeys = s['x-kubernetes-list-map-keys'] ?? [];
  if (mapKeys.length > 0) {
    if (listType === undefined)
      out.schema.push(
        fieldErrors.required(
          child(path, 'x-kubernetes-list-type'),
          'must be map if x-kubernetes-list-map-keys is non-empty',
        ),
      );
    else if (listType !== 'map')
      out.schema.push(
        fieldErrors.invalid(
          child(path, 'x-kubernetes-list-type'),
          listType,
          'must be map if x-kubernetes-list-map-keys is non-empty',
        ),
      );
  }
  if (listType === 'map') {
    if (mapKeys.length === 0)
      out.schema.push(
        fieldErrors.required(
          child(path, 'x-kubernetes-list-map-keys'),
          'must not be empty if x-kubernetes-list-type is map',
        ),
      );
    if (s.items === undefined)
      out.schema.push(
        fieldErrors.required(child(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'),
      );
    if (Array.isArray(s.items))
      out.schema.push(
        fieldErrors.invalid(
          child(path, 'items'),
          goBadValue(s.items),
          'must only have a single schema if x-kubernetes-list-type is map',
        ),
      );
    if (items && items.type !== 'object')
      out.schema.push(
        fieldErrors.invalid(
          child(child(path, 'items'), 'type'),
          items.type ?? '',
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    if (items && items.type === 'object') {
      const seen = new Set<string>();
      for (const k of mapKeys) {
        const p = items.properties?.[k];
        if (p) {
          if (p.type === 'array' || p.type === 'object')
            out.schema.push(
              fieldErrors.invalid(
                child(key(child(child(path, 'items'), 'properties'), k), 'type'),
                items.type,
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
        } else {
          out.schema.push(
            fieldErrors.invalid(
              child(path, 'x-kubernetes-list-map-keys'),
              mapKeys,
              'entries must all be names of item properties',
            ),
          );
        }
        if (seen.has(k))
          out.schema.push(
            fieldErrors.invalid(
              child(path, 'x-kubernetes-list-map-keys'),
              mapKeys,
              'must not contain duplicate entries',
            ),
          );
        seen.add(k);
      }
    }
  }
  // requireMapListKeysMapSetValidation
  if (items && (listType === 'set' || listType === 'map')) {
    if (items.nullable)
      out.schema.push(
        fieldErrors.forbidden(
          child(child(path, 'items'), 'nullable'),
          `cannot be nullable when x-kubernetes-list-type is ${listType}`,
        ),
      );
    if (listType === 'map') {
      const req = new Set(items.required ?? []);
      for (const k of mapKeys) {
        const p = items.properties?.[k];
        if (!p) continue;
        if (!req.has(k) && p.default === undefined)
          out.schema.push(
            fieldErrors.required(
              child(key(child(child(path, 'items'), 'properties'), k), 'default'),
              'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
            ),
          );
        if (p.nullable)
          out.schema.push(
            fieldErrors.forbidden(
              child(key(child(child(path, 'items'), 'properties'), k), 'nullable'),
              'this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
            ),
          );
      }
    }
  }
  const rules = s['x-kubernetes-validations'] ?? [];
  if (rules.length > 0) {
    const rp = (i: number, c: string) => child(idx(child(path, 'x-kubernetes-validations'), i), c);
    rules.forEach((rule, i) => {
      const r = (rule.rule ?? '').trim();
      const msg = (rule.message ?? '').trim();
      if (r.length === 0) out.schema.push(fieldErrors.required(rp(i, 'rule'), 'rule is not specified'));
      else if ((rule.message ?? '').length > 0 && msg.length === 0)
        out.schema.push(
          fieldErrors.invalid(rp(i, 'message'), rule.message, 'message must be non-empty if specified'),
        );
      else if (hasNewlines(msg))
        out.schema.push(
          fieldErrors.invalid(rp(i, 'message'), rule.message, 'message must not contain line breaks'),
        );
      else if (hasNewlines(r) && msg.length === 0)
        out.schema.push(
          fieldErrors.required(rp(i, 'message'), 'message must be specified if rule contains line breaks'),
        );
      if ((rule.messageExpression ?? '').length > 0 && (rule.messageExpression ?? '').trim().length === 0)
        out.schema.push(
          fieldErrors.required(
            rp(i, 'messageExpression'),
            'messageExpression must be non-empty if specified',
          ),
        );
      if (rule.reason !== undefined && !SUPPORTED_REASONS.includes(rule.reason))
        out.schema.push(fieldErrors.notSupported(rp(i, 'reason'), rule.reason, SUPPORTED_REASONS));
      const fp = rule.fieldPath ?? '';
      if (fp.length > 0 && fp.trim().length === 0)
        out.schema.push(
          fieldErrors.invalid(rp(i, 'fieldPath'), fp, 'fieldPath must be non-empty if specified'),
        );
      if (hasNewlines(fp))
        out.schema.push(
          fieldErrors.invalid(rp(i, 'fieldPath'), fp, 'fieldPath must not contain line breaks'),
        );
      if (fp.length > 0) {
        let valid = true;
        try {
          valid = 'path' in validFieldPath(fp, toStructural(s));
        } catch {
          valid = true;
        }
        if (!valid)
          out.schema.push(fieldErrors.invalid(rp(i, 'fieldPath'), fp, 'fieldPath must be a valid path'));
      }
    });
    if (out.schema.length === 0 && cel) {
      const compiled = cel.compiler.compile(cel.node);
      compiled.forEach((cr, i) => {
        const rule = rules[i];
        if (!rule) return;
        const cost = cr.maxCost * cel.cardinality;
        if (cost > STATIC_ESTIMATED_COST_LIMIT)
          out.cel.push(
            fieldErrors.forbidden(
              rp(i, 'rule'),
              costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT),
            ),
          );
        cel.total.cost += cost;
        cel.total.expensive.push({ path: rp(i, 'rule'), cost });
        if (cr.error) {
          if (cr.error.type === 'required')
            out.cel.push(fieldErrors.required(rp(i, 'rule'), cr.error.detail));
          else out.cel.push(fieldErrors.invalid(rp(i, 'rule'), goValidationRule(rule), cr.error.detail));
        }
        if (cr.messageExpressionError)
          out.cel.push(
            fieldErrors.invalid(
              rp(i, 'messageExpression'),
              goValidationRule(rule),
              cr.messageExpressionError,
            ),
          );
        else if (cr.runMessage) {
          const mcost = cr.messageMaxCost * cel.cardinality;
          if (mcost > STATIC_ESTIMATED_COST_LIMIT)
            out.cel.push(
              fieldErrors.forbidden(
                rp(i, 'messageExpression'),
                costErrorMessage('estimated messageExpression cost', mcost, STATIC_ESTIMATED_COST_LIMIT),
              ),
            );
          cel.total.cost += mcost;
        }
        if (cr.usesOldSelf) {
          if (ssv.uncorrelatable !== undefined)
            out.cel.push(
              fieldErrors.invalid(
                rp(i, 'rule'),
                rule.rule,
                `oldSelf cannot be used on the uncorrelatable portion of the schema within ${ssv.uncorrelatable}`,
              ),
            );
        } else if (rule.optionalOldSelf !== undefined && !cr.error) {
          out.cel.push(
            fieldErrors.invalid(
              rp(i, 'optionalOldSelf'),
              rule.optionalOldSelf,
              'may not be set if oldSelf is not used in rule',
            ),
          );
        }
      });
    }
  }
  return out;
}

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

function hasSchemaWith(s: JSONSchemaProps | undefined, pred: (s: JSONSchemaProps) => boolean): boolean {
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

function validateValidation(
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
        try {
          cel = {
            compiler: new CelSchemaCompiler(structural, true),
            node: structural,
            cardinality: 1,
            total: { cost: 0, expensive: [] },
          };
        } catch (e) {
          errs.push(
            fieldErrors.internal(
              child(sp, 'x-kubernetes-validations'),
              `internal error: failed to construct type information for x-kubernetes-validations rules: ${String(e)}`,
            ),
          );
        }
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

// ---------------------------------------------------------------------------------------------
// subresources, columns, selectable fields, conversion
// ---------------------------------------------------------------------------------------------

function validateSimpleJSONPath(s: string, path: string): StatusCause[] {
  if (s.length === 0) return [fieldErrors.invalid(path, s, 'must not be empty')];
  if (s[0] !== '.') return [fieldErrors.invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

function validateSubresources(sr: CustomResourceSubresources | undefined, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  const scale = sr?.scale;
  if (!scale) return errs;
  const spec = scale.specReplicasPath ?? '';
  if (spec.length === 0) errs.push(fieldErrors.required(`${path}.scale.specReplicasPath`));
  else {
    const e = validateSimpleJSONPath(spec, `${path}.scale.specReplicasPath`);
    if (e.length > 0) errs.push(...e);
    else if (!spec.startsWith('.spec.'))
      errs.push(
        fieldErrors.invalid(`${path}.scale.specReplicasPath`, spec, 'should be a json path under .spec'),
      );
  }
  const status = scale.statusReplicasPath ?? '';
  if (status.length === 0) errs.push(fieldErrors.required(`${path}.scale.statusReplicasPath`));
  else {
    const e = validateSimpleJSONPath(status, `${path}.scale.statusReplicasPath`);
    if (e.length > 0) errs.push(...e);
    else if (!status.startsWith('.status.'))
      errs.push(
        fieldErrors.invalid(
          `${path}.scale.statusReplicasPath`,
          status,
          'should be a json path under .status',
        ),
      );
  }
  const sel = scale.labelSelectorPath;
  if (sel) {
    const e = validateSimpleJSONPath(sel, `${path}.scale.labelSelectorPath`);
    if (e.length > 0) errs.push(...e);
    else if (!sel.startsWith('.spec.') && !sel.startsWith('.status.'))
      errs.push(
        fieldErrors.invalid(
          `${path}.scale.labelSelectorPath`,
          sel,
          'should be a json path under either .spec or .status',
        ),
      );
  }
  return errs;
}

function validateColumn(col: CustomResourceColumnDefinition, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  if (!col.name) errs.push(fieldErrors.required(child(path, 'name')));
  if (!col.type)
    errs.push(fieldErrors.required(child(path, 'type'), `must be one of ${PRINTER_COLUMN_TYPES}`));
  else if (!PRINTER_COLUMN_TYPES.split(',').includes(col.type))
    errs.push(fieldErrors.invalid(child(path, 'type'), col.type, `must be one of ${PRINTER_COLUMN_TYPES}`));
  if (col.format && !PRINTER_COLUMN_FORMATS.split(',').includes(col.format))
    errs.push(
      fieldErrors.invalid(child(path, 'format'), col.format, `must be one of ${PRINTER_COLUMN_FORMATS}`),
    );
  if (!col.jsonPath) errs.push(fieldErrors.required(child(path, 'JSONPath')));
  else errs.push(...validateSimpleJSONPath(col.jsonPath, child(path, 'JSONPath')));
  if (col.priority !== undefined && col.priority < 0)
    errs.push(
      fieldErrors.invalid(child(path, 'priority'), col.priority, 'must be greater than or equal to 0'),
    );
  return errs;
}

function validateSelectableFields(
  fields: Array<{ jsonPath: string }>,
  schema: Structural | undefined,
  path: string,
): StatusCause[] {
  const errs: StatusCause[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const p = idx(path, i);
    if (!f.jsonPath) {
      errs.push(fieldErrors.required(child(p, 'jsonPath')));
      return;
    }
    const r = schema
      ? validFieldPath(f.jsonPath, schema, false)
      : { error: 'does not refer to a valid field' };
    if ('error' in r) {
      errs.push(fieldErrors.invalid(child(p, 'jsonPath'), f.jsonPath, `is an invalid path: ${r.error}`));
      return;
    }
    if (r.path.split(/[.[]/)[0] === 'metadata')
      errs.push(
        fieldErrors.invalid(child(p, 'jsonPath'), f.jsonPath, 'must not point to fields in metadata'),
      );
    if (!['string', 'boolean', 'integer'].includes(r.schema.type))
      errs.push(
        fieldErrors.invalid(
          child(p, 'jsonPath'),
          f.jsonPath,
          'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        ),
      );
    if (unique.has(r.path)) errs.push(fieldErrors.duplicate(child(p, 'jsonPath'), f.jsonPath));
    else unique.add(r.path);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS)
    errs.push(fieldErrors.tooMany(path, unique.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

function validateWebhookURL(path: string, raw: string): StatusCause[] {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return [
      fieldErrors.invalid(
        path,
        raw,
        `url must be a valid URL: parse ${JSON.stringify(raw)}: invalid URI for request`,
      ),
    ];
  }
  const errs: StatusCause[] = [];
  if (u.protocol !== 'https:')
    errs.push(fieldErrors.invalid(path, raw, "'https' is the only allowed URL scheme"));
  if (!u.host) errs.push(fieldErrors.invalid(path, raw, 'host must be specified'));
  if (u.username || u.password)
    errs.push(fieldErrors.invalid(path, raw, 'user information is not permitted in the URL'));
  if (u.hash) errs.push(fieldErrors.invalid(path, raw, 'fragments are not permitted in the URL'));
  if (u.search) errs.push(fieldErrors.invalid(path, raw, 'query parameters are not permitted in the URL'));
  return errs;
}

function validateConversion(conv: InternalSpec['conversion'], path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  if (!conv) return errs;
  const strategy = conv.strategy ?? '';
  if (strategy === '') errs.push(fieldErrors.required(child(path, 'strategy')));
  else if (strategy !== 'None' && strategy !== 'Webhook')
    errs.push(fieldErrors.notSupported(child(path, 'strategy'), strategy, ['None', 'Webhook']));
  if (strategy === 'Webhook') {
    const cc = conv.webhookClientConfig;
    if (!cc)
      errs.push(
        fieldErrors.required(child(path, 'webhookClientConfig'), 'required when strategy is set to Webhook'),
      );
    else if ((cc.url === undefined) === (cc.service === undefined))
      errs.push(
        fieldErrors.required(child(path, 'webhookClientConfig'), 'exactly one of url or service is required'),
      );
    else if (cc.url !== undefined)
      errs.push(...validateWebhookURL(`${path}.webhookClientConfig.url`, cc.url));
    else if (cc.service) {
      const sp = `${path}.webhookClientConfig.service`;
      if (!cc.service.name) errs.push(fieldErrors.required(child(sp, 'name'), 'service name is required'));
      if (!cc.service.namespace)
        errs.push(fieldErrors.required(child(sp, 'namespace'), 'service namespace is required'));
      if (cc.service.path !== undefined && !cc.service.path.startsWith('/'))
        errs.push(fieldErrors.invalid(child(sp, 'path'), cc.service.path, "must start with a '/'"));
      const port = cc.service.port ?? 443;
      if (port < 1 || port > 65535)
        errs.push(
          fieldErrors.invalid(
            child(sp, 'port'),
            port,
            'port is not valid: must be between 1 and 65535, inclusive',
          ),
        );
    }
    const crv = conv.conversionReviewVersions ?? [];
    const vp = child(path, 'conversionReviewVersions');
    if (crv.length === 0) errs.push(fieldErrors.required(vp));
    else {
      const seen = new Set<string>();
      let accepted = false;
      crv.forEach((v, i) => {
        if (seen.has(v)) {
          errs.push(fieldErrors.invalid(idx(vp, i), v, 'duplicate version'));
          return;
        }
        seen.add(v);
        for (const m of isDNS1035Label(v)) errs.push(fieldErrors.invalid(idx(vp, i), v, m));
        if (v === 'v1' || v === 'v1beta1') accepted = true;
      });
      if (!accepted) errs.push(fieldErrors.invalid(vp, crv, 'must include at least one of v1, v1beta1'));
    }
  } else {
    if (conv.webhookClientConfig)
      errs.push(
        fieldErrors.forbidden(
          child(path, 'webhookClientConfig'),
          'should not be set when strategy is not set to Webhook',
        ),
      );
    if (conv.conversionReviewVersions?.length)
      errs.push(
        fieldErrors.forbidden(
          child(path, 'conversionReviewVersions'),
          'should not be set when strategy is not set to Webhook',
        ),
      );
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// names, versions, spec
// ---------------------------------------------------------------------------------------------

function validateNames(names: Partial<InternalSpec['names']> | undefined, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  if (!names) return errs;
  const dns = (v: string) => isDNS1035Label(v).join(',');
  if (names.plural && dns(names.plural))
    errs.push(fieldErrors.invalid(child(path, 'plural'), names.plural, dns(names.plural)));
  if (names.singular && dns(names.singular))
    errs.push(fieldErrors.invalid(child(path, 'singular'), names.singular, dns(names.singular)));
  if (names.kind && dns(names.kind.toLowerCase()))
    errs.push(
      fieldErrors.invalid(
        child(path, 'kind'),
        names.kind,
        `may have mixed case, but should otherwise match: ${dns(names.kind.toLowerCase())}`,
      ),
    );
  if (names.listKind && dns(names.listKind.toLowerCase()))
    errs.push(
      fieldErrors.invalid(
        child(path, 'listKind'),
        names.listKind,
        `may have mixed case, but should otherwise match: ${dns(names.listKind.toLowerCase())}`,
      ),
    );
  (names.shortNames ?? []).forEach((s, i) => {
    if (dns(s)) errs.push(fieldErrors.invalid(idx(child(path, 'shortNames'), i), s, dns(s)));
  });
  if (names.kind && names.kind === names.listKind)
    errs.push(
      fieldErrors.invalid(child(path, 'listKind'), names.listKind, 'kind and listKind may not be the same'),
    );
  (names.categories ?? []).forEach((c, i) => {
    if (dns(c)) errs.push(fieldErrors.invalid(idx(child(path, 'categories'), i), c, dns(c)));
  });
  return errs;
}

function validateDeprecationWarning(deprecated: boolean, warning: string | undefined): string[] {
  if (!deprecated && warning !== undefined) return ['can only be set for deprecated versions'];
  if (warning === undefined) return [];
  const errs: string[] = [];
  if (Buffer.byteLength(warning) > 256) errs.push('must be <= 256 characters long');
  if (warning.length === 0) errs.push('must not be an empty string');
  let i = 0;
  for (const ch of warning) {
    if (/[\p{Cc}]/u.test(ch)) {
      errs.push(`must only contain printable UTF-8 characters; control character found at index ${i}`);
      break;
    }
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      errs.push(`must only contain printable UTF-8 characters; non-printable character found at index ${i}`);
      break;
    }
    i += Buffer.byteLength(ch);
  }
  return errs;
}

// A Go %#v of []apiextensions.CustomResourceDefinitionVersion cannot be reproduced (it prints
// pointers); this shows the same type with the version names.
const goVersions = (versions: InternalVersion[]) =>
  rawFieldValue(
    `[]apiextensions.CustomResourceDefinitionVersion{${versions.map((v) => `apiextensions.CustomResourceDefinitionVersion{Name:${JSON.stringify(v.name)}, Served:${v.served}, Storage:${v.storage}, …}`).join(', ')}}`,
  );

function validateSpec(spec: InternalSpec, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  if (!spec.group) errs.push(fieldErrors.required(child(path, 'group')));
  else {
    const e = isDNS1123Subdomain(spec.group);
    if (e.length > 0) errs.push(fieldErrors.invalid(child(path, 'group'), spec.group, e.join(',')));
    else if (spec.group.split('.').length < 2)
      errs.push(
        fieldErrors.invalid(child(path, 'group'), spec.group, 'should be a domain with at least one dot'),
      );
  }
  if (!spec.scope) errs.push(fieldErrors.required(child(path, 'scope')));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced')
    errs.push(fieldErrors.notSupported(child(path, 'scope'), spec.scope, ['Cluster', 'Namespaced']));

  if (!spec.validation?.openAPIV3Schema) {
    spec.versions.forEach((v, i) => {
      if (!v.schema?.openAPIV3Schema)
        errs.push(
          fieldErrors.required(`${path}.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'),
        );
    });
  }
  const allSchemas = [
    spec.validation?.openAPIV3Schema,
    ...spec.versions.map((v) => v.schema?.openAPIV3Schema),
  ];
  if (spec.preserveUnknownFields && allSchemas.some((s) => hasSchemaWith(s, (x) => x.default !== undefined)))
    errs.push(
      fieldErrors.invalid(
        child(path, 'preserveUnknownFields'),
        true,
        'must be false in order to use defaults in the schema',
      ),
    );

  let storage = 0;
  const names = new Set<string>();
  let unique = true;
  const anyStatus = !!spec.subresources?.status || spec.versions.some((v) => !!v.subresources?.status);
  spec.versions.forEach((v, i) => {
    const vp = idx(child(path, 'versions'), i);
    if (v.storage) storage++;
    if (names.has(v.name)) unique = false;
    names.add(v.name);
    const dn = isDNS1035Label(v.name ?? '');
    if (dn.length > 0) errs.push(fieldErrors.invalid(child(vp, 'name'), v.name ?? '', dn.join(',')));
    const subresources = spec.versions.some((x) => x.subresources !== undefined)
      ? v.subresources
      : spec.subresources;
    for (const m of validateDeprecationWarning(v.deprecated === true, v.deprecationWarning))
      errs.push(fieldErrors.invalid(child(vp, 'deprecationWarning'), v.deprecationWarning ?? null, m));
    errs.push(...validateValidation(v.schema, !!subresources?.status, child(vp, 'schema')));
    errs.push(...validateSubresources(v.subresources, child(vp, 'subresources')));
    (v.additionalPrinterColumns ?? []).forEach((c, j) => {
      errs.push(...validateColumn(c, idx(child(vp, 'additionalPrinterColumns'), j)));
    });
    if (v.selectableFields?.length) {
      const s = v.schema?.openAPIV3Schema;
      if (!s)
        errs.push(
          fieldErrors.invalid(
            child(vp, 'selectableFields'),
            '',
            'selectableFields may only be set when version.schema.openAPIV3Schema is not included',
          ),
        );
      else {
        let st: Structural | undefined;
        try {
          st = toStructural(s);
        } catch (e) {
          errs.push(
            fieldErrors.invalid(child(vp, 'schema.openAPIV3Schema'), '', String((e as Error).message)),
          );
        }
        errs.push(...validateSelectableFields(v.selectableFields, st, child(vp, 'selectableFields')));
      }
    }
  });
  if (!unique)
    errs.push(
      fieldErrors.invalid(
        child(path, 'versions'),
        goVersions(spec.versions),
        'must contain unique version names',
      ),
    );
  if (storage !== 1)
    errs.push(
      fieldErrors.invalid(
        child(path, 'versions'),
        goVersions(spec.versions),
        'must have exactly one version marked as storage version',
      ),
    );
  if (spec.version) {
    const dn = isDNS1035Label(spec.version);
    if (dn.length > 0) errs.push(fieldErrors.invalid(child(path, 'version'), spec.version, dn.join(',')));
  }
  const n = spec.names ?? {};
  if (!n.plural) errs.push(fieldErrors.required(`${path}.names.plural`));
  if (!n.singular) errs.push(fieldErrors.required(`${path}.names.singular`));
  if (!n.kind) errs.push(fieldErrors.required(`${path}.names.kind`));
  if (!n.listKind) errs.push(fieldErrors.required(`${path}.names.listKind`));
  errs.push(...validateNames(n, child(path, 'names')));
  errs.push(...validateValidation(spec.validation, anyStatus, child(path, 'validation')));
  errs.push(...validateSubresources(spec.subresources, child(path, 'subresources')));
  (spec.additionalPrinterColumns ?? []).forEach((c, j) => {
    errs.push(...validateColumn(c, idx(child(path, 'additionalPrinterColumns'), j)));
  });
  if (spec.selectableFields?.length) {
    const s = spec.validation?.openAPIV3Schema;
    if (!s)
      errs.push(
        fieldErrors.invalid(
          child(path, 'selectableFields'),
          '',
          'selectableFields may only be set when validations.schema is included',
        ),
      );
    else {
      let st: Structural | undefined;
      try {
        st = toStructural(s);
      } catch (e) {
        errs.push(
          fieldErrors.invalid(child(path, 'schema.openAPIV3Schema'), '', String((e as Error).message)),
        );
      }
      errs.push(...validateSelectableFields(spec.selectableFields, st, child(path, 'selectableFields')));
    }
  }
  if (spec.conversion && spec.conversion.strategy !== 'None' && spec.preserveUnknownFields)
    errs.push(
      fieldErrors.invalid(
        `${path}.conversion.strategy`,
        spec.conversion.strategy ?? '',
        'must be None if spec.preserveUnknownFields is true',
      ),
    );
  errs.push(...validateConversion(spec.conversion, child(path, 'conversion')));
  return errs;
}

/** True for the groups that need API review approval (`*.k8s.io`, `*.kubernetes.io`). */
export const isProtectedCommunityGroup = (group: string): boolean =>
  group === 'k8s.io' ||
  group.endsWith('.k8s.io') ||
  group === 'kubernetes.io' ||
  group.endsWith('.kubernetes.io');

/** How a protected group's `api-approved.kubernetes.io` annotation reads (`apihelpers.GetAPIApprovalState`). */
export type ApiApprovalState = 'missing' | 'bypassed' | 'approved' | 'invalid';

/**
 * The approval state of a CRD's annotations and the reason kube gives for it — what the
 * `KubernetesAPIApprovalPolicyConformant` condition reports for a protected group.
 *
 * @example
 * ```ts
 * apiApprovalState({ 'api-approved.kubernetes.io': 'unapproved, experimental' });
 * // ['bypassed', 'not approved: "unapproved, experimental"']
 * ```
 */
export function apiApprovalState(
  annotations: Record<string, string> | undefined,
): [ApiApprovalState, string] {
  const a = annotations?.[APPROVAL_ANNOTATION] ?? '';
  if (a.length === 0)
    return [
      'missing',
      `protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
    ];
  if (a.startsWith('unapproved')) return ['bypassed', `not approved: "${a}"`];
  try {
    const u = new URL(a);
    if (u.host && u.protocol) return ['approved', `approved in ${a}`];
  } catch {
    // fall through
  }
  return [
    'invalid',
    `protected groups must have approval annotation "${APPROVAL_ANNOTATION}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  ];
}

function validateAPIApproval(
  crd: CustomResourceDefinition,
  old: CustomResourceDefinition | undefined,
): StatusCause[] {
  if (!isProtectedCommunityGroup(crd.spec?.group ?? '')) return [];
  const [state, reason] = apiApprovalState(crd.metadata?.annotations);
  if (old && apiApprovalState(old.metadata?.annotations)[0] === state) return [];
  const p = `metadata.annotations[${APPROVAL_ANNOTATION}]`;
  if (state === 'missing') return [fieldErrors.required(p, reason)];
  if (state === 'invalid')
    return [fieldErrors.invalid(p, crd.metadata?.annotations?.[APPROVAL_ANNOTATION] ?? '', reason)];
  return [];
}

function storedVersionsFor(crd: CustomResourceDefinition, old?: CustomResourceDefinition): string[] | null {
  const stored = [...(old?.status?.storedVersions ?? crd.status?.storedVersions ?? [])];
  const sv = crd.spec?.versions?.find((v) => v.storage);
  if (sv && !stored.includes(sv.name)) stored.push(sv.name);
  return stored.length > 0 ? stored : null;
}

function validateStoredVersions(
  stored: string[] | null,
  versions: InternalVersion[],
  path: string,
): StatusCause[] {
  if (!stored || stored.length === 0)
    return [
      fieldErrors.invalid(
        path,
        rawFieldValue(goStringSlice(stored)),
        'must have at least one stored version',
      ),
    ];
  const errs: StatusCause[] = [];
  const remaining = new Map(stored.map((v, i) => [v, i]));
  for (const v of versions) {
    const ok = remaining.has(v.name);
    if (v.storage && !ok)
      errs.push(
        fieldErrors.invalid(
          path,
          rawFieldValue(goStringSlice(stored)),
          `must have the storage version ${v.name}`,
        ),
      );
    if (ok) remaining.delete(v.name);
  }
  for (const [v, i] of remaining)
    errs.push(
      fieldErrors.invalid(
        idx(path, i),
        v,
        `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`,
      ),
    );
  return errs;
}

const isEstablished = (crd: CustomResourceDefinition | undefined) =>
  crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true;

/**
 * Validates a CustomResourceDefinition (apiextensions.k8s.io/v1) on create, or on update when
 * `old` is given, returning kube's causes in kube's order: metadata (name must be
 * `<plural>.<group>`), spec (group, scope, versions, names, schemas — structural, defaults, CEL —
 * subresources, printer columns, selectable fields, conversion), status, stored versions, the
 * API approval annotation of protected groups and `preserveUnknownFields`. On update, scope and
 * kind (once Established), group and plural are immutable.
 *
 * The CRD is not modified; v1 defaults (singular, listKind, conversion strategy) are applied to
 * a copy first, as the API server defaults before it validates.
 *
 * @example
 * ```ts
 * const causes = validateCustomResourceDefinition(crd);
 * if (causes.length > 0)
 *   throw ApiError.invalid({ group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' }, crd.metadata.name, causes);
 * ```
 */
export function validateCustomResourceDefinition(
  crdIn: CustomResourceDefinition,
  oldIn?: CustomResourceDefinition,
): StatusCause[] {
  const crd = deepCopyJSON(crdIn);
  if (!isObj(crd.spec)) (crd as { spec: unknown }).spec = {};
  crd.spec.versions ??= [];
  crd.spec.names ??= {} as CustomResourceDefinition['spec']['names'];
  setCustomResourceDefinitionDefaults(crd);
  const old = oldIn ? deepCopyJSON(oldIn) : undefined;
  if (old?.spec) setCustomResourceDefinitionDefaults(old);
  const spec = toInternal(crd);
  const errs: StatusCause[] = [];

  if (old) {
    errs.push(...validateObjectMetaUpdate(crd.metadata, old.metadata));
  } else {
    const name = crd.metadata?.name ?? '';
    const metaErrs = validateObjectMeta(crd.metadata, {
      namespaced: false,
      nameValidation: 'subdomain',
      create: false,
    });
    const required = `${spec.names?.plural ?? ''}.${spec.group}`;
    const extra = (field: string, value: string) =>
      fieldErrors.invalid(field, value, 'must be spec.names.plural+"."+spec.group');
    const out: StatusCause[] = [];
    let placedName = false;
    const gen = crd.metadata?.generateName ?? '';
    for (let i = 0; i < metaErrs.length; i++) {
      const c = metaErrs[i] as StatusCause;
      out.push(c);
      const next = metaErrs[i + 1];
      if (
        c.field === 'metadata.generateName' &&
        next?.field !== 'metadata.generateName' &&
        gen &&
        gen !== required
      )
        out.push(extra('metadata.generateName', gen));
      if (c.field === 'metadata.name' && next?.field !== 'metadata.name' && name !== required) {
        out.push(extra('metadata.name', name));
        placedName = true;
      }
    }
    if (!placedName && name && name !== required) {
      const at = out.findIndex(
        (c) => !c.field?.startsWith('metadata.generateName') && !c.field?.startsWith('metadata.name'),
      );
      out.splice(at < 0 ? out.length : at, 0, extra('metadata.name', name));
    }
    errs.push(...out);
  }

  const specErrs = validateSpec(spec, 'spec');
  errs.push(...specErrs);
  if (old) {
    const os = old.spec;
    if (isEstablished(old)) {
      if (spec.scope !== os.scope)
        errs.push(fieldErrors.invalid('spec.scope', spec.scope, 'field is immutable'));
      if (spec.names.kind !== os.names?.kind)
        errs.push(fieldErrors.invalid('spec.names.kind', spec.names.kind ?? '', 'field is immutable'));
    }
    if (spec.group !== os.group)
      errs.push(fieldErrors.invalid('spec.group', spec.group, 'field is immutable'));
    if (spec.names.plural !== os.names?.plural)
      errs.push(fieldErrors.invalid('spec.names.plural', spec.names.plural ?? '', 'field is immutable'));
  }
  errs.push(...validateNames(crd.status?.acceptedNames, 'status.acceptedNames'));
  errs.push(...validateStoredVersions(storedVersionsFor(crd, old), spec.versions, 'status.storedVersions'));
  errs.push(...validateAPIApproval(crd, old));
  if (!(old?.spec?.preserveUnknownFields === true) && crd.spec.preserveUnknownFields === true)
    errs.push(
      fieldErrors.invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  return errs;
}
