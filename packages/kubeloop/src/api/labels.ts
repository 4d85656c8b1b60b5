/**
 * Label selectors with the semantics of apimachinery's `labels` package: the same grammar,
 * the same error messages, the same matching rules and the same canonical string form.
 *
 * @example
 * ```ts
 * const sel = parseLabelSelector('app=web,tier in (front, back),!canary');
 * matchesLabels(sel, { app: 'web', tier: 'front' }); // true
 * formatLabelSelector(sel); // '!canary,app=web,tier in (back,front)'
 * ```
 */

import type { StatusCause } from './status.js';
import { ApiError } from './status.js';
import {
  aggregateCauses,
  fieldErrors,
  goQuote,
  goStringSlice,
  isQualifiedName,
  isValidLabelValue,
  rawFieldValue,
} from './validation.js';

/**
 * A requirement's operator, spelled as apimachinery's `selection.Operator`: `exists` is a bare
 * key, `!` is `!key` (does not exist), `gt`/`lt` are `key>n` / `key<n`.
 */
export type Operator = 'in' | 'notin' | 'exists' | '!' | '=' | '==' | '!=' | 'gt' | 'lt';

/** One term of a label selector: `key`, `operator` and its `values` (one for `=`, none for `exists`). */
export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

/** A label selector: the AND of its requirements. Empty selects everything; see {@link NOTHING}. */
export type LabelSelector = readonly Requirement[];

/** The selector that matches every object (apimachinery `labels.Everything()`). */
export const EVERYTHING: LabelSelector = Object.freeze([]);

/**
 * The selector that matches no object (apimachinery `labels.Nothing()`), which is what a `null`
 * `LabelSelector` in an API object means. Recognised by identity, so keep the reference.
 */
export const NOTHING: LabelSelector = Object.freeze([]);

/** True for {@link NOTHING}. */
export const isNothing = (sel: LabelSelector): boolean => sel === NOTHING;

/** True when the selector does not restrict anything (empty and not {@link NOTHING}). */
export const isEverything = (sel: LabelSelector): boolean => sel.length === 0 && sel !== NOTHING;

const validOperators: readonly Operator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt', 'exists', '!'];
const binaryOperators: readonly Operator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];

/** Code-point order, which is the byte order Go's `sort.Strings` uses on UTF-8. */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

const sortedUnique = (values: Iterable<string>): string[] => [...new Set(values)].sort(compareCodePoints);

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's `strconv.ParseInt(s, 10, 64)`: `undefined` when it would fail. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

function keyCause(key: string, path: string): StatusCause | undefined {
  const errs = isQualifiedName(key);
  return errs.length > 0 ? fieldErrors.invalid(path, key, errs.join('; ')) : undefined;
}

/** Field path under an optional prefix (`key`, or `spec.selector.key`). */
const child = (prefix: string | undefined, name: string) => (prefix ? `${prefix}.${name}` : name);

/**
 * Validates and builds one requirement, as apimachinery's `labels.NewRequirement`. Throws a 400
 * `ApiError` carrying the aggregated field errors (`key: Invalid value: …`).
 *
 * @param path field path prefix for the error messages (none by default, as in the API server).
 * @param rawValues how the values print in a "values" error; apimachinery prints the Go slice.
 */
export function newRequirement(
  key: string,
  operator: Operator,
  values: readonly string[],
  path?: string,
  rawValues?: string,
): Requirement {
  const errs: StatusCause[] = [];
  const kc = keyCause(key, child(path, 'key'));
  if (kc) errs.push(kc);
  const valuePath = child(path, 'values');
  // Rendered only for an error: a valid requirement (every selector a controller reads) builds no text.
  const shown = () => rawFieldValue(rawValues ?? goStringSlice(values));
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0)
        errs.push(
          fieldErrors.invalid(valuePath, shown(), "for 'in', 'notin' operators, values set can't be empty"),
        );
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1)
        errs.push(
          fieldErrors.invalid(valuePath, shown(), 'exact-match compatibility requires one single value'),
        );
      break;
    case 'exists':
    case '!':
      if (values.length !== 0)
        errs.push(
          fieldErrors.invalid(valuePath, shown(), 'values set must be empty for exists and does not exist'),
        );
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1)
        errs.push(
          fieldErrors.invalid(valuePath, shown(), "for 'Gt', 'Lt' operators, exactly one value is required"),
        );
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(
            fieldErrors.invalid(
              `${valuePath}[${i}]`,
              v,
              "for 'Gt', 'Lt' operators, the value must be an integer",
            ),
          );
        }
      });
      break;
    default:
      errs.push(fieldErrors.notSupported(child(path, 'operator'), operator, validOperators));
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length > 0) errs.push(fieldErrors.invalid(`${valuePath}[${i}][${key}]`, v, msgs.join('; ')));
  });
  if (errs.length > 0) throw ApiError.badRequest(aggregateCauses(errs), errs);
  return { key, operator, values: [...values] };
}

