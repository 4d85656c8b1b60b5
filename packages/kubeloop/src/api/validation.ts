/**
 * Name and metadata validation with the exact messages of a Kubernetes 1.32 API server.
 *
 * The functions mirror apimachinery's `util/validation` (`IsDNS1123Subdomain`, `IsQualifiedName`,
 * …), `util/validation/field` (how a field error is rendered) and `api/validation`
 * (`ValidateObjectMetaAccessor`). Clients such as kubectl and controller tests compare these
 * strings, so every message is spelled the way the Go code spells it, quirks included (the
 * double space in `(e.g. 'MyName',  or 'my.name', …)` is real).
 *
 * @example
 * ```ts
 * const causes = validateObjectMeta({ name: 'Bad_Name' }, { namespaced: false, nameValidation: 'subdomain', create: true });
 * throw ApiError.invalid({ group: '', kind: 'ConfigMap' }, 'Bad_Name', causes);
 * // ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain …
 * ```
 */

import type { JsonObject as Obj } from './object.js';
import type { CauseType, StatusCause } from './status.js';

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------
// Rendering of values, as Go's field.Error.ErrorBody does it
// ---------------------------------------------------------------------------------------------

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

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
  if (value === null || value === undefined) return 'null';
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

// ---------------------------------------------------------------------------------------------
// util/validation
// ---------------------------------------------------------------------------------------------

/** Length in bytes of the UTF-8 encoding, which is what Go's `len(string)` measures. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** `must be no more than N characters` (apimachinery `MaxLenError`). */
export const maxLenError = (length: number): string => `must be no more than ${length} characters`;

/** apimachinery `RegexError`, including its `'a',  or 'b'` spacing. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) out += ' or ';
    out += `'${ex}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

/** `must be non-empty` (apimachinery `EmptyError`). */
export const emptyError = (): string => 'must be non-empty';

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const dns1035LabelRe = new RegExp(`^${dns1035LabelFmt}$`);
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const qualifiedNameRe = new RegExp(`^${qualifiedNameFmt}$`);
const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueRe = new RegExp(`^${labelValueFmt}$`);

/** Maximum length of a DNS-1123 subdomain (253). */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** Maximum length of a DNS label (63). */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** Maximum length of a label value (63). */
export const LABEL_VALUE_MAX_LENGTH = 63;
/** Maximum total size of `metadata.annotations`, keys plus values, in bytes (256 KiB). */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

/** RFC 1123 subdomain (most object names): `[]` when valid, else the reasons. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRe.test(value))
    errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

/** RFC 1123 label (namespace names, …): `[]` when valid, else the reasons. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a valid label can only be failing because of its dots.
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

/** RFC 1035 label (service names): `[]` when valid, else the reasons. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1035LabelRe.test(value))
    errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  return errs;
}

/**
 * Qualified name (label and annotation keys, finalizers): an optional DNS subdomain prefix and
 * `/`, then a name of at most 63 characters. `[]` when valid, else the reasons.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else for (const msg of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${msg}`);
  } else {
    return [
      `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (utf8Length(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!qualifiedNameRe.test(name)) {
    errs.push(
      `name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`,
    );
  }
  return errs;
}

/** Label value: empty, or at most 63 characters of `[A-Za-z0-9_.-]` starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (utf8Length(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRe.test(value))
    errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** apimachinery `path.IsValidPathSegmentName` (the name rule every kind must pass). */
export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return isValidPathSegmentPrefix(name);
}

/** apimachinery `path.IsValidPathSegmentPrefix` (for `generateName`). */
export function isValidPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  if (name.includes('/')) errs.push(`may not contain '/'`);
  if (name.includes('%')) errs.push(`may not contain '%'`);
  return errs;
}

// ---------------------------------------------------------------------------------------------
// api/validation: names
// ---------------------------------------------------------------------------------------------

/**
 * Which rule a kind's names follow: RFC 1123 subdomain (most kinds and all custom resources),
 * RFC 1123 label (Namespace, …), RFC 1035 label (Service) or merely a safe URL path segment.
 */
