/**
 * OpenAPI value validation of custom resources, as apiextensions runs kube-openapi's
 * `validate.SchemaValidator` and converts its results to field errors
 * (`kubeOpenAPIResultToFieldErrors`).
 *
 * A schema is compiled once into a tree of closures (cached per schema object); the messages,
 * their order per node (type, allOf/anyOf/oneOf/not, string, format, number, array, enum,
 * object) and quirks (`Invalid value: 11: spec.replicas in body should be less than or equal to
 * 10`, `Too many: 4: must have at most 3 items`, root-level messages that start with a space)
 * are kube's.
 */
import { compareCodePoints } from '../api/labels.js';
import type { StatusCause } from '../api/status.js';
import { fieldError, fieldErrors, goQuote, OMIT_VALUE, rawFieldValue } from '../api/validation.js';
import { stringFormatChecker } from './formats.js';
import { goRegexp } from './regex.js';
import type { JSONSchemaProps } from './types.js';
import { deepEqualJSON, goBadValue, goFloat, goJSON, isObj, jsonTypeOf, runeCount } from './util.js';

/** Validates a value at a kube-openapi path (`''` at the root, `spec.replicas`, `spec.items[0]`). */
export type ValueValidator = (value: unknown, path: string, out: ValidationSink) => void;

/** Collects causes; `prefix` is the field path the validated value sits at (kube's `fldPath`). */
export interface ValidationSink {
  readonly prefix: string;
  readonly causes: StatusCause[];
}

const IN = 'body';

/** `fldPath.Child(strings.TrimPrefix(name, "."))`, or `fldPath` for the root. */
function errPath(sink: ValidationSink, name: string): string {
  const n = name.startsWith('.') ? name.slice(1) : name;
  if (n === '') return sink.prefix || '<nil>';
  return sink.prefix ? `${sink.prefix}.${n}` : n;
}

const rootField = (sink: ValidationSink): string => sink.prefix || '<nil>';

// The numbers of errors.Validation.Value: int64 bare, float64 with %v.
const numValue = (n: number): unknown => goBadValue(n);

function typeError(sink: ValidationSink, path: string, typeName: string, actual: string): void {
  sink.causes.push(
    fieldError(
      'FieldValueTypeInvalid',
      errPath(sink, path),
      actual,
      `${path} in ${IN} must be of type ${typeName}: "${actual}"`,
    ),
  );
}

function invalid(sink: ValidationSink, path: string, value: unknown, msg: string): void {
  sink.causes.push(fieldErrors.invalid(errPath(sink, path), value, msg));
}

/** Go's `swag.IsFloat64AJSONInteger`. */
function isFloat64AJSONInteger(f: number): boolean {
  if (!Number.isFinite(f)) return false;
  if (Number.isInteger(f)) return true;
  const g = Math.trunc(f);
  const diff = Math.abs(f - g);
  return diff / Math.min(Math.abs(f) + Math.abs(g), Number.MAX_VALUE) < 1e-9;
}

// apiextensions' StripUnsupportedFormatsPostProcess: formats that are not validated are dropped.
function effectiveFormat(s: JSONSchemaProps): string {
  const f = s.format ?? '';
  if (!f) return '';
  const t = s.type ?? '';
  if (t === '' || t === 'string') return stringFormatChecker(f) ? f : '';
  if (t === 'integer') return f === 'int32' || f === 'int64' ? f : '';
  if (t === 'number') return f === 'float' || f === 'double' ? f : '';
  return '';
}

const compiled = new WeakMap<object, ValueValidator>();

/**
 * Compiles an OpenAPI v3 schema (a CRD version's `openAPIV3Schema`, or any node of it) into a
 * validator. Compiled validators are cached per schema object.
 *
 * @example
 * ```ts
 * const v = compileValueValidator({ type: 'object', properties: { replicas: { type: 'integer', maximum: 10 } } });
 * const sink = { prefix: '', causes: [] };
 * v({ replicas: 11 }, '', sink);
 * // sink.causes[0].message === 'Invalid value: 11: replicas in body should be less than or equal to 10'
 * ```
 */
export function compileValueValidator(schema: JSONSchemaProps): ValueValidator {
  const hit = compiled.get(schema);
  if (hit) return hit;
  const v = compileNode(schema);
  compiled.set(schema, v);
  return v;
}

/**
 * Validates a value against a schema and returns the causes, as apiextensions'
 * `ValidateCustomResource(fldPath, obj, validator)`.
 *
 * @param prefix the field path of the value (`''` for a whole object; `…default` for defaults).
 * @example
 * ```ts
 * validateValue(schema, { spec: { replicas: 'x' } });
 * // [{ field: 'spec.replicas', reason: 'FieldValueTypeInvalid',
 * //    message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"' }]
 * ```
 */
