/**
 * What of `object`, `oldObject` and `params` the compiled expressions of one environment can
 * read, found in their syntax trees, and the CEL values of those parts alone.
 *
 * Every occurrence of such a variable in an expression is either the root of a chain of field
 * selections (`object.metadata.name`, `object.?spec.replicas`): the value at the end of the
 * chain is read, and along the chain only the selected keys; or anything else (`object` alone,
 * `object['x']`, an argument, a receiver): the whole value is read. So a value built from the
 * selected keys alone, with the read values whole, gives every expression the same answer (and
 * the same errors: a missing key is missing there too) as the whole object converted, and a
 * ConfigMap create checked on its name and data does not convert its managedFields.
 *
 * The CEL value of a JSON value is the value itself where no number lies beneath it: only
 * integers change (to `bigint`), so nothing else is copied.
 */
import { toCelValue } from 'kubeloop/schema';

/** The parts of a value read: `true` the whole value; else the keys read and the parts read of each. */
export type ReadTree = true | ReadFields;

/** Keys of a map read (parallel arrays: the pruning walks them per request, without iterators). */
export interface ReadFields {
  readonly keys: readonly string[];
  readonly trees: readonly ReadTree[];
}

/** The variables whose reads are tracked (the request's objects and the param: the large ones). */
export type TrackedVariable = 'object' | 'oldObject' | 'params';

const TRACKED: ReadonlySet<string> = new Set<TrackedVariable>(['object', 'oldObject', 'params']);

/** A cel-js syntax tree node (`parse(…).ast`), as far as this module reads it. */
interface AstNode {
  op: string;
  args: unknown;
}

const isNode = (v: unknown): v is AstNode =>
  typeof v === 'object' && v !== null && typeof (v as AstNode).op === 'string' && 'args' in v;

/** The key path of a chain of field selections on a tracked variable (`[variable, ...keys]`). */
function selectionPath(node: AstNode): string[] | undefined {
  if (node.op === 'id')
    return typeof node.args === 'string' && TRACKED.has(node.args) ? [node.args] : undefined;
  if (node.op !== '.' && node.op !== '.?') return undefined;
  const args = node.args as unknown[];
  if (!Array.isArray(args) || !isNode(args[0]) || typeof args[1] !== 'string') return undefined;
  const path = selectionPath(args[0]);
  if (path) path.push(args[1]);
  return path;
}

/** Adds `path` (below the variable) to `tree`: a new tree, `tree` is left as it is. */
function withPath(tree: ReadTree | undefined, path: readonly string[], from: number): ReadTree {
  if (tree === true || from === path.length) return true;
  const key = path[from]!;
  const keys = tree ? [...tree.keys] : [];
  const trees = tree ? [...tree.trees] : [];
  const i = keys.indexOf(key);
  if (i < 0) {
    keys.push(key);
    trees.push(withPath(undefined, path, from + 1));
  } else trees[i] = withPath(trees[i], path, from + 1);
  return { keys, trees };
}

/**
 * The reads of one environment's expressions, per tracked variable. Each added expression makes
 * new trees (the old ones are not changed), so that a value pruned by a tree stays right for it.
 */
export class EnvironmentReads {
  private readonly trees = new Map<TrackedVariable, ReadTree>();

  /** The reads of `variable` by the expressions added so far; undefined when none reads it. */
  tree(variable: TrackedVariable): ReadTree | undefined {
    return this.trees.get(variable);
  }

  /** Adds the reads of a parsed expression (its cel-js `ast`). */
  add(ast: unknown): void {
    this.walk(ast);
  }

  private read(path: readonly string[]): void {
    const variable = path[0] as TrackedVariable;
    this.trees.set(variable, withPath(this.trees.get(variable), path, 1));
  }

  private walk(v: unknown): void {
    if (Array.isArray(v)) {
      for (const x of v) this.walk(x);
      return;
    }
    if (!isNode(v)) {
      // A part of the tree this walk does not know (none is expected in a parsed expression):
      // every tracked variable is read whole, which is always right.
      if (typeof v === 'object' && v !== null) for (const name of TRACKED) this.read([name]);
      return;
    }
    if (v.op === 'value') return;
    const path = selectionPath(v);
    if (path) {
      this.read(path);
      return;
    }
    if (v.op === 'id') return;
    this.walk(v.args);
  }
}

const PLAIN = Object.prototype;

/**
 * The CEL value of a JSON value (as `toCelValue(v, undefined)` makes it): integers as `bigint`;
 * arrays and plain objects copied only when something beneath them changes.
 */
export function celValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const c = celValue(x);
      if (out) out.push(c);
      else if (c !== x) {
        out = v.slice(0, i);
        out.push(c);
      }
    }
    return out ?? v;
  }
  // Anything but a plain object is converted as toCelValue converts it (into a plain copy).
  if (Object.getPrototypeOf(v) !== PLAIN) return toCelValue(v, undefined);
  const o = v as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    const x = o[k];
    const c = celValue(x);
    if (out) out[k] = c;
    else if (c !== x) {
      out = {};
      for (const p in o) {
        if (p === k) break;
        if (Object.hasOwn(o, p)) out[p] = o[p];
      }
      out[k] = c;
    }
  }
  return out ?? v;
}

/** The CEL value of the parts of `v` that `tree` reads (see the module's description). */
export function prunedCelValue(v: unknown, tree: ReadTree): unknown {
  if (
    tree === true ||
    typeof v !== 'object' ||
    v === null ||
    Array.isArray(v) ||
    Object.getPrototypeOf(v) !== PLAIN
  )
    return celValue(v);
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const { keys, trees } = tree;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (Object.hasOwn(o, k)) out[k] = prunedCelValue(o[k], trees[i]!);
  }
  return out;
}
