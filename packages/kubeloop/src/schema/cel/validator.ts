/**
 * `x-kubernetes-validations` (CEL) for CRD schemas, after apiextensions' `schema/cel`:
 * rules are type-checked against `self` typed from the schema (integers as `int`, numbers as
 * `double`, int-or-string as `dyn`, objects with their declared fields, date-time strings as
 * `timestamp`), compiled once per schema node, and evaluated over the object tree with
 * `oldSelf` on updates (transition rules), `optionalOldSelf`, `fieldPath`, `reason`,
 * `messageExpression`, per-call and per-object cost limits and kube's error messages.
 */
import { Environment, Optional } from '@marcbachmann/cel-js';
import { compareCodePoints } from '../../api/labels.js';
import type { StatusCause } from '../../api/status.js';
import { fieldErrors, rawFieldValue } from '../../api/validation.js';
import type { Structural } from '../structural.js';
import type { ValidationRule } from '../types.js';
import { deepEqualJSON, isObj } from '../util.js';
import { type CelJsError, celGoMessage, formatCompileIssue } from './errors.js';
import { registerKubernetesLibraries } from './library.js';

/** Per-call runtime cost limit of one rule evaluation (`celconfig.PerCallLimit`). */
export const PER_CALL_LIMIT = 1_000_000;
/** Runtime cost budget of all rules of one object (`celconfig.RuntimeCELCostBudget`). */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** Static cost limit of one rule (`StaticEstimatedCostLimit`). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Static cost limit of all rules of a CRD schema (`StaticEstimatedCRDCostLimit`). */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

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

interface AstNode {
  op: string;
  args: unknown;
  range?: { start: number; end: number };
}

