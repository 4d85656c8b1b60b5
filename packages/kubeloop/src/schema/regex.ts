/**
 * Go (RE2) regular expressions on JavaScript's engine.
 *
 * `pattern` in a CRD schema is compiled by Go's `regexp` package, so its syntax and semantics
 * are RE2's. This module translates the RE2 syntax JavaScript lacks and rejects what RE2
 * rejects, with Go's error text. Known differences that remain:
 * - RE2 guarantees linear time; JavaScript backtracks, so a pathological pattern can be slow.
 * - Inline flag groups in the middle of a pattern (`a(?i)b`, `(?i:b)`) are supported only when
 *   they apply to the whole pattern; JavaScript on Node 20 has no scoped modifiers.
 * - Go's `\b`, `\w`, `\d` are ASCII-only, as are JavaScript's, and `\s` is translated to Go's
 *   ASCII set; Unicode classes (`\pL`, `\p{Greek}`) use JavaScript's Unicode data.
 */

/** Go's `regexp/syntax` error for an unsupported construct. */
export class GoRegexpError extends Error {}

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const GO_SPACE = '\\t\\n\\f\\r ';

const escapeChar = (ch: string): string => `\\u{${(ch.codePointAt(0) ?? 0).toString(16)}}`;

/**
 * Translates an RE2 pattern to a JavaScript `RegExp` (with the `u` flag). Throws
 * {@link GoRegexpError} with Go's message (`error parsing regexp: …`) for patterns Go rejects.
 */