export type NameValidation = 'subdomain' | 'label' | 'label1035' | 'path-segment';

// A generateName gets random characters appended, so a trailing '-' is fine there.
const maskTrailingDash = (name: string): string => (name.endsWith('-') ? `${name.slice(0, -2)}a` : name);

/**
 * Validates a name (or, with `prefix`, a `generateName`) by the rule of the kind, as
 * apimachinery's `NameIsDNSSubdomain` & co. `[]` when valid.
 */
export function validateName(name: string, rule: NameValidation, prefix = false): string[] {
  switch (rule) {
    case 'subdomain':
      return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
    case 'label':
      return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
    case 'label1035':
      return isDNS1035Label(prefix ? maskTrailingDash(name) : name);
    case 'path-segment':
      return prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name);
  }
}

// ---------------------------------------------------------------------------------------------
// api/validation: ObjectMeta
// ---------------------------------------------------------------------------------------------

/** JSON type name of a value, as OpenAPI validation reports it. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

// The wording of a schema type error, e.g. `metadata.labels in body must be of type object: "string"`.
const typeError = (field: string, value: unknown, want: string): StatusCause => {
  const got = jsonType(value);
  return fieldErrors.typeInvalid(field, got, `${field} in body must be of type ${want}: ${goQuote(got)}`);
};

/** Reads an optional string field; wrong types are reported and read as absent. */
function optString(meta: Obj, key: string, path: string, errs: StatusCause[]): string {
  const v = meta[key];
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  errs.push(typeError(path, v, 'string'));
  return '';
}

/** Reads an optional `map[string]string`; wrong types are reported and skipped. */
function optStringMap(meta: Obj, key: string, path: string, errs: StatusCause[]): Array<[string, string]> {
  const v = meta[key];
  if (v === undefined || v === null) return [];
  if (!isObj(v)) {
    errs.push(typeError(path, v, 'object'));
    return [];
  }
  const out: Array<[string, string]> = [];
  for (const [k, val] of Object.entries(v)) {
    if (typeof val === 'string') out.push([k, val]);
    else errs.push(typeError(`${path}.${k}`, val, 'string'));
  }
  return out;
}

/** Reads an optional array; wrong types are reported and read as empty. */
function optArray(meta: Obj, key: string, path: string, errs: StatusCause[]): unknown[] {
  const v = meta[key];
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  errs.push(typeError(path, v, 'array'));
  return [];
}

/** The name validation rule applies; the caller picks it per kind. */
export interface ValidateObjectMetaOptions {
  /** Whether the kind is namespaced (namespace required) or cluster-scoped (namespace forbidden). */
  namespaced: boolean;
  /** Rule for `metadata.name` and `metadata.generateName`. */
  nameValidation: NameValidation;
  /**
   * True on create: an empty name is accepted when `generateName` is set (the server generates
   * the name). Otherwise a name is always required.
   */
  create: boolean;
}

const FINALIZER_ORPHAN = 'orphan';
const FINALIZER_FOREGROUND = 'foregroundDeletion';

/**
 * Validates the metadata a client sent, like apimachinery's `ValidateObjectMetaAccessor`:
 * generateName and name by the kind's rule, namespace by scope, generation, labels, annotations
 * (keys and the 256 KiB total), owner references, finalizers and managedFields. Values of the
 * wrong JSON type are reported as `FieldValueTypeInvalid` in the wording of OpenAPI validation.
 *
 * Returns the causes in the order the Go code produces them; `[]` means valid.
 *
 * @example
 * ```ts
 * const causes = validateObjectMeta(obj.metadata, { namespaced: true, nameValidation: 'subdomain', create: true });
 * if (causes.length > 0) throw ApiError.invalid({ group: '', kind: 'ConfigMap' }, name, causes);
 * ```
 */
