/**
 * The type errors kube-apiserver finds when it decodes a request body into a built-in kind's Go
 * struct: `json: cannot unmarshal array into Go struct field ConfigMap.data of type
 * map[string]string`. Without this check a ConfigMap whose `data` is a number would be stored,
 * and every typed client (client-go, kubectl) would then fail to decode the whole list.
 *
 * It follows `encoding/json`: `null` is accepted anywhere, unknown fields are skipped (strict
 * field validation reports them), the first type mismatch is reported with the innermost struct
 * and the path of JSON field names from the root (list indices and map keys omitted), and the
 * decoders of `Time`, `Quantity` and `IntOrString` fail with their own messages.
 *
 * @example
 * ```ts
 * const err = decodeTypeError({ data: ['x'] }, 'io.k8s.api.core.v1.ConfigMap');
 * // 'json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string'
 * ```
 */

import { goParseTimeError, RFC3339, RFC3339_MICRO } from '../util/go-time.js';
import { type BuiltinSpec, builtinSpec, type Obj } from './builtin.js';
import { refName } from './schema-view.js';

const TIME = 'io.k8s.apimachinery.pkg.apis.meta.v1.Time';
const MICRO_TIME = 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

const QUANTITY_FORMAT = /^([+-]?(?:\d+\.?\d*|\.\d+))(.*)$/;
const QUANTITY_SUFFIX = /^(|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)$/;
const QUANTITY_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/**
 * Where the decoder is: the innermost struct and the JSON field names leading to the value. One
 * context per decode, entered and left field by field (an error message reads it at once), so
 * that the walk of every write's body allocates no context or path per field.
 */
interface Context {
  struct: string;
  fields: string[];
}

/** A decoder's error that ends decoding at once (custom unmarshalers), unlike a type mismatch. */
class HardError {
  constructor(readonly message: string) {}
}

/** JSON type of a value, in `encoding/json`'s words. */
function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? 'array' : 'object';
}

/** `v1.Container` for `io.k8s.api.core.v1.Container`: package name and type, as Go prints it. */
function goTypeName(definition: string): string {
  const parts = definition.split('.');
  return parts.length >= 2 ? `${parts[parts.length - 2]}.${parts[parts.length - 1]}` : definition;
}

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function unmarshalTypeError(value: string, type: string, ctx: Context | undefined): string {
  if (ctx && (ctx.struct || ctx.fields.length > 0))
    return `json: cannot unmarshal ${value} into Go struct field ${ctx.struct}.${ctx.fields.join('.')} of type ${type}`;
  return `json: cannot unmarshal ${value} into Go value of type ${type}`;
}

/** The first `illegal base64 data` position of a standard, padded base64 text, if any. */
function base64Error(s: string): string | undefined {
  const text = s.replace(/[\r\n]/g, '');
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '=') {
      const rest = text.slice(i);
      if ((rest === '=' || rest === '==') && text.length % 4 === 0 && i >= text.length - 2) return undefined;
      return `illegal base64 data at input byte ${i}`;
    }
    if (!/[A-Za-z0-9+/]/.test(c)) return `illegal base64 data at input byte ${i}`;
  }
  if (text.length % 4 !== 0) return `illegal base64 data at input byte ${text.length - (text.length % 4)}`;
  return undefined;
}

const structNames = new Map<string, string>();

/** A definition's Go struct name (`io.k8s.api.core.v1.ConfigMap` → `ConfigMap`); definitions are few and fixed. */
function structName(definition: string): string {
  let name = structNames.get(definition);
  if (name === undefined) {
    name = definition.slice(definition.lastIndexOf('.') + 1);
    structNames.set(definition, name);
  }
  return name;
}

class Decoder {
  saved: string | undefined;

  constructor(private readonly spec: BuiltinSpec) {}

  private save(message: string): void {
    this.saved ??= message;
  }

  /** Decodes `v` against `schema` (a property schema or a definition). */
  value(v: unknown, schema: Obj, ctx: Context): void {
    if (v === null) return;
    const ref = refName(schema);
    if (ref !== undefined) {
      this.named(v, ref, ctx);
      return;
    }
    this.typed(v, schema, ctx, undefined);
  }

