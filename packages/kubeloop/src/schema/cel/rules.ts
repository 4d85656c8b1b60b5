import type { ValidationRule } from '../types.js';
import { isObj } from '../util.js';

/** Per-call runtime cost limit of one rule evaluation (`celconfig.PerCallLimit`). */
export const PER_CALL_LIMIT = 1_000_000;
/** Runtime cost budget of all rules of one object (`celconfig.RuntimeCELCostBudget`). */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** Static cost limit of one rule (`StaticEstimatedCostLimit`). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Static cost limit of all rules of a CRD schema (`StaticEstimatedCRDCostLimit`). */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** The CEL field name of a property (`apiextensions` escaping: `__dash__`, `__dot__`, `__namespace__`, …). */
export function escapeCelName(name: string): string | undefined {
  // The common case (a plain identifier) needs no escaping: skip the replacements.
  if (PLAIN_IDENTIFIER.test(name) && !name.includes('__')) return RESERVED.has(name) ? `__${name}__` : name;
  if (!/^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/.test(name)) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  return name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__');
}

const PLAIN_IDENTIFIER = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** One compiled rule of a schema node. */
export interface CompiledRule {
  rule: ValidationRule;
  /** Compile error as kube reports it on the CRD (`required` for a rule kube cannot compile at all). */
  error?: { type: 'invalid' | 'required'; detail: string };
  messageExpressionError?: string;
  usesOldSelf: boolean;
  /** `fieldPath` normalized to a field path suffix (`spec.foo`, `foo[bar]`). */
  fieldPath: string;
  /** Estimated maximum cost of one evaluation. */
  maxCost: number;
  /** The rule's cost when it does not depend on the sizes of the values (computed once). */
  fixedCost?: number;
  /** Estimated maximum cost of the messageExpression. */
  messageMaxCost: number;
  run?: (vars: Record<string, unknown>) => unknown;
  runMessage?: (vars: Record<string, unknown>) => unknown;
  ast?: AstNode;
  /** The checked AST of the messageExpression, when it compiled. */
  messageAst?: AstNode;
}

export interface AstNode {
  op: string;
  args: unknown;
  range?: { start: number; end: number };
}

export const isAst = (x: unknown): x is AstNode => isObj(x) && typeof (x as { op?: unknown }).op === 'string';

/**
 * Collects the fields an expression selects from variable `name` (`self.a`, `has(self.b)`);
 * false when it uses the variable in any other way (`self == oldSelf`, `self.all(…)`), which
 * needs the whole value.
 */
function selectedFields(n: unknown, name: string, out: Set<string>): boolean {
  if (Array.isArray(n)) return n.every((x) => selectedFields(x, name, out));
  if (!isAst(n)) return true;
  const a = n.args;
  if (n.op === '.' && Array.isArray(a) && isAst(a[0]) && a[0].op === 'id' && a[0].args === name) {
    if (typeof a[1] !== 'string') return false;
    out.add(a[1]);
    return true;
  }
  if (n.op === 'id') return a !== name;
  return selectedFields(a, name, out);
}

/** The fields of `name` a node's rules read; undefined when one of them needs the whole value. */
export function fieldsRead(rules: readonly CompiledRule[], name: string): Set<string> | undefined {
  const out = new Set<string>();
  for (const r of rules) {
    if (r.ast && !selectedFields(r.ast, name, out)) return undefined;
    if (r.messageAst && !selectedFields(r.messageAst, name, out)) return undefined;
  }
  return out;
}
