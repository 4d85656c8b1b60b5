import type { Structural } from '../structural.js';
import { isObj } from '../util.js';
import { type AstNode, isAst, MAX_REQUEST_SIZE_BYTES } from './rules.js';

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
export function estimate(n: unknown, size: SizeOf, bound: number): { cost: number; size: number } {
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

export function schemaSize(root: Structural): SizeOf {
  return (path) => {
    let s: Structural | undefined = root;
    for (const p of path) s = s?.properties?.[p] ?? s?.additionalProperties?.schema;
    return s ? maxCardinality(s) : undefined;
  };
}

export function valueSize(root: unknown): SizeOf {
  return (path) => {
    let v: unknown = root;
    for (const p of path) v = isObj(v) ? v[p] : undefined;
    if (typeof v === 'string') return v.length;
    if (Array.isArray(v)) return v.length;
    if (isObj(v)) return Object.keys(v).length;
    return v === undefined ? 0 : 1;
  };
}

export function usesOldSelf(n: unknown): boolean {
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