  private named(v: unknown, definition: string, ctx: Context): void {
    switch (definition) {
      case TIME:
      case MICRO_TIME: {
        if (typeof v !== 'string') throw new HardError(unmarshalTypeError(jsonKind(v), 'string', ctx));
        // metav1.Time and MicroTime decode with time.Parse: RFC 3339, MicroTime with six digits.
        const error = goParseTimeError(definition === TIME ? RFC3339 : RFC3339_MICRO, v);
        if (error !== undefined) throw new HardError(error);
        return;
      }
      case QUANTITY: {
        if (typeof v === 'number' && Number.isFinite(v)) return;
        const text = typeof v === 'string' ? v.trim() : JSON.stringify(v);
        const m = QUANTITY_FORMAT.exec(text);
        if (!m) throw new HardError(QUANTITY_ERROR);
        if (!QUANTITY_SUFFIX.test(m[2]!)) throw new HardError("unable to parse quantity's suffix");
        return;
      }
      case INT_OR_STRING:
        if (typeof v === 'string') return;
        if (typeof v !== 'number') throw new HardError(unmarshalTypeError(jsonKind(v), 'int32', ctx));
        if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31)
          throw new HardError(unmarshalTypeError(`number ${String(v)}`, 'int32', ctx));
        return;
    }
    const schema = this.spec.schemas.get(definition);
    if (!schema) return;
    this.typed(v, schema, ctx, definition);
  }

  /** A schema without `$ref`: scalar, array, map, struct or raw value. */
  private typed(v: unknown, schema: Obj, ctx: Context, definition: string | undefined): void {
    const type = schema.type;
    switch (type) {
      case 'string':
        if (schema.format === 'byte') {
          if (typeof v !== 'string') this.save(unmarshalTypeError(jsonKind(v), '[]uint8', ctx));
          else {
            const err = base64Error(v);
            if (err) this.save(err);
          }
        } else if (typeof v !== 'string') this.save(unmarshalTypeError(jsonKind(v), 'string', ctx));
        return;
      case 'integer': {
        const goType = schema.format === 'int32' ? 'int32' : 'int64';
        if (typeof v !== 'number') this.save(unmarshalTypeError(jsonKind(v), goType, ctx));
        else {
          const [min, max] = goType === 'int32' ? [-(2 ** 31), 2 ** 31] : [-(2 ** 63), 2 ** 63];
          if (!Number.isInteger(v) || v < min || v >= max)
            this.save(unmarshalTypeError(`number ${String(v)}`, goType, ctx));
        }
        return;
      }
      case 'number':
        if (typeof v !== 'number') this.save(unmarshalTypeError(jsonKind(v), 'float64', ctx));
        else if (!Number.isFinite(v)) this.save(unmarshalTypeError(`number ${String(v)}`, 'float64', ctx));
        return;
      case 'boolean':
        if (typeof v !== 'boolean') this.save(unmarshalTypeError(jsonKind(v), 'bool', ctx));
        return;
      case 'array': {
        const items = isObj(schema.items) ? schema.items : undefined;
        if (!Array.isArray(v)) {
          if (typeof v === 'string' && items?.type === 'string' && items.format === 'byte') return;
          this.save(unmarshalTypeError(jsonKind(v), `[]${items ? this.goType(items) : 'interface {}'}`, ctx));
          return;
        }
        if (items) for (const item of v) this.value(item, items, ctx);
        return;
      }
    }
    const props = isObj(schema.properties) ? schema.properties : undefined;
    const additional = isObj(schema.additionalProperties) ? schema.additionalProperties : undefined;
    if (!props && !additional) {
      // A raw value (RawExtension, FieldsV1, JSON): decoded whole, but JSON has no infinities.
      this.finiteNumbers(v);
      return;
    }
    if (!isObj(v)) {
      this.save(unmarshalTypeError(jsonKind(v), this.goType(schema, definition), ctx));
      return;
    }
    if (additional) {
      // A map: its values keep the context of the field that holds it.
      for (const key of Object.keys(v)) this.value(v[key], additional, ctx);
      return;
    }
    const outer = ctx.struct;
    if (definition) ctx.struct = structName(definition);
    for (const key of Object.keys(v)) {
      const prop = props![key];
      if (!isObj(prop)) continue;
      ctx.fields.push(key);
      this.value(v[key], prop, ctx);
      ctx.fields.pop();
    }
    ctx.struct = outer;
  }

  /** What Go calls the type of a value described by `schema`. */
  private goType(schema: Obj, definition?: string): string {
    const ref = definition ?? refName(schema);
    if (ref !== undefined) return goTypeName(ref);
    switch (schema.type) {
      case 'string':
        return schema.format === 'byte' ? '[]uint8' : 'string';
      case 'integer':
        return schema.format === 'int32' ? 'int32' : 'int64';
      case 'number':
        return 'float64';
      case 'boolean':
        return 'bool';
      case 'array':
        return `[]${isObj(schema.items) ? this.goType(schema.items) : 'interface {}'}`;
    }
    if (isObj(schema.additionalProperties)) return `map[string]${this.goType(schema.additionalProperties)}`;
    return 'map[string]interface {}';
  }

  private finiteNumbers(v: unknown): void {
    const stack = [v];
    while (stack.length > 0) {
      const cur = stack.pop();
      if (typeof cur === 'number' && !Number.isFinite(cur)) {
        this.save(unmarshalTypeError(`number ${String(cur)}`, 'float64', undefined));
        return;
      }
      if (cur !== null && typeof cur === 'object') stack.push(...Object.values(cur));
    }
  }
}

