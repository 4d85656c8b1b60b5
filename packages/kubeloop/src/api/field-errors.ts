/**
 * Field errors as apimachinery's `util/validation/field` renders them: Go's quoting of values,
 * the error types and their wording, and the aggregate message of a list of causes.
 */
import type { JsonObject as Obj } from './object.js';
import type { CauseType, StatusCause } from './status.js';

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------
// Rendering of values, as Go's field.Error.ErrorBody does it
// ---------------------------------------------------------------------------------------------

export const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * Quotes a string the way Go's `strconv.Quote` (`%q`) does: printable characters are kept,
 * `"` and `\` are escaped, control characters become `\n`, `\x01`, `\u00a0`, ….
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    // A lone surrogate cannot come from valid UTF-8; Go's JSON decoder turns it into U+FFFD.
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (printable.test(ch)) out += ch;
    else if (cp === 7) out += '\\a';
    else if (cp === 8) out += '\\b';
    else if (cp === 12) out += '\\f';
    else if (cp === 10) out += '\\n';
    else if (cp === 13) out += '\\r';
    else if (cp === 9) out += '\\t';
    else if (cp === 11) out += '\\v';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** Formats a number like Go's `%v` does for int64 (integers) and float64 (everything else). */
function goNumber(n: number): string {
  if (Number.isInteger(n) || !Number.isFinite(n)) {
    if (n === Number.POSITIVE_INFINITY) return '+Inf';
    if (n === Number.NEGATIVE_INFINITY) return '-Inf';
    if (Number.isNaN(n)) return 'NaN';
    return String(n);
  }
  const abs = Math.abs(n);
  // Go's %v switches to exponent form below 1e-4 (JS does below 1e-6) and prints at least two
  // exponent digits ("1e-05").
  const text = abs < 1e-4 ? n.toExponential() : String(n);
  return text.replace(/e([+-])(\d)$/, 'e$10$2');
}

/** A value that {@link fieldError} prints verbatim (for callers that render Go syntax themselves). */
export interface RawFieldValue {
  readonly rawFieldValue: string;
}

/** Wraps already-rendered text so that {@link fieldError} prints it as is. */
export const rawFieldValue = (text: string): RawFieldValue => ({ rawFieldValue: text });

/** Passed as the value of a field error to leave the value out, as apimachinery's `omitValue` does. */
export const OMIT_VALUE: unique symbol = Symbol('omitValue');

const isRaw = (v: unknown): v is RawFieldValue =>
  isObj(v) && Object.keys(v).length === 1 && typeof v.rawFieldValue === 'string';

/** Renders a Go `[]string` as `%#v` does: `[]string{"a", "b"}` (or `[]string(nil)`). */
export function goStringSlice(values: readonly string[] | null): string {
  if (values === null) return '[]string(nil)';
  return `[]string{${values.map(goQuote).join(', ')}}`;
}

/**
 * Renders a bad value as a 1.32 API server prints it in a field error: strings quoted (`%q`),
 * numbers and booleans bare, `null` for absent values, string arrays as Go `[]string{…}` and
 * anything else as JSON (where Go would print its own struct syntax, which has no JSON
 * equivalent).
 */
