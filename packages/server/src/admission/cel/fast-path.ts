/**
 * A direct evaluation of the simple admission expressions (field selections, `has`, `size`,
 * `startsWith`, comparisons of ints, `&&`, `?:`…) as plain JavaScript closures, beside cel-js.
 *
 * Why: a policy's validations are evaluated on every request they match; through cel-js each one
 * makes a root context, dispatches every call and operator on the run-time types of its operands
 * and checks each value read, which in the server (caches cold between requests) cost more than
 * the rest of the plugin. Most policies' expressions are a few selections and a comparison.
 *
 * Exactness: a closure returns a value only where it is sure that cel-js returns that same value
 * (the same operand types, the same overload, no error); anywhere else — a missing key, another
 * type, an overflow, any exception — it returns {@link FALLBACK}, and the expression is evaluated
 * by cel-js from the start, which gives its value or its error with its own text. Expressions
 * are pure (the `authorizer`, which calls out, is never taken here), so evaluating one again is
 * safe; `variables` keep their values and failures per activation, so cel-js sees the same ones.
 * An expression with any other construct gets no closure at all.
 */

/** Returned by a closure that cannot decide the value as cel-js would: evaluate with cel-js. */
export const FALLBACK: unique symbol = Symbol('fallback');

/** An expression's closure over the activation's variables (the context object cel-js reads). */
export type FastProgram = (context: object) => unknown;

type Node = { op: string; args: unknown };
type Fn = (ctx: Record<string, unknown>) => unknown;

/** The variables a closure may read: every one but `authorizer`. */
const VARIABLES: ReadonlySet<string> = new Set([
  'object',
  'oldObject',
  'request',
  'params',
  'namespaceObject',
  'variables',
]);

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const isNode = (v: unknown): v is Node =>
  typeof v === 'object' && v !== null && typeof (v as Node).op === 'string' && 'args' in v;

/** A map as cel-js's field access sees one (`constructor` Object or none); not null. */
const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && (v.constructor === Object || v.constructor === undefined);

/** A JSON-made CEL value cel-js accepts as it is (its `dyn` type check passes at once). */
function isPlainValue(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'bigint':
    case 'number':
    case 'boolean':
      return true;
    case 'object':
      return v === null || Array.isArray(v) || isMap(v);
    default:
      return false;
  }
}

/**
 * Whether cel-js's deep run-time type of `v` (the chain of first elements it looks at to pick an
 * overload) is made of plain values only, so that the overload it picks is the one assumed here.
 */
function plainDeepType(v: unknown): boolean {
  for (;;) {
    if (Array.isArray(v)) {
      if (v.length === 0 || v[0] === undefined) return true;
      v = v[0];
    } else if (isMap(v)) {
      let first: unknown = FALLBACK;
      for (const k in v) {
        first = v[k];
        break;
      }
      if (first === FALLBACK) return true;
      v = first;
    } else return v !== undefined && isPlainValue(v);
  }
}

/** `left.key` on a map (or on `variables`, whose class marks it `lazy`), else FALLBACK. */
function select(left: unknown, key: string, lazy: (v: unknown) => boolean): unknown {
  let v: unknown;
  if (isMap(left)) v = Object.hasOwn(left, key) ? left[key] : undefined;
  else if (lazy(left)) v = (left as Record<string, unknown>)[key];
  else return FALLBACK;
  return v !== undefined && isPlainValue(v) ? v : FALLBACK;
}