/**
 * The error Go's JSON decoder reports for `obj` decoded into the built-in definition
 * `definition` (e.g. `io.k8s.api.core.v1.ConfigMap`), or undefined when it decodes. Expects
 * `obj` to nest no deeper than the request decoder allows.
 */
export function decodeTypeError(
  obj: unknown,
  definition: string,
  spec: BuiltinSpec = builtinSpec(),
): string | undefined {
  if (!spec.schemas.has(definition)) return undefined;
  const decoder = new Decoder(spec);
  try {
    decoder.value(obj, { $ref: `#/components/schemas/${definition}` }, { struct: '', fields: [] });
  } catch (err) {
    if (err instanceof HardError) return err.message;
    throw err;
  }
  return decoder.saved;
}

/** Go's zero value of a type, for the null items and map values it cannot hold as null. */
function zeroValue(schema: Obj, spec: BuiltinSpec): unknown {
  const ref = refName(schema);
  if (ref === TIME || ref === MICRO_TIME || ref === QUANTITY || ref === INT_OR_STRING) return null;
  const s = ref !== undefined ? spec.schemas.get(ref) : schema;
  if (!s) return null;
  switch (s.type) {
    case 'string':
      return s.format === 'byte' ? null : '';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
  }
  return isObj(s.properties) ? {} : null;
}

/**
 * Rewrites the `null`s of a decodable object the way a decode into the Go struct and an encode
 * back turn them out: a field set to null is dropped (omitted as empty), and a null list item or
 * map value becomes the zero value of its type (`{}` for a struct, `""` for a string), so that no
 * validation or defaulting code meets a null where Go would never have one.
 */
export function normalizeNulls(obj: Obj, definition: string, spec: BuiltinSpec = builtinSpec()): void {
  const walk = (v: unknown, schema: Obj | undefined): void => {
    if (v === null || typeof v !== 'object' || !schema) return;
    const ref = refName(schema);
    if (ref === TIME || ref === MICRO_TIME || ref === QUANTITY || ref === INT_OR_STRING) return;
    const s = ref !== undefined ? spec.schemas.get(ref) : schema;
    if (!s) return;
    if (Array.isArray(v)) {
      const items = isObj(s.items) ? s.items : undefined;
      if (!items) return;
      for (let i = 0; i < v.length; i++) {
        if (v[i] === null) v[i] = zeroValue(items, spec);
        else walk(v[i], items);
      }
      return;
    }
    const o = v as Obj;
    const props = isObj(s.properties) ? s.properties : undefined;
    const additional = isObj(s.additionalProperties) ? s.additionalProperties : undefined;
    if (props) {
      for (const key of Object.keys(o)) {
        const prop = props[key];
        if (!isObj(prop)) continue;
        if (o[key] === null) delete o[key];
        else walk(o[key], prop);
      }
    } else if (additional) {
      for (const key of Object.keys(o)) {
        if (o[key] === null) o[key] = zeroValue(additional, spec);
        else walk(o[key], additional);
      }
    }
  };
  walk(obj, { $ref: `#/components/schemas/${definition}` });
}
