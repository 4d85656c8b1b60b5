/**
 * `x-kubernetes-validations` (CEL) for CRD schemas, after apiextensions' `schema/cel`:
 * rules are type-checked against `self` typed from the schema (integers as `int`, numbers as
 * `double`, int-or-string as `dyn`, objects with their declared fields, date-time strings as
 * `timestamp`), compiled once per schema node (`compiler.ts`), and evaluated over the object tree with
 * `oldSelf` on updates (transition rules), `optionalOldSelf`, `fieldPath`, `reason`,
 * `messageExpression`, per-call and per-object cost limits and kube's error messages.
 */
import { Optional } from '@marcbachmann/cel-js';
import { compareCodePoints } from '../../api/labels.js';
import type { StatusCause } from '../../api/status.js';
import { fieldErrors } from '../../api/validation.js';
import type { Structural } from '../structural.js';
import type { ValidationRule } from '../types.js';
import { deepEqualJSON, isObj } from '../util.js';
import { CelSchemaCompiler } from './compiler.js';
import { estimate, maxCardinality, valueSize } from './cost.js';
import { type CelJsError, celGoMessage } from './errors.js';
import { type CompiledRule, fieldsRead, PER_CALL_LIMIT, RUNTIME_COST_BUDGET } from './rules.js';

export type { CompiledRule } from './rules.js';

import { toCelValue } from './values.js';

// ---------------------------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------------------------

interface NodeValidator {
  s: Structural;
  rules: CompiledRule[];
  /** The fields of `self` / `oldSelf` the rules read (CEL names); undefined: the whole value. */
  selfFields?: ReadonlySet<string>;
  oldSelfFields?: ReadonlySet<string>;
  items?: NodeValidator;
  props?: Map<string, NodeValidator>;
  addl?: NodeValidator;
  isRoot: boolean;
}

/** Options of {@link CelValidator.validate}. */
export interface CelValidateOptions {
  /** Runtime cost budget for the whole object (default {@link RUNTIME_COST_BUDGET}). */
  budget?: number;
  /** Ratchet errors of unchanged values into these warnings instead of failing (update only). */
  warnings?: string[];
}

const ruleErrorString = (r: ValidationRule): string => (r.message?.trim() ? r.message.trim() : r.rule.trim());
const ruleMessageOrDefault = (r: ValidationRule): string =>
  r.message?.trim() ? r.message.trim() : `failed rule: ${ruleErrorString(r)}`;

function fieldErrorForReason(
  path: string,
  value: string,
  detail: string,
  reason: string | undefined,
): StatusCause {
  switch (reason) {
    case 'FieldValueForbidden':
      return fieldErrors.forbidden(path, detail);
    case 'FieldValueRequired':
      return fieldErrors.required(path, detail);
    case 'FieldValueDuplicate':
      return fieldErrors.duplicate(path, value);
    default:
      return fieldErrors.invalid(path, value, detail);
  }
}

const childField = (base: string, name: string) => (base ? `${base}.${name}` : name);

/**
 * Runtime validator of all `x-kubernetes-validations` of a schema, built once per schema.
 *
 * @example
 * ```ts
 * const v = new CelValidator(toStructural(schema));
 * v.validate(newObj, oldObj); // StatusCause[]
 * ```
 */
export class CelValidator {
  readonly compiler: CelSchemaCompiler;
  private readonly tree: NodeValidator | undefined;

  constructor(root: Structural, isResourceRoot = true) {
    this.compiler = new CelSchemaCompiler(root, isResourceRoot);
    this.tree = this.build(root, isResourceRoot);
  }

  /** True when the schema has at least one rule. */
  get hasRules(): boolean {
    return this.tree !== undefined;
  }

  private build(s: Structural, isRoot: boolean): NodeValidator | undefined {
    const items = s.items ? this.build(s.items, false) : undefined;
    let props: Map<string, NodeValidator> | undefined;
    // apiextensions' CEL validator walks Go maps: sorted here, for the same order every time.
    const entries = Object.entries(s.properties ?? {}).sort(([a], [b]) => compareCodePoints(a, b));
    for (const [k, p] of entries) {
      const v = this.build(p, false);
      if (v) {
        props ??= new Map();
        props.set(k, v);
      }
    }
    const addl = s.additionalProperties?.schema
      ? this.build(s.additionalProperties.schema, false)
      : undefined;
    const rules = s.validations?.length ? this.compiler.compile(s) : [];
    if (rules.length === 0 && !items && !props && !addl) return undefined;
    const selfFields = fieldsRead(rules, 'self');
    const oldSelfFields = fieldsRead(rules, 'oldSelf');
    return {
      s,
      rules,
      isRoot,
      ...(selfFields && { selfFields }),
      ...(oldSelfFields && { oldSelfFields }),
      ...(items && { items }),
      ...(props && { props }),
      ...(addl && { addl }),
    };
  }

  /**
   * Evaluates every rule over `obj` (and `old` on updates), returning kube's causes. `path` is
   * the field path of `obj` (`''` for a whole resource, whose root errors read `<nil>`).
   */
  validate(obj: unknown, old?: unknown, opts: CelValidateOptions = {}, path = ''): StatusCause[] {
    const errs: StatusCause[] = [];
    if (!this.tree) return errs;
    const state = {
      budget: opts.budget ?? RUNTIME_COST_BUDGET,
      warnings: opts.warnings,
      update: old !== undefined,
    };
    this.walk(this.tree, path, obj, old, true, state, errs);
    return errs;
  }