export function validateValue(schema: JSONSchemaProps, value: unknown, prefix = ''): StatusCause[] {
  const sink: ValidationSink = { prefix, causes: [] };
  compileValueValidator(schema)(value, '', sink);
  return sink.causes;
}

function compileNode(s: JSONSchemaProps): ValueValidator {
  const checks: ValueValidator[] = [];
  const types = s['x-kubernetes-int-or-string'] ? ['integer', 'string'] : s.type ? [s.type] : [];
  const typeText = types.join(',');
  const nullable = s.nullable === true;
  const format = effectiveFormat(s);
  const hasNumber = types.includes('number');
  const hasInteger = types.includes('integer');
  // At most two types (int-or-string): two comparisons instead of a search per value.
  const t0 = types[0];
  const t1 = types[1];
  const isType = (t: string): boolean => t === t0 || t === t1;

  // --- type validator
  const typeApplies = types.length > 0 || format !== '';
  const typeCheck = (v: unknown, path: string, sink: ValidationSink): void => {
    if (v === null || v === undefined) {
      if (types.length > 0 && !types.includes('null') && !nullable) typeError(sink, path, typeText, 'null');
      return;
    }
    const schType = jsonTypeOf(v);
    const goFormat = schType === 'integer' ? 'int64' : schType === 'number' ? 'float64' : '';
    const isIntFloat = schType === 'integer' && hasNumber;
    if (
      schType !== 'string' &&
      schType !== 'array' &&
      format !== '' &&
      !(isType(schType) || goFormat === format || isIntFloat)
    ) {
      typeError(sink, path, format, goFormat);
      return;
    }
    if (!(hasNumber || hasInteger) && format !== '' && (schType === 'string' || schType === 'array')) return;
    if (!(isType(schType) || isIntFloat)) typeError(sink, path, typeText, schType);
  };

  // --- allOf / anyOf / oneOf / not
  const allOf = (s.allOf ?? []).map(compileValueValidator);
  const anyOf = (s.anyOf ?? []).map(compileValueValidator);
  const oneOf = (s.oneOf ?? []).map(compileValueValidator);
  const not = s.not ? compileValueValidator(s.not) : undefined;
  const propsCheck =
    allOf.length + anyOf.length + oneOf.length > 0 || not
      ? (v: unknown, path: string, sink: ValidationSink): void => {
          const sub = (fn: ValueValidator): StatusCause[] => {
            const inner: ValidationSink = { prefix: sink.prefix, causes: [] };
            fn(v, path, inner);
            return inner.causes;
          };
          // kube-openapi keeps the errors of one failed branch only (the one with the most
          // successful checks, the first on a tie), not those of every branch.
          if (anyOf.length > 0) {
            let best: StatusCause[] | undefined;
            let ok = false;
            for (const fn of anyOf) {
              const r = sub(fn);
              if (r.length === 0) {
                ok = true;
                break;
              }
              best ??= r;
            }
            if (!ok) {
              sink.causes.push(
                fieldErrors.invalid(
                  rootField(sink),
                  '',
                  `${goQuote(path)} must validate at least one schema (anyOf)`,
                ),
              );
              sink.causes.push(...(best ?? []));
            }
          }
          if (oneOf.length > 0) {
            let valid = 0;
            let best: StatusCause[] | undefined;
            for (const fn of oneOf) {
              const r = sub(fn);
              if (r.length === 0) valid++;
              else best ??= r;
            }
            if (valid !== 1) {
              const extra = valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`;
              sink.causes.push(
                fieldErrors.invalid(
                  rootField(sink),
                  '',
                  `${goQuote(path)} must validate one and only one schema (oneOf). ${extra}`,
                ),
              );
              if (valid === 0) sink.causes.push(...(best ?? []));
            }
          }
          if (allOf.length > 0) {
            let validated = 0;
            for (const fn of allOf) {
              const r = sub(fn);
              if (r.length === 0) validated++;
              sink.causes.push(...r);
            }
            if (validated !== allOf.length) {
              const none = validated === 0 ? '. None validated' : '';
              sink.causes.push(
                fieldErrors.invalid(
                  rootField(sink),
                  '',
                  `${goQuote(path)} must validate all the schemas (allOf)${none}`,
                ),
              );
            }
          }
          if (not && sub(not).length === 0)
            sink.causes.push(
              fieldErrors.invalid(rootField(sink), '', `${goQuote(path)} must not validate the schema (not)`),
            );
        }
      : undefined;

  // --- string
  const { maxLength, minLength, pattern } = s;
  const re = pattern ? goRegexp(pattern) : undefined;
  const stringCheck =
    maxLength !== undefined || minLength !== undefined || pattern
      ? (v: string, path: string, sink: ValidationSink): void => {
          const len = maxLength !== undefined || minLength !== undefined ? runeCount(v) : 0;
          if (maxLength !== undefined && len > maxLength)
            sink.causes.push(fieldErrors.tooLong(errPath(sink, path), maxLength));
          if (minLength !== undefined && len < minLength)
            invalid(sink, path, v, `${path} in ${IN} should be at least ${minLength} chars long`);
          if (pattern && re instanceof RegExp && !re.test(v))
            invalid(sink, path, v, `${path} in ${IN} should match '${pattern}'`);
        }
      : undefined;

  // --- format (string values only)
  const formatChecker =
    format && (s.type ?? '') !== 'integer' && (s.type ?? '') !== 'number'
      ? stringFormatChecker(format)
      : undefined;

  // --- number
  const { multipleOf, maximum, minimum } = s;
  const exclMax = s.exclusiveMaximum === true;
  const exclMin = s.exclusiveMinimum === true;
  const numberCheck =
    multipleOf !== undefined || maximum !== undefined || minimum !== undefined
      ? (v: number, path: string, sink: ValidationSink): void => {
          const isInt = Number.isInteger(v);
          if (multipleOf !== undefined) {
            if (multipleOf < 0) {
              invalid(
                sink,
                path,
                numValue(multipleOf),
                `factor MultipleOf declared for ${path} must be positive: ${goFloat(multipleOf)}`,
              );
            } else if (isInt && Number.isInteger(multipleOf) && multipleOf !== 0) {
              if (v % multipleOf !== 0)
                invalid(sink, path, numValue(v), `${path} in ${IN} should be a multiple of ${multipleOf}`);
            } else {
              const mult = multipleOf < 1 ? (1 / multipleOf) * v : v / multipleOf;
              if (!isFloat64AJSONInteger(mult))
                invalid(
                  sink,
                  path,
                  numValue(v),
                  `${path} in ${IN} should be a multiple of ${goFloat(multipleOf)}`,
                );
            }
          }
          if (maximum !== undefined) {
            // Integer data is compared with the bound truncated to int64, as Go does.
            const max = isInt ? Math.trunc(maximum) : maximum;
            if ((!exclMax && v > max) || (exclMax && v >= max)) {
              const shown = isInt ? String(max) : goFloat(max);
              invalid(
                sink,
                path,
                numValue(v),
                `${path} in ${IN} should be less than ${exclMax ? '' : 'or equal to '}${shown}`,
              );
            }
          }
          if (minimum !== undefined) {
            const min = isInt ? Math.trunc(minimum) : minimum;
            if ((!exclMin && v < min) || (exclMin && v <= min)) {
              const shown = isInt ? String(min) : goFloat(min);
              invalid(
                sink,
                path,
                numValue(v),
                `${path} in ${IN} should be greater than ${exclMin ? '' : 'or equal to '}${shown}`,
              );
            }
          }
        }
      : undefined;

  // --- array
  const itemsSchema = Array.isArray(s.items) ? undefined : s.items;
  const itemCheck = itemsSchema ? compileValueValidator(itemsSchema) : undefined;
  const { minItems, maxItems } = s;
  const unique = s.uniqueItems === true;
  const arrayCheck =
    itemCheck || minItems !== undefined || maxItems !== undefined || unique
      ? (v: unknown[], path: string, sink: ValidationSink): void => {
          if (itemCheck) for (let i = 0; i < v.length; i++) itemCheck(v[i], `${path}[${i}]`, sink);
          if (minItems !== undefined && v.length < minItems)
            invalid(sink, path, v.length, `${path} in ${IN} should have at least ${minItems} items`);
          if (maxItems !== undefined && v.length > maxItems)
            sink.causes.push(fieldErrors.tooMany(errPath(sink, path), v.length, maxItems));
          if (unique) {
            const seen = new Set<string>();
            for (const x of v) {
              const k = goJSON(x);
              if (seen.has(k)) {
                invalid(sink, path, '', `${path} in ${IN} shouldn't contain duplicates`);
                break;
              }
              seen.add(k);
            }
          }
        }
      : undefined;

  // --- enum
  const enumValues = s.enum;
  // Non-string enum values are shown as their JSON text, as apiextensions marshals them.
  const enumStrings = (enumValues ?? []).map((e) => (typeof e === 'string' ? e : goJSON(e)));
  const enumCheck = enumValues
    ? (v: unknown, path: string, sink: ValidationSink): void => {
        for (const e of enumValues) if (deepEqualJSON(v ?? null, e)) return;
        sink.causes.push(fieldErrors.notSupported(errPath(sink, path), goBadValue(v), enumStrings));
      }
    : undefined;

  // --- object
  // kube-openapi walks a Go map of properties, in no fixed order: they are checked in sorted
  // order here, so that the causes of several properties come out the same on every request.
  const props = s.properties
    ? Object.entries(s.properties)
        .sort(([a], [b]) => compareCodePoints(a, b))
        .map(([k, p]) => [k, compileValueValidator(p)] as const)
    : [];
  const propNames = new Set(props.map(([k]) => k));
  const propKeys = props.map(([k]) => k);
  const propChecks = props.map(([, c]) => c);
  // The paths of the properties below the last parent path: objects at the same place (every
  // object's `spec`) share them instead of joining them again.
  let memoParent: string | undefined;
  let memoPaths: (string | undefined)[] = [];
  const childPath = (path: string, i: number): string => {
    if (path !== memoParent) {
      memoParent = path;
      memoPaths = new Array<string | undefined>(propKeys.length);
    }
    let p = memoPaths[i];
    if (p === undefined) {
      const k = propKeys[i]!;
      p = path === '' ? k : `${path}.${k}`;
      memoPaths[i] = p;
    }
    return p;
  };
  const required = s.required ?? [];
  const { minProperties, maxProperties } = s;
  const addl = s.additionalProperties;
  const addlCheck = isObj(addl) ? compileValueValidator(addl as JSONSchemaProps) : undefined;
  const addlForbidden = addl === false;
  const objectCheck =
    props.length > 0 ||
    required.length > 0 ||
    minProperties !== undefined ||
    maxProperties !== undefined ||
    addl !== undefined
      ? (v: Record<string, unknown>, path: string, sink: ValidationSink): void => {
          // Since kube-openapi#412 (Kubernetes 1.28) a property count error no longer ends the
          // object's validation: the properties are still checked.
          if (minProperties !== undefined || maxProperties !== undefined) {
            const n = Object.keys(v).length;
            if (minProperties !== undefined && n < minProperties)
              invalid(sink, path, n, `${path} in ${IN} should have at least ${minProperties} properties`);
            if (maxProperties !== undefined && n > maxProperties)
              sink.causes.push(fieldErrors.tooMany(errPath(sink, path), n, maxProperties));
          }
          if (addlForbidden || addlCheck) {
            // The value's keys are a Go map too: sorted, for a stable order.
            const extra = Object.keys(v)
              .filter((k) => !propNames.has(k))
              .sort(compareCodePoints);
            if (addlForbidden)
              for (const k of extra) invalid(sink, path, k, `${path}.${k} in ${IN} is a forbidden property`);
            else for (const k of extra) addlCheck!(v[k], `${path}.${k}`, sink);
          }
          for (let i = 0; i < propKeys.length; i++) {
            const k = propKeys[i]!;
            if (Object.hasOwn(v, k)) propChecks[i]!(v[k], childPath(path, i), sink);
          }
          for (const k of required) {
            if (!Object.hasOwn(v, k)) sink.causes.push(fieldErrors.required(errPath(sink, `${path}.${k}`)));
          }
        }
      : undefined;

  if (typeApplies) checks.push(typeCheck);
  if (propsCheck) checks.push(propsCheck);
  const hasAny =
    typeApplies ||
    propsCheck ||
    stringCheck ||
    formatChecker ||
    numberCheck ||
    arrayCheck ||
    enumCheck ||
    objectCheck;
  if (!hasAny) return () => {};

  return (v, path, sink) => {
    if (v === null || v === undefined) {
      if (typeApplies) typeCheck(v, path, sink);
      enumCheck?.(v, path, sink);
      return;
    }
    if (typeApplies) typeCheck(v, path, sink);
    propsCheck?.(v, path, sink);
    if (typeof v === 'string') {
      stringCheck?.(v, path, sink);
      if (formatChecker && !formatChecker(v))
        sink.causes.push(
          fieldError(
            'FieldValueTypeInvalid',
            errPath(sink, path),
            v,
            `${path} in ${IN} must be of type ${format}: ${goQuote(v)}`,
          ),
        );
    } else if (typeof v === 'number') {
      numberCheck?.(v, path, sink);
    } else if (Array.isArray(v)) {
      arrayCheck?.(v, path, sink);
    }
    enumCheck?.(v, path, sink);
    if (objectCheck && isObj(v)) objectCheck(v, path, sink);
  };
}

/** Re-exported so callers can build the same values. */
export { OMIT_VALUE, rawFieldValue };
