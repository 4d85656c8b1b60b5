/**
 * Validation of a CRD's OpenAPI v3 schema node by node (apiextensions' `ValidateCustomResourceDefinitionOpenAPISchema`):
 * types, formats, enums, list/map types, x-kubernetes-* extensions, CEL rules and their cost.
 */
import type { StatusCause } from '../../api/status.js';
import { fieldErrors } from '../../api/validation.js';
import {
  type CelSchemaCompiler,
  costErrorMessage,
  goValidationRule,
  maxCardinality,
  STATIC_ESTIMATED_COST_LIMIT,
  validFieldPath,
} from '../cel/validator.js';
import { type Structural, toStructural } from '../structural.js';
import type { JSONSchemaProps } from '../types.js';
import { goBadValue, isObj } from '../util.js';
import { child, idx, key, OPENAPI_V3_TYPES, SUPPORTED_REASONS } from './internal.js';

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

export interface CelContext {
  /** The schema's compiler, built on first use (throws what building it threw). */
  compiler: () => CelSchemaCompiler;
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

export const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

export function validateOpenAPISchema(
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
    let compiler: CelSchemaCompiler | undefined;
    if (out.schema.length === 0 && cel) {
      try {
        compiler = cel.compiler();
      } catch (e) {
        out.cel.push(
          fieldErrors.internal(
            child(path, 'x-kubernetes-validations'),
            `internal error: failed to construct type information for x-kubernetes-validations rules: ${String(e)}`,
          ),
        );
      }
    }
    if (compiler && cel) {
      const compiled = compiler.compile(cel.node);
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