/** cel-js's `size` of a string: its code points. */
function stringSize(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * The closure of a parsed expression (its cel-js `ast`), or undefined when it has a construct
 * this module does not take. `lazy` tells the `variables` value of an activation.
 */
export function fastProgram(ast: unknown, lazy: (v: unknown) => boolean): FastProgram | undefined {
  const build = (n: unknown): Fn | undefined => {
    if (!isNode(n)) return undefined;
    const args = n.args as unknown[];
    switch (n.op) {
      case 'value': {
        const v = n.args;
        if (v !== null && !['string', 'bigint', 'number', 'boolean'].includes(typeof v)) return undefined;
        return () => v;
      }
      case 'id': {
        const name = n.args;
        if (typeof name !== 'string' || !VARIABLES.has(name)) return undefined;
        return (ctx) => {
          const v = ctx[name];
          return v !== undefined && (isPlainValue(v) || lazy(v)) ? v : FALLBACK;
        };
      }
      case '.': {
        const left = build(args[0]);
        const key = args[1];
        if (!left || typeof key !== 'string') return undefined;
        return (ctx) => select(left(ctx), key, lazy);
      }
      case 'map':
      case 'list':
        // Only the empty literals: cel-js makes a new `{}` / `[]` for each evaluation.
        if (!Array.isArray(args) || args.length !== 0) return undefined;
        return n.op === 'map' ? () => ({}) : () => [];
      case 'call':
        return call(args[0], args[1] as unknown[]);
      case 'rcall':
        return receiverCall(args[0], args[1], args[2] as unknown[]);
      case '?:': {
        const [c, t, f] = [build(args[0]), build(args[1]), build(args[2])];
        if (!c || !t || !f) return undefined;
        return (ctx) => {
          const v = c(ctx);
          return v === true ? t(ctx) : v === false ? f(ctx) : FALLBACK;
        };
      }
      case '&&':
      case '||': {
        const [l, r] = [build(args[0]), build(args[1])];
        if (!l || !r) return undefined;
        // CEL's && and || are commutative over errors: `false && error` is false either way
        // round, so a left side of `decides` (false for &&, true for ||) decides; otherwise the
        // right side must be a bool.
        const decides = n.op === '||';
        return (ctx) => {
          const a = l(ctx);
          if (a === decides) return a;
          if (a !== !decides) return FALLBACK;
          const b = r(ctx);
          return typeof b === 'boolean' ? b : FALLBACK;
        };
      }
      case '!_': {
        const x = build(n.args);
        if (!x) return undefined;
        return (ctx) => {
          const v = x(ctx);
          return typeof v === 'boolean' ? !v : FALLBACK;
        };
      }
      default:
        return binary(n.op, args);
    }
  };

  const binary = (op: string, args: unknown[]): Fn | undefined => {
    if (!Array.isArray(args) || args.length !== 2) return undefined;
    const compare = COMPARISONS[op];
    const [l, r] = [build(args[0]), build(args[1])];
    if (!l || !r) return undefined;
    if (compare)
      return (ctx) => {
        const a = l(ctx);
        const b = r(ctx);
        // Ints with ints, doubles with doubles; strings and bools for equality only.
        const t = typeof a;
        if (t !== typeof b || a === FALLBACK || b === FALLBACK) return FALLBACK;
        if (t === 'bigint' || t === 'number') return compare(a as number, b as number);
        if ((t === 'string' || t === 'boolean') && (op === '==' || op === '!='))
          return compare(a as number, b as number);
        return FALLBACK;
      };
    if (op !== '+') return undefined;
    return (ctx) => {
      const a = l(ctx);
      const b = r(ctx);
      if (typeof a === 'string' && typeof b === 'string') return a + b;
      if (typeof a === 'bigint' && typeof b === 'bigint') {
        const s = a + b;
        return s < INT64_MIN || s > INT64_MAX ? FALLBACK : s;
      }
      return FALLBACK;
    };
  };

  const call = (name: unknown, argNodes: unknown[]): Fn | undefined => {
    if (!Array.isArray(argNodes) || argNodes.length !== 1) return undefined;
    if (name === 'has') return has(argNodes[0]);
    const x = build(argNodes[0]);
    if (!x) return undefined;
    if (name === 'size')
      return (ctx) => {
        const v = x(ctx);
        if (typeof v === 'string') return BigInt(stringSize(v));
        if (!plainDeepType(v)) return FALLBACK;
        if (Array.isArray(v)) return BigInt(v.length);
        return isMap(v) ? BigInt(Object.keys(v).length) : FALLBACK;
      };
    if (name === 'string')
      return (ctx) => {
        const v = x(ctx);
        return typeof v === 'bigint' ? `${v}` : FALLBACK;
      };
    return undefined;
  };

  const receiverCall = (name: unknown, receiver: unknown, argNodes: unknown[]): Fn | undefined => {
    const method = typeof name === 'string' ? STRING_METHODS[name] : undefined;
    if (!method || !Array.isArray(argNodes) || argNodes.length !== 1) return undefined;
    const [r, a] = [build(receiver), build(argNodes[0])];
    if (!r || !a) return undefined;
    return (ctx) => {
      const s = r(ctx);
      const arg = a(ctx);
      return typeof s === 'string' && typeof arg === 'string' ? method(s, arg) : FALLBACK;
    };
  };

  /** `has(x.a.b)`: cel-js's has macro on maps (a missing key before the last one is an error). */
  const has = (arg: unknown): Fn | undefined => {
    const keys: string[] = [];
    let n = arg;
    while (isNode(n) && n.op === '.') {
      const [inner, key] = n.args as [unknown, unknown];
      if (typeof key !== 'string') return undefined;
      keys.unshift(key);
      n = inner;
    }
    if (keys.length === 0 || !isNode(n) || n.op !== 'id') return undefined;
    const root = build(n);
    if (!root) return undefined;
    const last = keys.length - 1;
    return (ctx) => {
      let v = root(ctx);
      for (let i = 0; i < last; i++) v = select(v, keys[i]!, lazy);
      if (!isMap(v)) return FALLBACK;
      const key = keys[last]!;
      if (!Object.hasOwn(v, key)) return false;
      const x = v[key];
      return x === undefined ? false : isPlainValue(x) ? true : FALLBACK;
    };
  };

  const fn = build(ast);
  if (!fn) return undefined;
  return (context) => {
    try {
      return fn(context as Record<string, unknown>);
    } catch {
      // (A getter of the activation failed: cel-js meets the same failure and words it.)
      return FALLBACK;
    }
  };
}

const COMPARISONS: Record<string, ((a: number, b: number) => boolean) | undefined> = {
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
};

const STRING_METHODS: Record<string, ((s: string, a: string) => boolean) | undefined> = {
  startsWith: (s, a) => s.startsWith(a),
  endsWith: (s, a) => s.endsWith(a),
  contains: (s, a) => s.includes(a),
};
