/**
 * Compilation of the rules of a schema node: type-checked against `self` (and `oldSelf`),
 * cost-estimated, with kube's compile error messages.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { rawFieldValue } from '../../api/validation.js';
import type { Structural } from '../structural.js';
import type { ValidationRule } from '../types.js';
import { estimate, maxCardinality, schemaSize, usesOldSelf, validFieldPath } from './cost.js';
import { type CelJsError, formatCompileIssue } from './errors.js';
import type { AstNode, CompiledRule } from './rules.js';
import { TypeBuilder } from './values.js';

// ---------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------

/** CEL compilation of a whole structural schema: one typed environment, rules compiled per node. */
export class CelSchemaCompiler {
  private readonly types = new TypeBuilder();
  private readonly nodeTypes = new Map<Structural, string>();
  private readonly checkEnvs = new Map<string, Environment>();
  private readonly evalEnv: Environment;
  private frozen = false;

  constructor(
    readonly root: Structural,
    readonly isResourceRoot = true,
  ) {
    this.register(root, isResourceRoot);
    this.evalEnv = this.types.env.clone();
    this.evalEnv.registerVariable('self', 'dyn');
    this.evalEnv.registerVariable('oldSelf', 'dyn');
    this.frozen = true;
  }

  private register(s: Structural, isRoot: boolean): void {
    this.nodeTypes.set(s, isRoot ? this.types.rootType(s) : this.types.typeOf(s));
    if (s.items) this.register(s.items, false);
    for (const p of Object.values(s.properties ?? {})) this.register(p, false);
    if (s.additionalProperties?.schema) this.register(s.additionalProperties.schema, false);
  }

  private checkEnv(type: string, optionalOld: boolean): Environment {
    const key = `${type}|${optionalOld}`;
    let env = this.checkEnvs.get(key);
    if (!env) {
      env = this.types.env.clone();
      env.registerVariable('self', type);
      env.registerVariable('oldSelf', optionalOld ? `optional<${type}>` : type);
      this.checkEnvs.set(key, env);
    }
    return env;
  }

  /** Compiles the rules of one node of the schema. */
  compile(s: Structural, cardinality = 1): CompiledRule[] {
    if (!this.frozen) throw new Error('compiler not initialized');
    const type = this.nodeTypes.get(s) ?? this.types.typeOf(s);
    const sizes = schemaSize(s);
    return (s.validations ?? []).map((rule) => {
      const out: CompiledRule = { rule, usesOldSelf: false, fieldPath: '', maxCost: 0, messageMaxCost: 0 };
      if (rule.fieldPath) {
        const fp = validFieldPath(rule.fieldPath, s);
        if ('path' in fp) out.fieldPath = fp.path;
      }
      const src = rule.rule ?? '';
      if (src.trim() === '') return out;
      const env = this.checkEnv(type, rule.optionalOldSelf === true);
      try {
        const parsed = env.parse(src);
        const res = parsed.check();
        if (!res.valid) {
          out.error = {
            type: 'invalid',
            detail: `compilation failed: ${formatCompileIssue(src, res.error as unknown as CelJsError)}`,
          };
          return out;
        }
        if (res.type !== 'bool') {
          out.error = { type: 'invalid', detail: 'cel expression must evaluate to a bool' };
          return out;
        }
        const ast = parsed.ast as unknown as AstNode;
        out.ast = ast;
        out.usesOldSelf = usesOldSelf(ast);
        out.maxCost = estimate(ast, sizes, maxCardinality(s)).cost * cardinality;
        // A rule whose cost is the same for empty and for huge values has one cost: no need to
        // estimate it again for every object.
        const small = estimate(ast, () => 0, 0).cost;
        if (small === estimate(ast, () => 1e9, 1e9).cost) out.fixedCost = small;
        const evalParsed = this.evalEnv.parse(src);
        out.run = (vars) => evalParsed(vars);
      } catch (e) {
        out.error = {
          type: 'invalid',
          detail: `compilation failed: ${formatCompileIssue(src, e as CelJsError)}`,
        };
        return out;
      }
      if (rule.messageExpression?.trim()) {
        const msrc = rule.messageExpression;
        try {
          const parsed = this.checkEnv(type, false).parse(msrc);
          const res = parsed.check();
          if (!res.valid)
            out.messageExpressionError = `messageExpression compilation failed: ${formatCompileIssue(msrc, res.error as unknown as CelJsError)}`;
          else if (res.type !== 'string')
            out.messageExpressionError = 'messageExpression must evaluate to a string';
          else {
            out.messageMaxCost = estimate(parsed.ast, sizes, maxCardinality(s)).cost * cardinality;
            out.messageAst = parsed.ast as unknown as AstNode;
            const evalParsed = this.evalEnv.parse(msrc);
            out.runMessage = (vars) => evalParsed(vars);
          }
        } catch (e) {
          out.messageExpressionError = `messageExpression compilation failed: ${formatCompileIssue(msrc, e as CelJsError)}`;
        }
      }
      return out;
    });
  }
}

/** Renders a rule as Go's `%#v` of `apiextensions.ValidationRule` (kube's bad value in CRD errors). */
export function goValidationRule(r: ValidationRule): ReturnType<typeof rawFieldValue> {
  const q = (s: string | undefined) => JSON.stringify(s ?? '');
  const reason =
    r.reason === undefined
      ? '(*apiextensions.FieldValueErrorReason)(nil)'
      : '(*apiextensions.FieldValueErrorReason)(0xc000000000)';
  const opt = r.optionalOldSelf === undefined ? '(*bool)(nil)' : '(*bool)(0xc000000000)';
  return rawFieldValue(
    `apiextensions.ValidationRule{Rule:${q(r.rule)}, Message:${q(r.message)}, MessageExpression:${q(r.messageExpression)}, Reason:${reason}, FieldPath:${q(r.fieldPath)}, OptionalOldSelf:${opt}}`,
  );
}