export function compileGoRegexp(pattern: string): RegExp {
  let flags = 'u';
  let src = pattern;
  // Leading flag group: (?i), (?s), (?m), (?U) (U has no JS equivalent: rejected below).
  const lead = /^\(\?([imsU]+)\)/.exec(src);
  if (lead) {
    const f = lead[1] ?? '';
    if (f.includes('U'))
      throw new GoRegexpError(`error parsing regexp: invalid or unsupported Perl syntax: \`(?U\``);
    for (const c of f) if (!flags.includes(c)) flags += c;
    src = src.slice(lead[0].length);
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i] as string;
    if (ch === '\\') {
      const next = src[i + 1];
      if (next === undefined)
        throw new GoRegexpError('error parsing regexp: trailing backslash at end of expression: ``');
      i++;
      if (next === 'Q') {
        const end = src.indexOf('\\E', i + 1);
        const lit = end < 0 ? src.slice(i + 1) : src.slice(i + 1, end);
        for (const c of lit) out += /[A-Za-z0-9]/.test(c) ? c : escapeChar(c);
        i = end < 0 ? src.length : end + 1;
        continue;
      }
      if (next === 'z') {
        out += inClass ? 'z' : '$(?![\\s\\S])';
        continue;
      }
      if (next === 'A') {
        out += inClass ? 'A' : '^';
        continue;
      }
      if (next === 's') {
        out += inClass ? GO_SPACE : `[${GO_SPACE}]`;
        continue;
      }
      if (next === 'S') {
        if (inClass) throw new GoRegexpError('error parsing regexp: invalid character class range: `\\S`');
        out += `[^${GO_SPACE}]`;
        continue;
      }
      if (next === 'p' || next === 'P') {
        if (src[i + 1] === '{') {
          const end = src.indexOf('}', i + 1);
          out += `\\${next}${src.slice(i + 1, end + 1)}`;
          i = end;
        } else {
          out += `\\${next}{${src[i + 1] ?? ''}}`;
          i++;
        }
        continue;
      }
      if (/[1-9]/.test(next)) {
        throw new GoRegexpError(`error parsing regexp: invalid escape sequence: \`\\${next}\``);
      }
      if (/[dDwWbBnrtfvx0]/.test(next)) {
        out += `\\${next}`;
        continue;
      }
      if (/[a-zA-Z]/.test(next)) {
        throw new GoRegexpError(`error parsing regexp: invalid escape sequence: \`\\${next}\``);
      }
      // Go lets any punctuation be escaped; JavaScript's u-mode only some of it.
      out += escapeChar(next);
      continue;
    }
    if (inClass) {
      if (ch === '[' && src[i + 1] === ':') {
        const end = src.indexOf(':]', i + 2);
        if (end > 0) {
          let name = src.slice(i + 2, end);
          const negated = name.startsWith('^');
          if (negated) name = name.slice(1);
          const set = POSIX[name];
          if (set === undefined) {
            throw new GoRegexpError(
              `error parsing regexp: invalid character class range: \`${src.slice(i, end + 2)}\``,
            );
          }
          if (negated)
            throw new GoRegexpError('error parsing regexp: negated POSIX classes are not supported here');
          out += set;
          i = end + 1;
          continue;
        }
      }
      if (ch === ']') inClass = false;
      // JavaScript u-mode rejects a bare '[' inside a class; Go takes it literally.
      out += ch === '[' ? '\\[' : ch;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      out += ch;
      if (src[i + 1] === '^') {
        out += '^';
        i++;
      }
      // A ']' right after '[' or '[^' is a literal in Go.
      if (src[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (ch === '(' && src[i + 1] === '?') {
      const rest = src.slice(i + 2);
      if (rest.startsWith('P<')) {
        out += '(?<';
        i += 3;
        continue;
      }
      if (rest.startsWith(':')) {
        out += '(?:';
        i += 2;
        continue;
      }
      if (rest.startsWith('<') && !rest.startsWith('<=') && !rest.startsWith('<!')) {
        out += '(?<';
        i += 2;
        continue;
      }
      const m = /^([imsU-]*)([:)])/.exec(rest);
      if (m && (m[1] ?? '').length > 0) {
        throw new GoRegexpError(
          `error parsing regexp: flags in the middle of a pattern are not supported by this engine: \`(?${m[1]}\``,
        );
      }
      throw new GoRegexpError(
        `error parsing regexp: invalid or unsupported Perl syntax: \`(?${rest.slice(0, 1)}\``,
      );
    }
    if (ch === '{') {
      // Go treats a '{' that does not start a valid repetition as a literal.
      const rep = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
      if (!rep) {
        out += '\\{';
        continue;
      }
      const min = Number(rep[1]);
      const max = rep[3] ? Number(rep[3]) : min;
      if (min > 1000 || max > 1000 || (rep[3] && max < min)) {
        throw new GoRegexpError(`error parsing regexp: invalid repeat count: \`${rep[0]}\``);
      }
      out += rep[0];
      i += rep[0].length - 1;
      continue;
    }
    if (ch === '}') {
      out += '\\}';
      continue;
    }
    out += ch;
  }
  if (inClass)
    throw new GoRegexpError(
      `error parsing regexp: missing closing ]: \`${src.slice(src.lastIndexOf('['))}\``,
    );
  try {
    return new RegExp(out, flags);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/Unterminated group|Unmatched '\)'/.test(msg)) {
      const kind = /Unterminated/.test(msg) ? 'missing closing )' : 'unexpected )';
      throw new GoRegexpError(`error parsing regexp: ${kind}: \`${pattern}\``);
    }
    if (/Nothing to repeat/.test(msg)) {
      throw new GoRegexpError(
        `error parsing regexp: missing argument to repetition operator: \`${pattern}\``,
      );
    }
    throw new GoRegexpError(`error parsing regexp: ${msg}`);
  }
}

const cache = new Map<string, RegExp | GoRegexpError>();

/** Compiles (and caches) an RE2 pattern; returns the error instead of throwing. */
export function goRegexp(pattern: string): RegExp | GoRegexpError {
  let re = cache.get(pattern);
  if (re === undefined) {
    try {
      re = compileGoRegexp(pattern);
    } catch (e) {
      re = e instanceof GoRegexpError ? e : new GoRegexpError(String(e));
    }
    if (cache.size > 10_000) cache.clear();
    cache.set(pattern, re);
  }
  return re;
}
