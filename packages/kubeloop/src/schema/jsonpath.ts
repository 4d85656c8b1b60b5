/**
 * A kubectl-style JSONPath evaluator for CRD `additionalPrinterColumns` and
 * `selectableFields` (`.spec.replicas`, `.metadata.labels.app`, `.spec.items[0].name`,
 * `.status.conditions[?(@.type=="Ready")].status`, `[*]`, `['dotted.key']`), and the cell
 * formatting of kube's CRD table convertor.
 */

import { humanDuration } from '../api/duration.js';
import { goFloat } from './util.js';

/** Re-exported: the SDK's one copy lives in `kubeloop/api`. */
export { humanDuration } from '../api/duration.js';

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'wildcard' }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start?: number; end?: number }
  | { kind: 'filter'; path: Step[]; op?: string; value?: unknown }
  | { kind: 'recursive' };

/** A JSONPath that cannot be parsed. */
export class JsonPathError extends Error {}

function parseFilterValue(raw: string): unknown {
  const t = raw.trim();
  if (/^(['"]).*\1$/.test(t)) return t.slice(1, -1);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t === 'null') return null;
  const n = Number(t);
  if (!Number.isNaN(n)) return n;
  throw new JsonPathError(`unrecognized filter value ${t}`);
}

/** Parses a JSONPath (with or without the surrounding `{}`) into steps. */
export function parseJsonPath(path: string): Step[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1).trim();
  if (p.startsWith('$')) p = p.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === '.') {
      if (p[i + 1] === '.') {
        steps.push({ kind: 'recursive' });
        i += 2;
        continue;
      }
      i++;
      if (p[i] === '*') {
        steps.push({ kind: 'wildcard' });
        i++;
        continue;
      }
      const m = /^[^.[\]]+/.exec(p.slice(i));
      if (!m) {
        if (i >= p.length) break;
        throw new JsonPathError(`invalid JSONPath ${path}`);
      }
      steps.push({ kind: 'field', name: m[0] });
      i += m[0].length;
    } else if (c === '[') {
      const end = findClose(p, i);
      const inner = p.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*') steps.push({ kind: 'wildcard' });
      else if (/^(['"]).*\1$/.test(inner)) steps.push({ kind: 'field', name: inner.slice(1, -1) });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else if (/^-?\d*:-?\d*$/.test(inner)) {
        const [a = '', b = ''] = inner.split(':');
        steps.push({ kind: 'slice', ...(a && { start: Number(a) }), ...(b && { end: Number(b) }) });
      } else if (inner.startsWith('?(') && inner.endsWith(')')) {
        const expr = inner.slice(2, -1).trim();
        const m = /^@((?:\.[^.=!<>\s]+|\['[^']*'\])*)\s*(==|!=|<=|>=|<|>)?\s*(.*)$/.exec(expr);
        if (!m) throw new JsonPathError(`unrecognized filter ${expr}`);
        const sub = m[1] ? parseJsonPath(m[1]) : [];
        steps.push({
          kind: 'filter',
          path: sub,
          ...(m[2] && { op: m[2], value: parseFilterValue(m[3] ?? '') }),
        });
      } else throw new JsonPathError(`invalid array index ${inner}`);
    } else {
      // kubectl accepts a leading field without a dot only inside {}, e.g. {metadata.name}.
      const m = /^[^.[\]]+/.exec(p.slice(i));
      if (!m) throw new JsonPathError(`invalid JSONPath ${path}`);
      steps.push({ kind: 'field', name: m[0] });
      i += m[0].length;
    }
  }
  return steps;
}

function findClose(p: string, open: number): number {
  let depth = 0;
  let quote = '';
  for (let i = open; i < p.length; i++) {
    const c = p[i];
    if (quote) {
      if (c === quote) quote = '';
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0 && c === ']') return i;
    }
  }
  throw new JsonPathError(`unterminated array notation in ${p}`);
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return a === b || (typeof a === 'number' && typeof b === 'number' && a === b);
    case '!=':
      return a !== b;
    case '<':
      return typeof a === typeof b && (a as number) < (b as number);
    case '>':
      return typeof a === typeof b && (a as number) > (b as number);
    case '<=':
      return typeof a === typeof b && (a as number) <= (b as number);
    case '>=':
      return typeof a === typeof b && (a as number) >= (b as number);
    default:
      return false;
  }
}

function apply(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    switch (step.kind) {
      case 'field':
        if (isObj(v) && Object.hasOwn(v, step.name)) out.push(v[step.name]);
        break;
      case 'wildcard':
        if (Array.isArray(v)) out.push(...v);
        else if (isObj(v)) for (const k of Object.keys(v).sort()) out.push(v[k]);
        break;
      case 'index':
        if (Array.isArray(v)) {
          const i = step.index < 0 ? v.length + step.index : step.index;
          if (i >= 0 && i < v.length) out.push(v[i]);
        }
        break;
      case 'slice':
        if (Array.isArray(v)) out.push(...v.slice(step.start, step.end));
        break;
      case 'filter':
        if (Array.isArray(v)) {
          for (const item of v) {
            const found = step.path.reduce<unknown[]>((acc, s) => apply(acc, s), [item]);
            if (
              step.op === undefined
                ? found.length > 0
                : found.some((f) => compare(f, step.op as string, step.value))
            )
              out.push(item);
          }
        }
        break;
      case 'recursive': {
        const walk = (x: unknown) => {
          out.push(x);
          if (Array.isArray(x)) x.forEach(walk);
          else if (isObj(x)) Object.values(x).forEach(walk);
        };
        walk(v);
        break;
      }
    }
  }
  return out;
}

/**
 * Evaluates a kubectl JSONPath against an object and returns every match (missing keys give
 * no match rather than an error, as kube's printer columns allow).
 *
 * @example
 * ```ts
 * evaluateJsonPath(pod, '.status.conditions[?(@.type=="Ready")].status'); // ['True']
 * evaluateJsonPath(obj, '.metadata.labels.app'); // ['web']
 * ```
 */
export function evaluateJsonPath(obj: unknown, path: string): unknown[] {
  return parseJsonPath(path).reduce<unknown[]>((acc, s) => apply(acc, s), [obj]);
}

/** A `date` cell or an Age: the human-readable time since `timestamp`, `<unknown>` when absent. */
export function humanReadableAge(timestamp: unknown, now: number = Date.now()): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<invalid>';
  return humanDuration(now - t);
}

// JSONPath printing of a value (what a `string` column shows).
function printValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : goFloat(v);
  if (typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return '<nil>';
  return JSON.stringify(v);
}

/**
 * The cell of one printer column for an object, as kube's CRD table convertor computes it:
 * `null` when the path finds nothing, the first match converted by the column type (`integer`
 * truncates numbers, `date` becomes an age such as `5m`, `string` prints any value), and `null`
 * when the value does not fit the type.
 *
 * @example
 * ```ts
 * columnCell(foo, { type: 'integer', jsonPath: '.spec.replicas' }); // 3
 * columnCell(foo, { type: 'date', jsonPath: '.metadata.creationTimestamp' }); // '5m'
 * ```
 */
export function columnCell(
  obj: unknown,
  column: { type: string; jsonPath: string },
  now: number = Date.now(),
): string | number | boolean | null {
  let results: unknown[];
  try {
    results = evaluateJsonPath(obj, column.jsonPath);
  } catch {
    return null;
  }
  if (results.length === 0) return null;
  const value = results[0];
  if (value === null || value === undefined) return null;
  switch (column.type) {
    case 'string':
      return printValue(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? humanReadableAge(value, now) : null;
    default:
      return null;
  }
}
