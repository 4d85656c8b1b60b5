/**
 * Field selectors with the semantics of apimachinery's `fields` package (`fieldSelector` query
 * parameter, `kubectl --field-selector`): `a=b`, `a==b`, `a!=b`, comma separated, with `\`
 * escaping of `\`, `,` and `=` in values.
 *
 * Which fields a kind supports (`metadata.name`, `status.phase`, …) is the server's business;
 * this module only parses, matches and prints.
 *
 * @example
 * ```ts
 * const sel = parseFieldSelector('metadata.namespace!=kube-system,status.phase=Running');
 * matchesFields(sel, (f) => ({ 'metadata.namespace': 'default', 'status.phase': 'Running' })[f]); // true
 * ```
 */
import { compareCodePoints } from './labels.js';
import { ApiError } from './status.js';

/** One term of a field selector. `=` and `==` mean the same. */
export interface FieldRequirement {
  field: string;
  operator: '=' | '==' | '!=';
  value: string;
}

/** A field selector: the AND of its requirements; empty selects everything. */
export type FieldSelector = readonly FieldRequirement[];

/**
 * Escapes a literal value for use in a field selector (apimachinery `fields.EscapeValue`):
 * `\` → `\\`, `,` → `\,`, `=` → `\=`.
 */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * Reverses {@link escapeFieldValue} (apimachinery `fields.UnescapeValue`).
 *
 * @throws ApiError 400 for an unknown escape (`invalid field selector: invalid escape sequence: \x`)
 *   or an unescaped `,`/`=` (`invalid field selector: unescaped character in value: 61`, the
 *   character's code, as Go prints a rune with `%v`).
 */
export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw ApiError.badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') {
      throw ApiError.badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  if (inSlash) throw ApiError.badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Splits on commas that are not escaped; the escapes stay in the terms. */
function splitTerms(selector: string): string[] {
  if (selector.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

// `==` is tried before `=` so that it does not leave a leading `=` on the value.
const termOperators = ['!=', '==', '='] as const;

/** Splits a term at the first operator; the field part has no escaping. */
function splitTerm(term: string): [string, FieldRequirement['operator'], string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of termOperators) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

/**
 * Parses a field selector exactly as apimachinery's `fields.ParseSelector`. Terms come back in
 * sorted order (Go sorts them before parsing); whitespace is not trimmed, as in Go. An empty
 * string selects everything.
 *
 * @throws ApiError 400 BadRequest, e.g. `invalid selector: 'a'; can't understand 'a'`.
 */
export function parseFieldSelector(s: string): FieldSelector {
  const parts = splitTerms(s).sort(compareCodePoints);
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const split = splitTerm(part);
    if (!split) throw ApiError.badRequest(`invalid selector: '${s}'; can't understand '${part}'`);
    const [field, operator, raw] = split;
    reqs.push({ field, operator, value: unescapeFieldValue(raw) });
  }
  return reqs;
}

/**
 * True when every requirement holds. `get` returns a field's value for the object; a field it
 * does not know (`undefined`) counts as the empty string, as in apimachinery's `fields.Set`.
 */
export function matchesFields(sel: FieldSelector, get: (field: string) => string | undefined): boolean {
  return sel.every((r) => {
    const actual = get(r.field) ?? '';
    return r.operator === '!=' ? actual !== r.value : actual === r.value;
  });
}

/**
 * The canonical string of a field selector, as apimachinery's `Selector.String()`: `field=value`
 * (also for `==`) or `field!=value`, values escaped, terms joined by commas.
 */
export function formatFieldSelector(sel: FieldSelector): string {
  return sel
    .map((r) => `${r.field}${r.operator === '!=' ? '!=' : '='}${escapeFieldValue(r.value)}`)
    .join(',');
}

/**
 * The value the selector requires for `field` (`field=v` or `field==v`), if any; lets a store
 * narrow a list to one name or namespace. apimachinery `RequiresExactMatch`.
 */
export function requiresExactFieldMatch(sel: FieldSelector, field: string): string | undefined {
  return sel.find((r) => r.field === field && r.operator !== '!=')?.value;
}

/**
 * The field selector that matches exactly the given fields (apimachinery `fields.SelectorFromSet`).
 */
export function fieldSelectorFromSet(
  set: Readonly<Record<string, string>> | undefined | null,
): FieldSelector {
  return Object.entries(set ?? {}).map(
    ([field, value]): FieldRequirement => ({ field, operator: '=', value }),
  );
}