export function renderFieldValue(value: unknown): string {
  // ErrorBody turns a nil value (or a nil pointer) into the string "null", then quotes it.
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (isRaw(value)) return value.rawFieldValue;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return goStringSlice(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

// ---------------------------------------------------------------------------------------------
// field.Error
// ---------------------------------------------------------------------------------------------

/** The apimachinery `field.ErrorType`s, which are also the `reason` of a Status cause. */
export type FieldErrorType = Extract<
  CauseType,
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid'
>;

/**
 * Short names for the field error types, after apimachinery's constructors (`field.Invalid` →
 * `'invalid'`); {@link fieldError} accepts either spelling.
 */
export type FieldErrorKind =
  | 'notFound'
  | 'required'
  | 'duplicate'
  | 'invalid'
  | 'notSupported'
  | 'forbidden'
  | 'tooLong'
  | 'tooMany'
  | 'internal'
  | 'typeInvalid';

const kindToType: Record<FieldErrorKind, FieldErrorType> = {
  notFound: 'FieldValueNotFound',
  required: 'FieldValueRequired',
  duplicate: 'FieldValueDuplicate',
  invalid: 'FieldValueInvalid',
  notSupported: 'FieldValueNotSupported',
  forbidden: 'FieldValueForbidden',
  tooLong: 'FieldValueTooLong',
  tooMany: 'FieldValueTooMany',
  internal: 'InternalError',
  typeInvalid: 'FieldValueTypeInvalid',
};

const typeText: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

// These types never show their value (field.Error.ErrorBody).
const valueless = new Set<FieldErrorType>([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
  'InternalError',
]);

/**
 * Builds one `Status` cause the way apimachinery's `field.Error` renders it: `message` is the
 * error body (`Invalid value: "x": detail`, `Required value`, `Unsupported value: "x": supported
 * values: "a", "b"`, …) and `field` the path, so `ApiError.invalid` prints `field: message`.
 *
 * @param kind the error type, as a cause reason (`'FieldValueInvalid'`) or short name (`'invalid'`).
 * @param value the bad value; omitted for Required/Forbidden/TooLong/Internal, `OMIT_VALUE` to hide it elsewhere.
 *
 * @example
 * ```ts
 * fieldError('FieldValueInvalid', 'metadata.name', 'Bad_Name', 'must be lowercase');
 * // { reason: 'FieldValueInvalid', field: 'metadata.name', message: 'Invalid value: "Bad_Name": must be lowercase' }
 * ```
 */
export function fieldError(
  kind: FieldErrorType | FieldErrorKind,
  field: string,
  value?: unknown,
  detail?: string,
): StatusCause {
  const type = Object.hasOwn(kindToType, kind)
    ? kindToType[kind as FieldErrorKind]
    : (kind as FieldErrorType);
  let message = typeText[type];
  if (!valueless.has(type) && value !== OMIT_VALUE) message += `: ${renderFieldValue(value)}`;
  if (detail) message += `: ${detail}`;
  return { reason: type, message, field };
}

/**
 * Constructors named after apimachinery's `field.Invalid`, `field.Required`, … so that ported
 * validation code reads the same as the Go it follows.
 */
export const fieldErrors = {
  invalid: (field: string, value: unknown, detail: string): StatusCause =>
    fieldError('FieldValueInvalid', field, value, detail),
  typeInvalid: (field: string, value: unknown, detail: string): StatusCause =>
    fieldError('FieldValueTypeInvalid', field, value, detail),
  required: (field: string, detail = ''): StatusCause =>
    fieldError('FieldValueRequired', field, undefined, detail),
  notFound: (field: string, value: unknown): StatusCause => fieldError('FieldValueNotFound', field, value),
  duplicate: (field: string, value: unknown): StatusCause => fieldError('FieldValueDuplicate', field, value),
  forbidden: (field: string, detail: string): StatusCause =>
    fieldError('FieldValueForbidden', field, undefined, detail),
  notSupported: (field: string, value: unknown, supported: readonly string[]): StatusCause =>
    fieldError(
      'FieldValueNotSupported',
      field,
      value,
      supported.length > 0 ? `supported values: ${supported.map(goQuote).join(', ')}` : '',
    ),
  /** `maxLength < 0` gives "value is too long" like apimachinery. */
  tooLong: (field: string, maxLength: number): StatusCause =>
    fieldError(
      'FieldValueTooLong',
      field,
      undefined,
      maxLength >= 0 ? `may not be more than ${maxLength} bytes` : 'value is too long',
    ),
  /** `actual < 0` leaves the count out. */
  tooMany: (field: string, actual: number, max: number): StatusCause =>
    fieldError(
      'FieldValueTooMany',
      field,
      actual >= 0 ? actual : OMIT_VALUE,
      max >= 0 ? `must have at most ${max} items` : 'has too many items',
    ),
  internal: (field: string, detail: string): StatusCause =>
    fieldError('InternalError', field, undefined, detail),
};

/** `field: message` of one cause, as Go's `field.Error.Error()` prints it. */
export const causeText = (c: StatusCause): string =>
  c.field !== undefined ? `${c.field}: ${c.message ?? ''}` : (c.message ?? '');

/**
 * Joins causes like apimachinery's `ErrorList.ToAggregate().Error()`: duplicates dropped, one
 * error printed alone, several as `[a, b]`.
 */
export function aggregateCauses(causes: readonly StatusCause[]): string {
  const seen = [...new Set(causes.map(causeText))];
  if (seen.length === 0) return '';
  if (seen.length === 1) return seen[0] ?? '';
  return `[${seen.join(', ')}]`;
}