  private walk(
    n: NodeValidator,
    path: string,
    obj: unknown,
    old: unknown,
    correlated: boolean,
    st: { budget: number; warnings: string[] | undefined; update: boolean },
    errs: StatusCause[],
  ): boolean {
    if (obj === null || obj === undefined) return true;
    if (n.rules.length > 0 && !this.evalNode(n, path, obj, old, correlated, st, errs)) return false;
    if (Array.isArray(obj) && n.items) {
      const oldArr = Array.isArray(old) ? old : undefined;
      const keys = n.s.listType === 'map' ? (n.s.listMapKeys ?? []) : undefined;
      for (let i = 0; i < obj.length; i++) {
        let o: unknown;
        if (keys && oldArr) {
          const item = obj[i];
          o = oldArr.find((x) => isObj(x) && isObj(item) && keys.every((k) => deepEqualJSON(x[k], item[k])));
        }
        if (!this.walk(n.items, `${path}[${i}]`, obj[i], o, keys !== undefined && o !== undefined, st, errs))
          return false;
      }
    } else if (isObj(obj)) {
      const oldObj = isObj(old) && n.s.mapType !== 'atomic' ? old : undefined;
      if (n.addl) {
        // The object's keys in sorted order (kube's walk over a Go map has none).
        for (const k of Object.keys(obj).sort(compareCodePoints)) {
          if (n.s.properties?.[k]) continue;
          if (!this.walk(n.addl, `${path}[${k}]`, obj[k], oldObj?.[k], oldObj !== undefined, st, errs))
            return false;
        }
      }
      if (n.props) {
        // Properties with rules, in sorted order (see build).
        for (const [k, sub] of n.props) {
          if (!Object.hasOwn(obj, k)) continue;
          if (!this.walk(sub, childField(path, k), obj[k], oldObj?.[k], oldObj !== undefined, st, errs))
            return false;
        }
      }
    }
    return true;
  }

  private evalNode(
    n: NodeValidator,
    path: string,
    obj: unknown,
    old: unknown,
    correlated: boolean,
    st: { budget: number; warnings: string[] | undefined; update: boolean },
    errs: StatusCause[],
  ): boolean {
    const type = n.s.type;
    const field = path || '<nil>';
    if (st.budget <= 0) {
      errs.push(
        fieldErrors.invalid(
          field,
          type,
          'validation failed due to running out of cost budget, no further validation rules will be run',
        ),
      );
      return false;
    }
    const self = toCelValue(obj, n.s, n.isRoot, n.selfFields);
    const oldSelf =
      old === undefined || old === null ? undefined : toCelValue(old, n.s, n.isRoot, n.oldSelfFields);
    const unchanged = st.update && correlated && old !== undefined && deepEqualJSON(obj, old);
    const sizes = valueSize(obj);
    for (const c of n.rules) {
      if (c.error) {
        errs.push(fieldErrors.invalid(field, type, `rule compile error: ${c.error.detail}`));
        continue;
      }
      if (!c.run || !c.ast) continue;
      const optional = c.rule.optionalOldSelf === true;
      if (c.usesOldSelf && oldSelf === undefined && !optional) continue;
      const vars = {
        self,
        oldSelf: optional ? (oldSelf === undefined ? Optional.none() : Optional.of(oldSelf)) : oldSelf,
      };
      const cost = c.fixedCost ?? estimate(c.ast, sizes, maxCardinality(n.s)).cost;
      if (cost > PER_CALL_LIMIT) {
        errs.push(
          fieldErrors.invalid(
            field,
            type,
            `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(c.rule)}`,
          ),
        );
        return false;
      }
      if (cost > st.budget) {
        errs.push(
          fieldErrors.invalid(
            field,
            type,
            'validation failed due to running out of cost budget, no further validation rules will be run',
          ),
        );
        return false;
      }
      st.budget -= cost;
      let result: unknown;
      try {
        result = c.run(vars);
      } catch (e) {
        const msg = celGoMessage(e as CelJsError, 'eval');
        if (msg === 'no such overload')
          errs.push(
            fieldErrors.invalid(
              field,
              type,
              `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(c.rule)}`,
            ),
          );
        else
          errs.push(fieldErrors.invalid(field, type, `${msg} evaluating rule: ${ruleErrorString(c.rule)}`));
        continue;
      }
      if (result === true) continue;
      const at = c.fieldPath ? childField(path, c.fieldPath) : field;
      let detail = ruleMessageOrDefault(c.rule);
      if (c.runMessage) {
        try {
          const m = c.runMessage(vars);
          if (typeof m === 'string' && m.trim() !== '' && !/\n/.test(m.trim()) && m.trim().length <= 5120)
            detail = m.trim();
        } catch {
          // kube logs messageExpression failures and falls back to the rule's message.
        }
      }
      const cause = fieldErrorForReason(at, type, detail, c.rule.reason);
      if (!c.usesOldSelf && unchanged) st.warnings?.push(`${cause.field}: ${cause.message}`);
      else errs.push(cause);
    }
    return true;
  }
}

/** The cost error text of apiextensions (`getCostErrorMessage`). */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
export { CelSchemaCompiler, goValidationRule } from './compiler.js';
export { maxCardinality, validFieldPath } from './cost.js';
export {
  escapeCelName,
  PER_CALL_LIMIT,
  RUNTIME_COST_BUDGET,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from './rules.js';
export { toCelValue } from './values.js';