export function validateObjectMeta(meta: unknown, opts: ValidateObjectMetaOptions): StatusCause[] {
  const errs: StatusCause[] = [];
  if (meta !== undefined && meta !== null && !isObj(meta)) return [typeError('metadata', meta, 'object')];
  const m: Obj = isObj(meta) ? meta : {};

  const generateName = optString(m, 'generateName', 'metadata.generateName', errs);
  const name = optString(m, 'name', 'metadata.name', errs);
  const namespace = optString(m, 'namespace', 'metadata.namespace', errs);

  if (generateName.length > 0) {
    for (const msg of validateName(generateName, opts.nameValidation, true)) {
      errs.push(fieldErrors.invalid('metadata.generateName', generateName, msg));
    }
  }
  if (name.length === 0) {
    // The server fills the name in from generateName before it validates, so only a missing
    // pair is an error there.
    if (!(opts.create && generateName.length > 0)) {
      errs.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
    }
  } else {
    for (const msg of validateName(name, opts.nameValidation))
      errs.push(fieldErrors.invalid('metadata.name', name, msg));
  }

  if (opts.namespaced) {
    if (namespace.length === 0) errs.push(fieldErrors.required('metadata.namespace'));
    else
      for (const msg of validateName(namespace, 'label'))
        errs.push(fieldErrors.invalid('metadata.namespace', namespace, msg));
  } else if (namespace.length > 0) {
    errs.push(fieldErrors.forbidden('metadata.namespace', 'not allowed on this type'));
  }

  const generation = m.generation;
  if (generation !== undefined && generation !== null) {
    if (typeof generation !== 'number' || !Number.isInteger(generation)) {
      errs.push(typeError('metadata.generation', generation, 'integer'));
    } else if (generation < 0) {
      errs.push(fieldErrors.invalid('metadata.generation', generation, 'must be greater than or equal to 0'));
    }
  }

  errs.push(...validateLabels(optStringMap(m, 'labels', 'metadata.labels', errs), 'metadata.labels'));
  errs.push(
    ...validateAnnotations(
      optStringMap(m, 'annotations', 'metadata.annotations', errs),
      'metadata.annotations',
    ),
  );
  errs.push(
    ...validateOwnerReferences(
      optArray(m, 'ownerReferences', 'metadata.ownerReferences', errs),
      'metadata.ownerReferences',
    ),
  );

  const finalizers: string[] = [];
  optArray(m, 'finalizers', 'metadata.finalizers', errs).forEach((f, i) => {
    if (typeof f === 'string') finalizers.push(f);
    else errs.push(typeError(`metadata.finalizers[${i}]`, f, 'string'));
  });
  errs.push(...validateFinalizers(finalizers, 'metadata.finalizers'));

  errs.push(
    ...validateManagedFields(
      optArray(m, 'managedFields', 'metadata.managedFields', errs),
      'metadata.managedFields',
    ),
  );
  return errs;
}

type StringPairs = Iterable<[string, string]> | Readonly<Record<string, string>>;

const entriesOf = (pairs: StringPairs): Iterable<[string, string]> =>
  Symbol.iterator in pairs ? (pairs as Iterable<[string, string]>) : Object.entries(pairs);

/** Label keys and values, each error on the labels field itself (apimachinery `ValidateLabels`). */
export function validateLabels(labels: StringPairs, field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  for (const [k, v] of entriesOf(labels)) {
    for (const msg of isQualifiedName(k)) errs.push(fieldErrors.invalid(field, k, msg));
    for (const msg of isValidLabelValue(v)) errs.push(fieldErrors.invalid(field, v, msg));
  }
  return errs;
}

