/**
 * Rendering of CEL compile errors the way cel-go prints them inside kube's messages:
 * `ERROR: <input>:1:6: undefined field 'foo'` followed by the source line and a caret.
 */

/** A cel-js error (ParseError / TypeError / EvaluationError) as seen through `unknown`. */
export interface CelJsError {
  message: string;
  code?: string;
  range?: { start: number; end: number };
  node?: { op?: string; range?: { start: number; end: number }; args?: unknown };
}

const OPS: Record<string, string> = {
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  '==': '_==_',
  '!=': '_!=_',
  in: '@in',
};

/** Source that ends where an operand must follow (after a binary or unary operator, `?` or `:`). */
const OPERAND_EXPECTED = /(?:==|!=|<=|>=|<|>|\+|-|\*|\/|%|&&|\|\||!|\?|:|\bin)\s*$/;
/** cel-go's parser's expected tokens where an expression must start. */
const EXPRESSION_START =
  " expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/** Translates a cel-js message into cel-go's wording where the meaning is the same. */
export function celGoMessage(e: CelJsError, phase: 'check' | 'eval'): string {
  const first = (e.message.split('\n')[0] ?? '').trim();
  let m = /^No such key: index out of bounds, index (-?\d+) >= size (\d+)/.exec(first);
  if (m) return `index out of bounds: ${m[1]}`;
  m = /^No such key: (.*)$/.exec(first);
  if (m) return phase === 'check' ? `undefined field '${m[1]}'` : `no such key: ${m[1]}`;
  m = /^Unknown variable: (.*)$/.exec(first);
  if (m) return `undeclared reference to '${m[1]}' (in container '')`;
  m = /^no such overload: (\S+) (\S+) (\S+)$/.exec(first);
  if (m && OPS[m[2] ?? '']) {
    const op = OPS[m[2] ?? ''];
    return phase === 'check'
      ? `found no matching overload for '${op}' applied to '(${m[1]}, ${m[3]})'`
      : 'no such overload';
  }
  if (/^no such overload/.test(first))
    return phase === 'check'
      ? first.replace(/^no such overload: /, 'found no matching overload for ')
      : 'no such overload';
  if (/^integer overflow/.test(first)) return 'integer overflow';
  if (e.code === 'unexpected_token' || /^Unexpected token/.test(first)) {
    // ANTLR names the end of input <EOF>.
    const token = /^Unexpected token: (.*)$/.exec(first)?.[1];
    if (token === undefined) return `Syntax error: ${first}`;
    return `Syntax error: mismatched input '${token === 'EOF' ? '<EOF>' : token}'`;
  }
  return first;
}

// cel-go reports a select at its '.' and an operator at its symbol.
function errorOffset(src: string, e: CelJsError): number {
  const node = e.node;
  const start = e.range?.start ?? node?.range?.start ?? 0;
  if (node?.op === '.' || node?.op === '.?') {
    const args = node.args as [{ range?: { end: number } }, string] | undefined;
    const end = args?.[0]?.range?.end;
    if (end !== undefined) return src.indexOf('.', end);
  }
  if (node?.op && OPS[node.op] && Array.isArray(node.args)) {
    const [l] = node.args as Array<{ range?: { end: number } }>;
    const from = l?.range?.end ?? start;
    const i = src.indexOf(node.op, from);
    if (i >= 0) return i;
  }
  return start;
}

/**
 * Formats a compile error as cel-go's `Issues.String()`:
 * `ERROR: <input>:L:C: msg\n | source line\n | ....^`.
 */
export function formatCompileIssue(src: string, e: CelJsError): string {
  let msg = celGoMessage(e, 'check');
  // An expression cut short after an operator: ANTLR lists what may start one.
  if (msg === "Syntax error: mismatched input '<EOF>'" && OPERAND_EXPECTED.test(src)) msg += EXPRESSION_START;
  const off = Math.max(0, Math.min(errorOffset(src, e), src.length));
  const before = src.slice(0, off);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const col = [...src.slice(lineStart, off)].length;
  const text = src.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${col + 1}: ${msg}\n | ${text}\n | ${'.'.repeat(col)}^`;
}
