/**
 * The syntax errors of Go's `encoding/json` (its scanner, `checkValid`), which kube-apiserver
 * reports for a body that is not JSON: `unexpected end of JSON input`, `invalid character 'x'
 * after top-level value`, `invalid character '[' exceeded max depth`, …. JavaScript's
 * `JSON.parse` words the same faults differently; the server parses with it and asks this scanner
 * only for the text of a failure.
 */
import { goQuote } from 'kubeloop/api';

/** What a scanner state does with the next byte: the next state, or an error. */
type Step = (c: number) => Step | string;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** `quoteChar`: a byte as Go's scanner quotes it in its messages (`'x'`, `'\''`, `'\u0081'`). */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  return `'${goQuote(String.fromCharCode(c)).slice(1, -1)}'`;
}

const error = (c: number, context: string) => `invalid character ${quoteChar(c)} ${context}`;

/**
 * Go's message for the first syntax error of `data`, or undefined when it is valid JSON.
 * `maxDepth` is the nesting at which Go's scanner stops (10,000; the server's own limit is lower).
 */
export function goJsonSyntaxError(data: Uint8Array, maxDepth = 10000): string | undefined {
  /** Open objects (true) and arrays (false), innermost last; for objects, whether a key is being read. */
  const stack: boolean[] = [];
  let inKey = false;
  let done = false;

  const push = (c: number, object: boolean): string | undefined => {
    stack.push(object);
    return stack.length > maxDepth ? error(c, 'exceeded max depth') : undefined;
  };

  const beginValue: Step = (c) => {
    if (isSpace(c)) return beginValue;
    switch (c) {
      case 0x7b: {
        // {
        const failed = push(c, true);
        if (failed) return failed;
        inKey = true;
        return beginStringOrEmpty;
      }
      case 0x5b: // [
        return push(c, false) ?? beginValueOrEmpty;
      case 0x22:
        return inString;
      case 0x2d: // -
        return neg;
      case 0x30:
        return zero;
      case 0x74:
        return literal('true', 1);
      case 0x66:
        return literal('false', 1);
      case 0x6e:
        return literal('null', 1);
    }
    if (c >= 0x31 && c <= 0x39) return digits;
    return error(c, 'looking for beginning of value');
  };
  const beginValueOrEmpty: Step = (c) => {
    if (isSpace(c)) return beginValueOrEmpty;
    if (c === 0x5d) return endValue(c);
    return beginValue(c);
  };
  const beginStringOrEmpty: Step = (c) => {
    if (isSpace(c)) return beginStringOrEmpty;
    if (c === 0x7d) {
      inKey = false;
      return endValue(c);
    }
    return beginString(c);
  };
  const beginString: Step = (c) => {
    if (isSpace(c)) return beginString;
    if (c === 0x22) return inString;
    return error(c, 'looking for beginning of object key string');
  };
  const endTop: Step = (c) => (isSpace(c) ? endTop : error(c, 'after top-level value'));
  const endValue: Step = (c) => {
    if (stack.length === 0) {
      done = true;
      return endTop(c);
    }
    if (isSpace(c)) return endValue;
    const object = stack[stack.length - 1];
    if (object && inKey) {
      if (c === 0x3a) {
        inKey = false;
        return beginValue;
      }
      return error(c, 'after object key');
    }
    if (object) {
      if (c === 0x2c) {
        inKey = true;
        return beginString;
      }
      if (c === 0x7d) return pop();
      return error(c, 'after object key:value pair');
    }
    if (c === 0x2c) return beginValue;
    if (c === 0x5d) return pop();
    return error(c, 'after array element');
  };
  const pop = (): Step => {
    stack.pop();
    inKey = false;
    if (stack.length === 0) done = true;
    return endValue;
  };
  const inString: Step = (c) => {
    if (c === 0x22) return endValue;
    if (c === 0x5c) return inStringEsc;
    if (c < 0x20) return error(c, 'in string literal');
    return inString;
  };
  const inStringEsc: Step = (c) => {
    if ('bfnrt\\/"'.includes(String.fromCharCode(c))) return inString;
    if (c === 0x75) return hex(4);
    return error(c, 'in string escape code');
  };
  const hex =
    (left: number): Step =>
    (c) => {
      if (!isHex(c)) return error(c, 'in \\u hexadecimal character escape');
      return left === 1 ? inString : hex(left - 1);
    };
  const neg: Step = (c) => {
    if (c === 0x30) return zero;
    if (c >= 0x31 && c <= 0x39) return digits;
    return error(c, 'in numeric literal');
  };
  const digits: Step = (c) => (isDigit(c) ? digits : zero(c));
  const zero: Step = (c) => {
    if (c === 0x2e) return dot;
    if (c === 0x65 || c === 0x45) return exponent;
    return endValue(c);
  };
  const dot: Step = (c) => (isDigit(c) ? dotDigits : error(c, 'after decimal point in numeric literal'));
  const dotDigits: Step = (c) => {
    if (isDigit(c)) return dotDigits;
    if (c === 0x65 || c === 0x45) return exponent;
    return endValue(c);
  };
  const exponent: Step = (c) => (c === 0x2b || c === 0x2d ? exponentSign : exponentSign(c));
  const exponentSign: Step = (c) =>
    isDigit(c) ? exponentDigits : error(c, 'in exponent of numeric literal');
  const exponentDigits: Step = (c) => (isDigit(c) ? exponentDigits : endValue(c));
  const literal =
    (word: string, at: number): Step =>
    (c) => {
      if (c !== word.charCodeAt(at)) return error(c, `in literal ${word} (expecting '${word[at]}')`);
      return at === word.length - 1 ? endValue : literal(word, at + 1);
    };

  let state: Step = beginValue;
  for (const c of data) {
    const next = state(c);
    if (typeof next === 'string') return next;
    state = next;
  }
  // eof: the scanner is given one space, which ends a number or a top-level value, or fails
  // (`invalid character ' ' in numeric literal`); input cut short otherwise.
  if (done) return undefined;
  const end = state(0x20);
  if (typeof end === 'string') return end;
  return done ? undefined : 'unexpected end of JSON input';
}

/** `summarizeData`: the start of a body as kube quotes it after a decoding error. */
export function summarizeBody(data: Uint8Array, maxLength = 30): string {
  if (data.length === 0) return '<empty>';
  const cut = data.length > maxLength;
  const head = cut ? data.subarray(0, maxLength) : data;
  const shown = data[0] === 0x7b ? Buffer.from(head).toString('utf8') : Buffer.from(head).toString('hex');
  return cut ? `${shown} ...` : shown;
}

/** The JSON type Go's `UnmarshalTypeError` names for a decoded value (`array`, `string`, `bool`, …). */
export function goJsonTypeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}
