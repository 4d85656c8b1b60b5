/**
 * Field validation of request objects (`fieldValidation=Strict|Warn|Ignore`): decoding into the
 * kind's type, unknown and duplicate fields, as the apiserver's decoders report them.
 */
import { ApiError, fieldError } from 'kubeloop/api';
import { cannotBeHandledMessage, strictDecodingMessage } from '../../openapi/index.js';
import type { ResourceType } from '../../registry/types.js';
import { isObject, type Obj } from '../../util/object.js';
import { nestingExceeds } from '../body.js';
import type { OpenApiEndpoints } from './scope.js';

/** fieldValidation=Strict|Warn|Ignore on a request object; returns Warning texts. */
export function checkFields(
  openapi: OpenApiEndpoints,
  t: ResourceType,
  obj: Obj,
  raw: string | undefined,
  query: URLSearchParams,
  verb: 'create' | 'update' | 'patch',
  patchShown?: () => string,
  /** go-yaml's strict error of a YAML body (duplicate keys), reported before the fields' own. */
  yamlStrictError?: string,
): string[] {
  const mode = query.get('fieldValidation') || 'Warn';
  if (mode !== 'Strict' && mode !== 'Warn' && mode !== 'Ignore') {
    throw ApiError.badRequest(
      `fieldValidation: Unsupported value: "${mode}": supported values: "Ignore", "Strict", "Warn"`,
    );
  }
  // A patch can nest a body deeper than any request did; the server's walks are recursive.
  if (nestingExceeds(obj))
    throw ApiError.badRequest(`couldn't get version/kind; json parse error: exceeded max depth`);
  // Decoding into the Go struct fails before strict field validation looks at anything.
  const typeError = openapi.decode(t, obj);
  if (typeError !== undefined) {
    if (verb === 'patch') {
      // Like strict errors below: field.Invalid("patch", …) of a kindless, nameless object.
      const cause = fieldError(
        'FieldValueInvalid',
        'patch',
        patchShown?.() ?? JSON.stringify(obj),
        typeError,
      );
      throw new ApiError({
        code: 422,
        reason: 'Invalid',
        message: ` "" is invalid: ${cause.field}: ${cause.message}`,
        details: { causes: [cause] },
      });
    }
    throw ApiError.badRequest(
      `${t.kind} in version ${JSON.stringify(t.version)} cannot be handled as a ${t.kind}: ${typeError}`,
    );
  }
  if (mode === 'Ignore') {
    openapi.pruneUnknown(t, obj);
    return [];
  }
  // Warn keeps the object whatever its problems: find and prune them in one walk.
  const leading = yamlStrictError === undefined ? [] : [yamlStrictError];
  if (mode === 'Warn') return [...leading, ...openapi.fieldProblems(t, obj, raw, true)];
  const problems = [...leading, ...openapi.fieldProblems(t, obj, raw)];
  if (problems.length > 0 && mode === 'Strict') {
    if (verb === 'patch') {
      // patch.go reports them as field.Invalid("patch", …) of a kindless, nameless object: a 422.
      const cause = fieldError(
        'FieldValueInvalid',
        'patch',
        patchShown?.() ?? JSON.stringify(obj),
        strictDecodingMessage(problems),
      );
      throw new ApiError({
        code: 422,
        reason: 'Invalid',
        message: ` "" is invalid: ${cause.field}: ${cause.message}`,
        details: { causes: [cause] },
      });
    }
    throw ApiError.badRequest(cannotBeHandledMessage(t.kind, t.version, problems));
  }
  openapi.pruneUnknown(t, obj);
  return problems;
}

/**
 * `managedFields: []` (or one empty entry) asks the field manager to drop every entry. Decoding
 * into the Go type keeps that empty list, though its JSON encoding would omit it: keep it through
 * the normalisation of `checkFields`.
 */
export function keepManagedFieldsReset<T>(obj: Obj, check: () => T): T {
  const mf = isObject(obj.metadata) ? obj.metadata.managedFields : undefined;
  const reset =
    Array.isArray(mf) &&
    (mf.length === 0 || (mf.length === 1 && isObject(mf[0]) && Object.keys(mf[0]).length === 0));
  const out = check();
  if (reset && isObject(obj.metadata)) obj.metadata.managedFields = [];
  return out;
}

/** Go's `%v` of a value decoded from JSON into `interface{}`: `map[k:v …]` (sorted keys), `[a b]`, `<nil>`. */
export function goSprint(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goSprint).join(' ')}]`;
  if (isObject(v))
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goSprint(v[k])}`)
      .join(' ')}]`;
  if (typeof v === 'number' && !Number.isInteger(v)) {
    // float64 with the shortest digits; %e notation below 1e-4 and from 1e6, exponent of 2+ digits.
    const [mantissa, exp] = v.toExponential().split('e') as [string, string];
    const e = Number(exp);
    if (e >= -4 && e < 6) return String(v);
    return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  return String(v);
}