/** Annotation keys (qualified names, case-insensitive) and their total size (apimachinery `ValidateAnnotations`). */
export function validateAnnotations(annotations: StringPairs, field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  const entries = [...entriesOf(annotations)];
  let total = 0;
  for (const [k, v] of entries) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(fieldErrors.invalid(field, k, msg));
    total += utf8Length(k) + utf8Length(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES)
    errs.push(fieldErrors.tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  return errs;
}

/** Splits an apiVersion like apimachinery's `schema.FromAPIVersionAndKind`. */
function parseApiVersion(apiVersion: string): { group: string; version: string } {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  const slashes = apiVersion.split('/').length - 1;
  if (slashes === 0) return { group: '', version: apiVersion };
  if (slashes === 1) {
    const i = apiVersion.indexOf('/');
    return { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
  }
  return { group: '', version: '' };
}

/**
 * Owner references (apimachinery `ValidateOwnerReferences`): apiVersion with a version, kind,
 * name and uid present, no `v1` Event owner, at most one `controller: true`. Errors point at the
 * list itself, not at an index, exactly as the Go code does.
 */
export function validateOwnerReferences(refs: readonly unknown[], field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  let firstController = '';
  refs.forEach((raw, i) => {
    const at = `${field}[${i}]`;
    if (!isObj(raw)) {
      errs.push(typeError(at, raw, 'object'));
      return;
    }
    const str = (key: string): string => {
      const v = raw[key];
      if (v === undefined || v === null) return '';
      if (typeof v === 'string') return v;
      errs.push(typeError(`${at}.${key}`, v, 'string'));
      return '';
    };
    const bool = (key: string): boolean => {
      const v = raw[key];
      if (v === undefined || v === null) return false;
      if (typeof v === 'boolean') return v;
      errs.push(typeError(`${at}.${key}`, v, 'boolean'));
      return false;
    };
    const apiVersion = str('apiVersion');
    const kind = str('kind');
    const name = str('name');
    const uid = str('uid');
    const controller = bool('controller');
    bool('blockOwnerDeletion');

    const gv = parseApiVersion(apiVersion);
    if (gv.version.length === 0)
      errs.push(fieldErrors.invalid(`${field}.apiVersion`, apiVersion, 'version must not be empty'));
    if (kind.length === 0) errs.push(fieldErrors.invalid(`${field}.kind`, kind, 'kind must not be empty'));
    if (name.length === 0) errs.push(fieldErrors.invalid(`${field}.name`, name, 'name must not be empty'));
    if (uid.length === 0) errs.push(fieldErrors.invalid(`${field}.uid`, uid, 'uid must not be empty'));
    if (gv.group === '' && gv.version === 'v1' && kind === 'Event') {
      errs.push(fieldErrors.invalid(field, raw, `/v1, Kind=Event is disallowed from being an owner`));
    }
    if (controller) {
      const current = `${kind}/${name}`;
      if (firstController !== '') {
        errs.push(
          fieldErrors.invalid(
            field,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  });
  return errs;
}

/** Finalizer names are qualified names; `orphan` and `foregroundDeletion` exclude each other. */
export function validateFinalizers(finalizers: readonly string[], field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  for (const f of finalizers) {
    for (const msg of isQualifiedName(f)) errs.push(fieldErrors.invalid(field, f, msg));
  }
  if (finalizers.includes(FINALIZER_ORPHAN) && finalizers.includes(FINALIZER_FOREGROUND)) {
    errs.push(
      fieldErrors.invalid(
        field,
        finalizers,
        `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`,
      ),
    );
  }
  return errs;
}

/** `%#U` of a rune: `U+0007`, or `U+00E9 'é'` when printable. */
function goRuneU(cp: number): string {
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const ch = String.fromCodePoint(cp);
  return printable.test(ch) ? `${hex} '${ch}'` : hex;
}

/** managedFields entries (apimachinery `ValidateManagedFields`). */
export function validateManagedFields(entries: readonly unknown[], field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  entries.forEach((raw, i) => {
    const at = `${field}[${i}]`;
    if (!isObj(raw)) {
      errs.push(typeError(at, raw, 'object'));
      return;
    }
    const str = (key: string): string => {
      const v = raw[key];
      if (v === undefined || v === null) return '';
      if (typeof v === 'string') return v;
      errs.push(typeError(`${at}.${key}`, v, 'string'));
      return '';
    };
    const operation = str('operation');
    if (operation !== 'Apply' && operation !== 'Update') {
      errs.push(fieldErrors.invalid(`${at}.operation`, operation, 'must be `Apply` or `Update`'));
    }
    const fieldsType = str('fieldsType');
    if (fieldsType.length > 0 && fieldsType !== 'FieldsV1') {
      errs.push(fieldErrors.invalid(`${at}.fieldsType`, fieldsType, 'must be `FieldsV1`'));
    }
    errs.push(...validateFieldManager(str('manager'), `${at}.manager`));
    if (utf8Length(str('subresource')) > 256) errs.push(fieldErrors.tooLong(`${at}.subresource`, 256));
  });
  return errs;
}

/** A field manager name: at most 128 bytes of printable characters (apimachinery `ValidateFieldManager`). */
export function validateFieldManager(manager: string, field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  if (utf8Length(manager) > 128) errs.push(fieldErrors.tooLong(field, 128));
  let pos = 0;
  for (const ch of manager) {
    const cp = ch.codePointAt(0) ?? 0;
    if (!printable.test(ch)) {
      errs.push(fieldErrors.invalid(field, manager, `invalid character ${goRuneU(cp)} (at position ${pos})`));
    }
    pos += utf8Length(ch);
  }
  return errs;
}

/** Formats an RFC 3339 timestamp like Go's `time.Time.String()` in UTC, as immutability errors print it. */
function goTime(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return v;
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return rawFieldValue(
    `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000 UTC`,
  );
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Validates metadata on update against the stored object (apimachinery
 * `ValidateObjectMetaAccessorUpdate`): no new finalizers once deletion started, a
 * resourceVersion is present, generation never decreases, and name, namespace, uid,
 * creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds are immutable. Labels,
 * annotations, owner references and managedFields are checked like on create; call
 * {@link validateObjectMeta} (create: false) for the name, namespace and type checks.
 */
export function validateObjectMetaUpdate(newMeta: unknown, oldMeta: unknown): StatusCause[] {
  const errs: StatusCause[] = [];
  const n: Obj = isObj(newMeta) ? newMeta : {};
  const o: Obj = isObj(oldMeta) ? oldMeta : {};
  const strs = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

  if (o.deletionTimestamp !== undefined && o.deletionTimestamp !== null) {
    const old = new Set(strs(o.finalizers));
    const extra = [...new Set(strs(n.finalizers).filter((f) => !old.has(f)))].sort();
    if (extra.length > 0) {
      errs.push(
        fieldErrors.forbidden(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(extra)}`,
        ),
      );
    }
  }
  const rv = typeof n.resourceVersion === 'string' ? n.resourceVersion : '';
  if (rv.length === 0)
    errs.push(fieldErrors.invalid('metadata.resourceVersion', rv, 'must be specified for an update'));

  const gen = (v: unknown) => (typeof v === 'number' ? v : 0);
  if (gen(n.generation) < gen(o.generation)) {
    errs.push(fieldErrors.invalid('metadata.generation', gen(n.generation), 'must not be decremented'));
  }

  const immutable = (key: string, render: (v: unknown) => unknown, absent: unknown) => {
    if (!sameJson(n[key], o[key])) {
      const v = n[key];
      errs.push(
        fieldErrors.invalid(
          `metadata.${key}`,
          v === undefined || v === null ? absent : render(v),
          'field is immutable',
        ),
      );
    }
  };
  const id = (v: unknown) => v;
  immutable('name', id, '');
  immutable('namespace', id, '');
  immutable('uid', id, '');
  immutable('creationTimestamp', goTime, rawFieldValue('0001-01-01 00:00:00 +0000 UTC'));
  immutable('deletionTimestamp', goTime, null);
  immutable('deletionGracePeriodSeconds', id, null);

  const scratch: StatusCause[] = [];
  errs.push(...validateLabels(optStringMap(n, 'labels', 'metadata.labels', scratch), 'metadata.labels'));
  errs.push(
    ...validateAnnotations(
      optStringMap(n, 'annotations', 'metadata.annotations', scratch),
      'metadata.annotations',
    ),
  );
  errs.push(
    ...validateOwnerReferences(
      optArray(n, 'ownerReferences', 'metadata.ownerReferences', scratch),
      'metadata.ownerReferences',
    ),
  );
  errs.push(
    ...validateManagedFields(
      optArray(n, 'managedFields', 'metadata.managedFields', scratch),
      'metadata.managedFields',
    ),
  );
  return errs;
}