// ---------------------------------------------------------------------------------------------
// Lexer and parser, a faithful port of apimachinery's so that errors read the same
// ---------------------------------------------------------------------------------------------

type Tok =
  | 'Error'
  | 'EndOfString'
  | 'ClosedPar'
  | 'Comma'
  | 'DoesNotExist'
  | 'DoubleEquals'
  | 'Equals'
  | 'GreaterThan'
  | 'Identifier'
  | 'In'
  | 'LessThan'
  | 'NotEquals'
  | 'NotIn'
  | 'OpenPar';

const string2token: ReadonlyMap<string, Tok> = new Map<string, Tok>([
  [')', 'ClosedPar'],
  [',', 'Comma'],
  ['!', 'DoesNotExist'],
  ['==', 'DoubleEquals'],
  ['=', 'Equals'],
  ['>', 'GreaterThan'],
  ['in', 'In'],
  ['<', 'LessThan'],
  ['!=', 'NotEquals'],
  ['notin', 'NotIn'],
  ['(', 'OpenPar'],
]);

interface Item {
  tok: Tok;
  lit: string;
}

const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecial = (ch: string) =>
  ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<';
// Go's lexer reads byte 0 both at the end and for a NUL in the input; both end a token.
const NUL = '\0';

function lex(s: string): Item[] {
  let pos = 0;
  const read = (): string => (pos < s.length ? (s[pos++] ?? NUL) : NUL);
  const unread = () => {
    pos--;
  };
  const items: Item[] = [];
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    let item: Item;
    if (ch === NUL) {
      item = { tok: 'EndOfString', lit: '' };
    } else if (isSpecial(ch)) {
      unread();
      let buffer = '';
      let last: Item | undefined;
      for (;;) {
        const c = read();
        if (c === NUL) break;
        if (isSpecial(c)) {
          buffer += c;
          const t = string2token.get(buffer);
          if (t !== undefined) last = { tok: t, lit: buffer };
          else if (last) {
            unread();
            break;
          }
        } else {
          unread();
          break;
        }
      }
      item = last ?? { tok: 'Error', lit: `error expected: keyword found '${buffer}'` };
    } else {
      unread();
      let buffer = '';
      for (;;) {
        const c = read();
        if (c === NUL) break;
        if (isSpecial(c) || isWhitespace(c)) {
          unread();
          break;
        }
        buffer += c;
      }
      item = { tok: string2token.get(buffer) ?? 'Identifier', lit: buffer };
    }
    items.push(item);
    if (item.tok === 'EndOfString') return items;
  }
}

class ParseError extends Error {}

class Parser {
  private position = 0;
  constructor(
    private readonly items: Item[],
    private readonly path: string | undefined,
  ) {}

  // In a values context `in` and `notin` are ordinary identifiers (`x in (in)` is valid).
  private lookahead(values: boolean): Item {
    const it = this.items[this.position] ?? { tok: 'EndOfString', lit: '' };
    return values && (it.tok === 'In' || it.tok === 'NotIn') ? { tok: 'Identifier', lit: it.lit } : it;
  }

  private consume(values: boolean): Item {
    const it = this.lookahead(values);
    this.position++;
    return it;
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      switch (tok) {
        case 'Identifier':
        case 'DoesNotExist': {
          let r: Requirement;
          try {
            r = this.parseRequirement();
          } catch (e) {
            throw new ParseError(`unable to parse requirement: ${messageOf(e)}`);
          }
          reqs.push(r);
          const t = this.consume(true);
          if (t.tok === 'EndOfString') return reqs;
          if (t.tok === 'Comma') {
            const t2 = this.lookahead(true);
            if (t2.tok !== 'Identifier' && t2.tok !== 'DoesNotExist') {
              throw new ParseError(`found '${t2.lit}', expected: identifier after ','`);
            }
            break;
          }
          throw new ParseError(`found '${t.lit}', expected: ',' or 'end of string'`);
        }
        case 'EndOfString':
          return reqs;
        default:
          throw new ParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): Requirement {
    const [key, inferred] = this.parseKeyAndInferOperator();
    if (inferred === 'exists' || inferred === '!') return newRequirement(key, inferred, [], this.path);
    const operator = this.parseOperator();
    const values = operator === 'in' || operator === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, operator, sortedUnique(values), this.path);
  }