const isAst = (x: unknown): x is AstNode => isObj(x) && typeof (x as { op?: unknown }).op === 'string';

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
function fieldsRead(rules: readonly CompiledRule[], name: string): Set<string> | undefined {
  const out = new Set<string>();
  for (const r of rules) {
    if (r.ast && !selectedFields(r.ast, name, out)) return undefined;
    if (r.messageAst && !selectedFields(r.messageAst, name, out)) return undefined;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

class TypeBuilder {
  private n = 0;
  readonly env: Environment;
  private readonly names = new Map<Structural, string>();
  constructor() {
    this.env = registerKubernetesLibraries(
      new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false }),
    );
  }
  typeOf(s: Structural | undefined, withMeta = false): string {
    if (!s) return 'dyn';
    if (s.intOrString) return 'dyn';
    switch (s.type) {
      case 'string':
        if (s.format === 'byte') return 'bytes';
        if (s.format === 'duration') return 'google.protobuf.Duration';
        if (s.format === 'date' || s.format === 'date-time') return 'google.protobuf.Timestamp';
        return 'string';
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'boolean':
        return 'bool';
      case 'array':
        return `list<${this.typeOf(s.items)}>`;
      case 'object': {
        if (s.additionalProperties) return `map<string, ${this.typeOf(s.additionalProperties.schema)}>`;
        const meta = withMeta || s.embeddedResource;
        if (!s.properties && !meta)
          return s.preserveUnknownFields ? 'map<string, dyn>' : this.objectType(s, false);
        return this.objectType(s, meta);
      }
      default:
        return 'dyn';
    }
  }
  private objectType(s: Structural, meta: boolean): string {
    const key = meta ? (this.metaKeys.get(s) ?? s) : s;
    const hit = this.names.get(key);
    if (hit) return hit;
    const name = `Object${this.n++}`;
    this.names.set(key, name);
    const fields: Record<string, string> = {};
    for (const [k, p] of Object.entries(s.properties ?? {})) {
      const esc = escapeCelName(k);
      if (esc) fields[esc] = this.typeOf(p);
    }
    if (meta) {
      fields.apiVersion = 'string';
      fields.kind = 'string';
      fields.metadata = this.metaType();
    }
    this.env.registerType(name, { fields });
    return name;
  }
  private readonly metaKeys = new Map<Structural, Structural>();
  private metaName: string | undefined;
  private metaType(): string {
    if (!this.metaName) {
      this.metaName = `ObjectMeta${this.n++}`;
      this.env.registerType(this.metaName, { fields: { name: 'string', generateName: 'string' } });
    }
    return this.metaName;
  }
  /** Registers the root with apiVersion/kind/metadata (kube's `WithTypeAndObjectMeta`). */
  rootType(s: Structural): string {
    this.metaKeys.set(s, { ...s });
    return this.typeOf(s, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

const DurationCtor = (() => {
  const env = new Environment();
  return (env.evaluate('duration("1s")') as object).constructor as new (
    s: bigint,
    n: number,
  ) => unknown;
})();

function genericToCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(genericToCel);
  if (isObj(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = genericToCel(x);
    return out;
  }
  return v;
}

function parseDuration(s: string): unknown {
  const m = /^(-)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/.exec(s);
  if (!m) return s;
  const secs =
    Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0) + Number(m[5] ?? 0) / 1000;
  const sign = m[1] ? -1 : 1;
  return new DurationCtor(BigInt(Math.trunc(secs) * sign), Math.round((secs % 1) * 1e9) * sign);
}

const jsonKeys = new WeakMap<Structural, Map<string, string>>();

/** CEL field name → JSON property name of an object schema's properties (built once per node). */
function jsonKeysOf(s: Structural): Map<string, string> {
  let m = jsonKeys.get(s);
  if (!m) {
    m = new Map();
    for (const k of Object.keys(s.properties ?? {})) {
      const esc = escapeCelName(k);
      if (esc) m.set(esc, k);
    }
    jsonKeys.set(s, m);
  }
  return m;
}

/**
 * Converts a JSON value into CEL runtime values typed by the schema. `only` limits an object to
 * the fields (by their CEL names) the rules read, so that large objects are not converted whole.
 */
export function toCelValue(
  v: unknown,
  s: Structural | undefined,
  withMeta = false,
  only?: ReadonlySet<string>,
): unknown {
  if (v === null || v === undefined) return null;
  if (!s || s.intOrString) return genericToCel(v);
  switch (s.type) {
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v;
    case 'number':
      return v;
    case 'string':
      if (typeof v !== 'string') return v;
      if (s.format === 'date-time' || s.format === 'date') {
        const d = new Date(v);
        return Number.isNaN(d.getTime()) ? v : d;
      }
      if (s.format === 'duration') return parseDuration(v);
      if (s.format === 'byte') return new Uint8Array(Buffer.from(v, 'base64'));
      return v;
    case 'array':
      return Array.isArray(v) ? v.map((x) => toCelValue(x, s.items)) : v;
    case 'object': {
      if (!isObj(v)) return v;
      const out: Record<string, unknown> = {};
      const meta = withMeta || s.embeddedResource;
      if (only && s.properties) {
        // Convert just the fields the rules read (by their CEL names).
        const keys = jsonKeysOf(s);
        for (const name of only) {
          const k = keys.get(name) ?? name;
          if (!Object.hasOwn(v, k)) continue;
          const x = v[k];
          const prop = s.properties[k];
          if (meta && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) out[k] = genericToCel(x);
          else if (prop) out[name] = toCelValue(x, prop);
          else
            out[k] = s.additionalProperties ? toCelValue(x, s.additionalProperties.schema) : genericToCel(x);
        }
        return out;
      }
      for (const [k, x] of Object.entries(v)) {
        if (meta && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) {
          if (!only || only.has(k)) out[k] = genericToCel(x);
          continue;
        }
        const prop = s.properties?.[k];
        if (prop) {
          const esc = escapeCelName(k);
          if (esc && (!only || only.has(esc))) out[esc] = toCelValue(x, prop);
        } else if (only && !only.has(k)) {
          // not read by any rule
        } else if (s.additionalProperties) {
          out[k] = toCelValue(x, s.additionalProperties.schema);
        } else {
          out[k] = genericToCel(x);
        }
      }
      return out;
    }
    default:
      return genericToCel(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Cost estimation
// ---------------------------------------------------------------------------------------------

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const STRING_TRAVERSAL = new Set([
  'matches',
  'contains',
  'startsWith',
  'endsWith',
  'find',
  'findAll',
  'split',
  'replace',
  'lowerAscii',
  'upperAscii',
  'indexOf',
  'lastIndexOf',
  'substring',
  'trim',
  'join',
  'reverse',
  'format',
  'charAt',
]);

/** Upper bound of the number of elements / characters of a schema node. */
export function maxCardinality(s: Structural | undefined): number {
  if (!s) return MAX_REQUEST_SIZE_BYTES;
  if (s.type === 'array')
    return s.maxItems ?? Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSerializedSize(s.items) + 1));
  if (s.type === 'object')
    return (
      s.maxProperties ??
      Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSerializedSize(s.additionalProperties?.schema) + 4))
    );
  if (s.type === 'string') return s.maxLength !== undefined ? s.maxLength : MAX_REQUEST_SIZE_BYTES;
  return 1;
}

function minSerializedSize(s: Structural | undefined): number {
  if (!s) return 1;
  if (s.type === 'string') return 2;
  if (s.type === 'object' || s.type === 'array') return 2;
  return 1;
}

type SizeOf = (path: string[]) => number | undefined;

function selfPath(n: AstNode): string[] | undefined {
  if (n.op === 'id') return n.args === 'self' || n.args === 'oldSelf' ? [] : undefined;
  if (n.op === '.' || n.op === '.?') {
    const [obj, field] = n.args as [AstNode, string];
    const p = selfPath(obj);
    return p ? [...p, field] : undefined;
  }
  return undefined;
}

/** Estimates the cost of an expression; `size` bounds the size of `self`-relative paths. */
function estimate(n: unknown, size: SizeOf, bound: number): { cost: number; size: number } {
  if (!isAst(n)) return { cost: 0, size: 1 };
  const a = n.args;
  switch (n.op) {
    case 'value':
      return { cost: 0, size: typeof a === 'string' ? a.length : 1 };
    case 'id':
      return { cost: 1, size: size([]) ?? bound };
    case '.':
    case '.?': {
      const inner = estimate((a as [AstNode])[0], size, bound);
      const p = selfPath(n);
      return { cost: inner.cost + 1, size: (p && size(p)) ?? bound };
    }
    case 'rcall': {
      const [name, recv, args] = a as [string, AstNode, AstNode[]];
      const r = estimate(recv, size, bound);
      if (MACROS.has(name)) {
        const body = estimate(args[args.length - 1], () => bound, bound);
        const card = r.size;
        return { cost: r.cost + card * (body.cost + 1), size: card };
      }
      let cost = r.cost + 1;
      let argSize = 1;
      for (const x of args) {
        const e = estimate(x, size, bound);
        cost += e.cost;
        argSize = Math.max(argSize, e.size);
      }
      if (STRING_TRAVERSAL.has(name))
        cost +=
          Math.ceil(r.size * 0.1) *
          (name === 'matches' || name.startsWith('find') ? Math.max(1, Math.ceil(argSize / 4)) : 1);
      if (['sum', 'min', 'max', 'isSorted', 'indexOf', 'lastIndexOf'].includes(name)) cost += r.size;
      return { cost, size: r.size };
    }
    case 'call': {
      const [name, args] = a as [string, AstNode[]];
      let cost = 1;
      let sz = 1;
      for (const x of args) {
        const e = estimate(x, size, bound);
        cost += e.cost;
        sz = Math.max(sz, e.size);
      }
      if (name === 'has') return { cost: cost, size: 1 };
      return { cost, size: sz };
    }
    case 'list':
    case 'map': {
      let cost = 1;
      const items = (a as unknown[]).flat();
      for (const x of items) cost += estimate(x, size, bound).cost;
      return { cost, size: items.length };
    }
    default: {
      let cost = 1;
      let sz = 1;
      const parts = Array.isArray(a) ? a : [a];
      for (const x of parts) {
        const e = estimate(x, size, bound);
        cost += e.cost;
        sz = Math.max(sz, e.size);
      }
      if (n.op === '==' || n.op === '!=' || n.op === 'in' || n.op === '+') cost += Math.ceil(sz * 0.1);
      return { cost, size: sz };
    }
  }
}

function schemaSize(root: Structural): SizeOf {
  return (path) => {
    let s: Structural | undefined = root;
    for (const p of path) s = s?.properties?.[p] ?? s?.additionalProperties?.schema;
    return s ? maxCardinality(s) : undefined;
  };
}

function valueSize(root: unknown): SizeOf {
  return (path) => {
    let v: unknown = root;
    for (const p of path) v = isObj(v) ? v[p] : undefined;
    if (typeof v === 'string') return v.length;
    if (Array.isArray(v)) return v.length;
    if (isObj(v)) return Object.keys(v).length;
    return v === undefined ? 0 : 1;
  };
}

function usesOldSelf(n: unknown): boolean {
  if (!isAst(n)) return false;
  if (n.op === 'id') return n.args === 'oldSelf';
  const a = n.args;
  if (Array.isArray(a))
    return a.some((x) => (Array.isArray(x) ? x.flat().some(usesOldSelf) : usesOldSelf(x)));
  return usesOldSelf(a);
}

// ---------------------------------------------------------------------------------------------
// fieldPath
// ---------------------------------------------------------------------------------------------

/**
 * Validates a rule's `fieldPath` against the schema (apiextensions `ValidFieldPath`) and
 * returns the normalized field path, or an error text.
 */
export function validFieldPath(
  jsonPath: string,
  s: Structural,
  allowArrayNotation = true,
): { path: string; schema: Structural } | { error: string } {
  let schema: Structural | undefined = s;
  let path = '';
  const tokens = jsonPath.match(/'(?:[^'\\]|\\.)*'|[.[\]]|[^.[\]']+/g) ?? [];
  const append = (name: string, named: boolean): string | undefined => {
    if (!named) {
      path = `${path}[${name}]`;
      schema = schema?.additionalProperties?.schema;
      return undefined;
    }
    path = path ? `${path}.${name}` : name;
    const next: Structural | undefined = schema?.properties?.[name];
    if (!next) return 'does not refer to a valid field';
    schema = next;
    return undefined;
  };
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i] as string;
    if (tok === '[') {
      if (!allowArrayNotation) return { error: 'array notation is not allowed' };
      const lit = tokens[++i];
      if (lit === undefined) return { error: 'unexpected end of JSON path' };
      if (lit.length < 2 || !lit.startsWith("'") || !lit.endsWith("'"))
        return { error: `expected single quoted string but got ${lit}` };
      const name = lit.slice(1, -1).replace(/\\(.)/g, '$1');
      let named: boolean;
      if (schema?.properties) named = true;
      else if (schema?.additionalProperties) named = false;
      else return { error: 'does not refer to a valid field' };
      const err = append(name, named);
      if (err) return { error: err };
      const close = tokens[++i];
      if (close === undefined) return { error: 'unexpected end of JSON path' };
      if (close !== ']') return { error: `expected ] but got ${close}` };
    } else if (tok === '.') {
      const name = tokens[++i];
      if (name === undefined) return { error: 'unexpected end of JSON path' };
      let named: boolean;
      if (schema?.properties) named = true;
      else if (schema?.additionalProperties) named = false;
      else return { error: 'does not refer to a valid field' };
      const err = append(name, named);
      if (err) return { error: err };
    } else {
      return { error: `expected [ or . but got: ${tok}` };
    }
  }
  return schema ? { path, schema } : { error: 'does not refer to a valid field' };
}

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