  private parseKeyAndInferOperator(): [string, Operator | undefined] {
    let operator: Operator | undefined;
    let t = this.consume(true);
    if (t.tok === 'DoesNotExist') {
      operator = '!';
      t = this.consume(true);
    }
    if (t.tok !== 'Identifier') throw new ParseError(`found '${t.lit}', expected: identifier`);
    // apimachinery validates the key here with the parser's (nil) path, which prints as "<nil>".
    const kc = keyCause(t.lit, this.path ?? '<nil>');
    if (kc) throw new ParseError(aggregateCauses([kc]));
    const next = this.lookahead(true).tok;
    if ((next === 'EndOfString' || next === 'Comma') && operator !== '!') operator = 'exists';
    return [t.lit, operator];
  }

  private parseOperator(): Operator {
    const { tok, lit } = this.consume(false);
    switch (tok) {
      case 'In':
        return 'in';
      case 'Equals':
        return '=';
      case 'DoubleEquals':
        return '==';
      case 'GreaterThan':
        return 'gt';
      case 'LessThan':
        return 'lt';
      case 'NotIn':
        return 'notin';
      case 'NotEquals':
        return '!=';
      default:
        throw new ParseError(`found '${lit}', expected: ${binaryOperators.join(', ')}`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.consume(true);
    if (open.tok !== 'OpenPar') throw new ParseError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(true);
    switch (tok) {
      case 'Identifier':
      case 'Comma': {
        const s = this.parseIdentifiersList();
        if (this.consume(true).tok !== 'ClosedPar') throw new ParseError(`found '${lit}', expected: ')'`);
        return s;
      }
      case 'ClosedPar':
        this.consume(true);
        return new Set(['']);
      default:
        throw new ParseError(`found '${lit}', expected: ',', ')' or identifier`);
    }
  }

  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume(true);
      switch (tok) {
        case 'Identifier': {
          s.add(lit);
          const t2 = this.lookahead(true);
          if (t2.tok === 'Comma') continue;
          if (t2.tok === 'ClosedPar') return s;
          throw new ParseError(`found '${t2.lit}', expected: ',' or ')'`);
        }
        case 'Comma': {
          // A comma with nothing before or after it stands for the empty value: `(,a)`, `(a,)`, `(a,,b)`.
          if (s.size === 0) s.add('');
          const t2 = this.lookahead(true).tok;
          if (t2 === 'ClosedPar') {
            s.add('');
            return s;
          }
          if (t2 === 'Comma') {
            this.consume(true);
            s.add('');
          }
          break;
        }
        default:
          throw new ParseError(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(true).tok;
    if (next === 'EndOfString' || next === 'Comma') return new Set(['']);
    const { tok, lit } = this.consume(true);
    if (tok === 'Identifier') return new Set([lit]);
    throw new ParseError(`found '${lit}', expected: identifier`);
  }
}

function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.status.message ?? e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

const byKey = (a: Requirement, b: Requirement) => compareCodePoints(a.key, b.key);

/**
 * Parses a label selector string (the `labelSelector` query parameter, `kubectl -l`), exactly
 * as apimachinery's `labels.Parse`: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`,
 * `!a`, `a>1`, `a<1`, comma separated. Requirements come back sorted by key. An empty string
 * selects everything.
 *
 * @throws ApiError 400 BadRequest with apimachinery's message, e.g.
 *   `unable to parse requirement: found '', expected: in, notin, =, ==, !=, gt, lt`.
 */
export function parseLabelSelector(s: string): LabelSelector {
  let reqs: Requirement[];
  try {
    reqs = new Parser(lex(s), undefined).parse();
  } catch (e) {
    if (e instanceof ParseError) throw ApiError.badRequest(e.message);
    throw e;
  }
  return reqs.sort(byKey);
}

/** The `LabelSelector` object of the API (`spec.selector` of a Deployment, …). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] | null }> | null;
}

const expressionOperators: Readonly<Record<string, Operator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * Converts an API `LabelSelector` object, as apimachinery's `metav1.LabelSelectorAsSelector`:
 * `null`/`undefined` gives {@link NOTHING} (matches no object), `{}` gives everything,
 * `matchLabels` become `=` requirements and `matchExpressions` In/NotIn/Exists/DoesNotExist.
 *
 * @throws ApiError 400 BadRequest for an unknown operator (`"Foo" is not a valid label selector
 *   operator`) or invalid keys and values.
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | undefined | null): LabelSelector {
  if (sel === undefined || sel === null) return NOTHING;
  const labels = Object.entries(sel.matchLabels ?? {});
  const exprs = sel.matchExpressions ?? [];
  if (labels.length + exprs.length === 0) return EVERYTHING;
  const reqs: Requirement[] = [];
  for (const [k, v] of labels) reqs.push(newRequirement(k, '=', [v]));
  for (const expr of exprs) {
    const op = Object.hasOwn(expressionOperators, expr.operator)
      ? expressionOperators[expr.operator]
      : undefined;
    if (op === undefined)
      throw ApiError.badRequest(`${goQuote(expr.operator)} is not a valid label selector operator`);
    const values = [...(expr.values ?? [])];
    // Go copies the values with append(nil, …), so an empty list prints as a nil slice.
    reqs.push(
      newRequirement(expr.key, op, values, undefined, values.length === 0 ? goStringSlice(null) : undefined),
    );
  }
  return reqs.sort(byKey);
}

/**
 * The selector that matches exactly the given labels (apimachinery `labels.SelectorFromSet`);
 * no validation, empty gives everything.
 */
export function labelSelectorFromSet(
  set: Readonly<Record<string, string>> | undefined | null,
): LabelSelector {
  if (!set) return EVERYTHING;
  return Object.entries(set)
    .map(([key, value]): Requirement => ({ key, operator: '=', values: [value] }))
    .sort(byKey);
}

function matchesRequirement(r: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has && r.values.includes(value ?? '');
    case 'notin':
    case '!=':
      return !has || !r.values.includes(value ?? '');
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const actual = parseInt64(value ?? '');
      const wanted = parseInt64(r.values[0] ?? '');
      if (actual === undefined || wanted === undefined) return false;
      return r.operator === 'gt' ? actual > wanted : actual < wanted;
    }
    default:
      return false;
  }
}

/**
 * True when the labels satisfy every requirement. A missing key satisfies `notin`, `!=` and
 * `!key`; `gt`/`lt` need an integer label value. {@link NOTHING} matches nothing.
 */
export function matchesLabels(
  sel: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (sel === NOTHING) return false;
  const ls = labels ?? {};
  return sel.every((r) => matchesRequirement(r, ls));
}

function formatRequirement(r: Requirement): string {
  let out = r.operator === '!' ? `!${r.key}` : r.key;
  switch (r.operator) {
    case 'exists':
    case '!':
      return out;
    case 'in':
      out += ' in (';
      break;
    case 'notin':
      out += ' notin (';
      break;
    case 'gt':
      out += '>';
      break;
    case 'lt':
      out += '<';
      break;
    default:
      out += r.operator;
  }
  out += r.values.length === 1 ? (r.values[0] ?? '') : [...r.values].sort(compareCodePoints).join(',');
  if (r.operator === 'in' || r.operator === 'notin') out += ')';
  return out;
}

/**
 * The canonical string of a selector, as apimachinery's `Selector.String()`: requirements in
 * their order, set values sorted, `!key`, `key in (a,b)`, `key>1`. {@link NOTHING} prints as
 * `''` (as in Go), so do not round-trip it through a string.
 */
export function formatLabelSelector(sel: LabelSelector): string {
  return sel.map(formatRequirement).join(',');
}

/**
 * The single value the selector requires for `key` (`key=v`, `key==v` or `key in (v)`), if any;
 * lets a store use an index. apimachinery `RequiresExactMatch`.
 */
export function requiresExactLabelMatch(sel: LabelSelector, key: string): string | undefined {
  const r = sel.find((x) => x.key === key);
  if (!r) return undefined;
  if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1)
    return r.values[0];
  return undefined;
}
