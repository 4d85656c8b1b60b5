/**
 * Protobuf → JSON for Kubernetes objects: produces exactly what `json.Marshal` of the Go object that
 * gogo-protobuf would decode from the same bytes gives, so that a protobuf request and the equivalent JSON
 * request store the same object.
 *
 * The rules that make this exact (each field carries its Go facts, see `table.ts`):
 * - gogo writes every non-pointer field, zero or not; Go's JSON then drops zero values of `omitempty` fields.
 *   Pointer fields are on the wire only when set, and are then emitted even when zero (`replicas: 0`).
 * - A field absent from the wire is the Go zero value: `null` for nil slices, maps and pointers without
 *   `omitempty`, `""`/`0`/`false` for plain scalars without it, and the zero struct for embedded values
 *   (so an empty `status` still reads `{}` and an unset `creationTimestamp` reads `null`, as kubectl's JSON does).
 * - `json:",inline"` embedded structs merge their fields into the parent object.
 * - Types with their own MarshalJSON (Time, IntOrString, Quantity, FieldsV1, apiextensions' JSON and
 *   JSONSchemaPropsOr*) are rendered like those methods do.
 * - A non-repeated message field that occurs more than once is merged, as proto2 requires.
 */

import type { Obj } from '../util/object.js';
import { formatDuration, formatMicroTime, formatTime } from './format.js';
import { type FieldDef, isScalar, type MessageDef, type ProtoTable, type ScalarType } from './table.js';
import {
  ProtoWireError,
  readFields,
  readPackedVarints,
  toBool,
  toInt32,
  toInt64,
  toSint32,
  toSint64,
  toUint32,
  toUint64,
  type Varint,
  type WireField,
  WireType,
} from './wire.js';

/** The deepest message nesting accepted (a JSON body of the same depth would be unusual too). */
export const MAX_DEPTH = 100;

/** The `k8s\0` prefix of every Kubernetes protobuf body. */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Bounds the work a hostile body can cause: nesting depth and the number of JSON values produced. */
export class DecodeContext {
  private remaining: number;

  constructor(
    readonly table: ProtoTable,
    budget: number,
  ) {
    this.remaining = budget;
  }

  /** Counts `n` produced JSON values. */
  spend(n = 1): void {
    this.remaining -= n;
    if (this.remaining < 0) throw new ProtoWireError('the decoded object is too large');
  }

  message(name: string): MessageDef {
    const def = this.table.messages.get(name);
    if (!def) throw new ProtoWireError(`no descriptor for message ${name}`);
    return def;
  }
}

const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;

function expectedWireType(type: ScalarType | string): number {
  switch (type) {
    case 'double':
    case 'fixed64':
    case 'sfixed64':
      return WireType.Fixed64;
    case 'float':
    case 'fixed32':
    case 'sfixed32':
      return WireType.Fixed32;
    case 'int64':
    case 'uint64':
    case 'int32':
    case 'uint32':
    case 'bool':
    case 'sint32':
    case 'sint64':
      return WireType.Varint;
    default:
      return WireType.Bytes; // string, bytes, messages, map entries
  }
}

function scalarFromVarint(type: ScalarType, v: Varint): number | boolean {
  switch (type) {
    case 'int32':
      return toInt32(v);
    case 'uint32':
      return toUint32(v);
    case 'int64':
      return toInt64(v);
    case 'uint64':
      return toUint64(v);
    case 'sint32':
      return toSint32(v);
    case 'sint64':
      return toSint64(v);
    case 'bool':
      return toBool(v);
    default:
      throw new ProtoWireError(`proto: ${type} is not a varint type`);
  }
}

function finite(n: number): number {
  // encoding/json refuses NaN and ±Inf, so the Go server could not have produced JSON for it either.
  if (!Number.isFinite(n)) throw new ProtoWireError(`json: unsupported value: ${n}`);
  return n;
}

function scalarFromFixed(type: ScalarType, b: Buffer): number {
  switch (type) {
    case 'double':
      return finite(b.readDoubleLE(0));
    case 'float':
      return finite(b.readFloatLE(0));
    case 'fixed32':
      return b.readUInt32LE(0);
    case 'sfixed32':
      return b.readInt32LE(0);
    case 'fixed64':
      return Number(b.readBigUInt64LE(0));
    case 'sfixed64':
      return Number(b.readBigInt64LE(0));
    default:
      throw new ProtoWireError(`proto: ${type} is not a fixed-width type`);
  }
}

/** A scalar's JSON value from one wire occurrence (already checked for wire type, or packed). */
function scalarValue(type: ScalarType, f: WireField): unknown {
  if (f.wt === WireType.Varint) return scalarFromVarint(type, f.varint);
  if (type === 'string') return f.bytes.toString('utf8');
  if (type === 'bytes') return f.bytes.toString('base64');
  return scalarFromFixed(type, f.bytes);
}

function zeroScalar(type: ScalarType): unknown {
  return type === 'string' ? '' : type === 'bool' ? false : 0;
}

const isZeroScalar = (v: unknown): boolean => v === '' || v === 0 || v === false;

/** Defines a key even when it is `__proto__` (map keys come from the request). */
function setKey(obj: Obj, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** Field occurrences of one message, grouped by field. */
interface Collected {
  def: FieldDef;
  /** Scalars: last value; repeated: all values; messages: every occurrence's bytes. */
  values: unknown[];
  segments: Buffer[];
  entries: [string, unknown][];
}

function collect(ctx: DecodeContext, def: MessageDef, bytes: Buffer, depth: number): Map<number, Collected> {
  const out = new Map<number, Collected>();
  for (const f of readFields(bytes)) {
    const field = def.byNumber.get(f.no);
    if (!field) continue; // unknown fields are skipped, as gogo does
    let c = out.get(f.no);
    if (!c) {
      c = { def: field, values: [], segments: [], entries: [] };
      out.set(f.no, c);
    }
    const want = field.mapKey !== undefined ? WireType.Bytes : expectedWireType(field.type);
    if (field.mapKey !== undefined) {
      if (f.wt !== WireType.Bytes) throw wrongWireType(f.wt, field);
      c.entries.push(mapEntry(ctx, field, f.bytes, depth));
    } else if (isScalar(field.type)) {
      if (f.wt === want) {
        ctx.spend();
        if (field.repeated) c.values.push(scalarValue(field.type, f));
        else c.values[0] = scalarValue(field.type, f);
      } else if (field.repeated && f.wt === WireType.Bytes && want !== WireType.Bytes) {
        // A packed repeated scalar.
        const type = field.type;
        if (want === WireType.Varint) {
          for (const v of readPackedVarints(f.bytes)) {
            ctx.spend();
            c.values.push(scalarFromVarint(type, v));
          }
        } else {
          const size = want === WireType.Fixed64 ? 8 : 4;
          if (f.bytes.length % size !== 0) throw new ProtoWireError('unexpected EOF');
          for (let i = 0; i < f.bytes.length; i += size) {
            ctx.spend();
            c.values.push(scalarFromFixed(type, f.bytes.subarray(i, i + size)));
          }
        }
      } else {
        throw wrongWireType(f.wt, field);
      }
    } else {
      if (f.wt !== WireType.Bytes) throw wrongWireType(f.wt, field);
      if (field.repeated) c.values.push(decodeValue(ctx, ctx.message(field.type), [f.bytes], depth + 1));
      else c.segments.push(f.bytes);
    }
  }
  return out;
}

function wrongWireType(wt: number, field: FieldDef): ProtoWireError {
  return new ProtoWireError(`proto: wrong wireType = ${wt} for field ${field.json}`);
}

function mapEntry(ctx: DecodeContext, field: FieldDef, bytes: Buffer, depth: number): [string, unknown] {
  const keyType = field.mapKey!;
  let key: unknown = zeroScalar(keyType);
  const valueSegments: Buffer[] = [];
  let value: unknown;
  let hasValue = false;
  for (const f of readFields(bytes)) {
    if (f.no === 1) {
      if (f.wt !== expectedWireType(keyType)) throw wrongWireType(f.wt, field);
      key = scalarValue(keyType, f);
    } else if (f.no === 2) {
      if (f.wt !== expectedWireType(field.type)) throw wrongWireType(f.wt, field);
      if (isScalar(field.type)) value = scalarValue(field.type, f);
      else if (f.wt === WireType.Bytes) valueSegments.push(f.bytes);
      hasValue = true;
    }
  }
  ctx.spend(2);
  if (isScalar(field.type)) {
    // A missing value is the zero value (gogo: "" for strings, []byte{} for bytes).
    if (!hasValue) value = field.type === 'bytes' ? '' : zeroScalar(field.type);
  } else {
    const def = ctx.message(field.type);
    value = hasValue ? decodeValue(ctx, def, valueSegments, depth + 1) : zeroValue(ctx, def, depth + 1);
  }
  return [String(key), value];
}

/** The JSON value of a message from its occurrences on the wire (merged when there are several). */
export function decodeValue(ctx: DecodeContext, def: MessageDef, segments: Buffer[], depth: number): unknown {
  if (depth > MAX_DEPTH) throw new ProtoWireError(`the object is nested deeper than ${MAX_DEPTH} levels`);
  ctx.spend();
  if (def.custom === 'Time' || def.custom === 'MicroTime') {
    // Their Unmarshal replaces the value with the last occurrence instead of merging.
    return decodeCustom(ctx, def, segments[segments.length - 1] ?? Buffer.alloc(0), depth);
  }
  const bytes = segments.length === 1 ? segments[0]! : Buffer.concat(segments);
  if (def.custom) return decodeCustom(ctx, def, bytes, depth);
  const present = collect(ctx, def, bytes, depth);
  const out: Obj = {};
  for (const field of def.fields) emitField(ctx, out, field, present.get(field.number), depth);
  return out;
}

function emitField(
  ctx: DecodeContext,
  out: Obj,
  field: FieldDef,
  c: Collected | undefined,
  depth: number,
): void {
  const absentNil = (): void => {
    // A nil slice, map or pointer: `null`, unless omitempty drops it.
    if (!field.omitempty) out[field.json] = null;
  };
  if (field.inline) {
    const def = ctx.message(field.type);
    const sub =
      c && c.segments.length > 0
        ? decodeValue(ctx, def, c.segments, depth + 1)
        : zeroValue(ctx, def, depth + 1);
    if (sub && typeof sub === 'object') Object.assign(out, sub);
    return;
  }
  if (field.mapKey !== undefined) {
    if (!c || c.entries.length === 0) {
      absentNil();
      return;
    }
    const obj: Obj = {};
    for (const [k, v] of c.entries) setKey(obj, k, v);
    out[field.json] = obj;
    return;
  }
  if (field.repeated) {
    if (!c || c.values.length === 0) {
      absentNil();
      return;
    }
    out[field.json] = c.values;
    return;
  }
  if (!isScalar(field.type)) {
    const def = ctx.message(field.type);
    if (c && c.segments.length > 0) out[field.json] = decodeValue(ctx, def, c.segments, depth + 1);
    else if (field.pointer) absentNil();
    else out[field.json] = zeroValue(ctx, def, depth + 1); // encoding/json never omits a struct
    return;
  }
  if (field.type === 'bytes') {
    // []byte is a slice: nil when absent; omitempty also drops an empty one.
    if (!c || c.values.length === 0) {
      absentNil();
      return;
    }
    if (field.omitempty && c.values[0] === '') return;
    out[field.json] = c.values[0];
    return;
  }
  if (c && c.values.length > 0) {
    const v = c.values[0];
    if (field.pointer || !field.omitempty || !isZeroScalar(v)) out[field.json] = v;
    return;
  }
  if (field.pointer) {
    absentNil();
    return;
  }
  if (!field.omitempty) {
    ctx.spend();
    out[field.json] = zeroScalar(field.type);
  }
}

/** The JSON of a Go zero value of the message's type. */
export function zeroValue(ctx: DecodeContext, def: MessageDef, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new ProtoWireError(`the object is nested deeper than ${MAX_DEPTH} levels`);
  ctx.spend();
  switch (def.custom) {
    case 'Duration':
      return '0s';
    case 'IntOrString':
      return 0;
    case 'Quantity':
      return '0';
    case 'JSONSchemaPropsOrBool':
      return false;
    case undefined:
      break;
    default:
      return null;
  }
  const out: Obj = {};
  for (const field of def.fields) emitField(ctx, out, field, undefined, depth);
  return out;
}

/** Raw fields of a custom message by number (last occurrence wins for scalars). */
function customFields(bytes: Buffer): Map<number, WireField[]> {
  const out = new Map<number, WireField[]>();
  for (const f of readFields(bytes)) {
    const list = out.get(f.no);
    if (list) list.push(f);
    else out.set(f.no, [f]);
  }
  return out;
}

function lastVarint(fields: Map<number, WireField[]>, no: number): Varint | undefined {
  const list = fields.get(no);
  const f = list?.[list.length - 1];
  if (!f) return undefined;
  if (f.wt !== WireType.Varint) throw new ProtoWireError(`proto: wrong wireType = ${f.wt} for field ${no}`);
  return f.varint;
}

function lastBytes(fields: Map<number, WireField[]>, no: number): Buffer | undefined {
  const list = fields.get(no);
  const f = list?.[list.length - 1];
  if (!f) return undefined;
  if (f.wt !== WireType.Bytes) throw new ProtoWireError(`proto: wrong wireType = ${f.wt} for field ${no}`);
  return f.bytes;
}

function allBytes(fields: Map<number, WireField[]>, no: number): Buffer[] {
  return (fields.get(no) ?? []).map((f) => {
    if (f.wt !== WireType.Bytes) throw new ProtoWireError(`proto: wrong wireType = ${f.wt} for field ${no}`);
    return f.bytes;
  });
}

function parseRawJson(raw: Buffer, what: string): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ProtoWireError(`${what} does not hold valid JSON`);
  }
}

function decodeCustom(ctx: DecodeContext, def: MessageDef, bytes: Buffer, depth: number): unknown {
  const f = customFields(bytes);
  switch (def.custom) {
    case 'Time': {
      if (bytes.length === 0) return null;
      return formatTime(toInt64(lastVarint(f, 1) ?? { lo: 0, hi: 0 }));
    }
    case 'MicroTime': {
      if (bytes.length === 0) return null;
      return formatMicroTime(
        toInt64(lastVarint(f, 1) ?? { lo: 0, hi: 0 }),
        toInt32(lastVarint(f, 2) ?? { lo: 0, hi: 0 }),
      );
    }
    case 'Duration':
      return formatDuration(lastVarint(f, 1) ?? { lo: 0, hi: 0 });
    case 'IntOrString': {
      const type = toInt64(lastVarint(f, 1) ?? { lo: 0, hi: 0 });
      if (type === 0) return toInt32(lastVarint(f, 2) ?? { lo: 0, hi: 0 });
      if (type === 1) return (lastBytes(f, 3) ?? Buffer.alloc(0)).toString('utf8');
      throw new ProtoWireError('impossible IntOrString.Type');
    }
    case 'Quantity': {
      const s = lastBytes(f, 1);
      if (s === undefined) return '0';
      const text = s.toString('utf8');
      if (!QUANTITY.test(text)) {
        throw new ProtoWireError(
          `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
        );
      }
      return text;
    }
    case 'RawJSON': {
      const raw = lastBytes(f, 1);
      if (!raw || raw.length === 0) return null;
      return parseRawJson(raw, def.name.slice(def.name.lastIndexOf('.') + 1));
    }
    case 'RawExtension': {
      const raw = lastBytes(f, 1);
      if (!raw || raw.length === 0) return null;
      if (raw.subarray(0, 4).equals(PROTOBUF_MAGIC)) return decodeEnvelope(ctx, raw, depth + 1, undefined);
      return parseRawJson(raw, 'RawExtension');
    }
    case 'StringList': {
      const items = allBytes(f, 1).map((b) => b.toString('utf8'));
      ctx.spend(items.length);
      return items.length > 0 ? items : null;
    }
    case 'JSONSchemaPropsOrArray': {
      const props = ctx.message(def.byNumber.get(1)!.type);
      const list = allBytes(f, 2);
      if (list.length > 0) return list.map((b) => decodeValue(ctx, props, [b], depth + 1));
      const schema = allBytes(f, 1);
      return schema.length > 0 ? decodeValue(ctx, props, schema, depth + 1) : null;
    }
    case 'JSONSchemaPropsOrBool': {
      const schema = allBytes(f, 2);
      if (schema.length > 0)
        return decodeValue(ctx, ctx.message(def.byNumber.get(2)!.type), schema, depth + 1);
      const allows = lastVarint(f, 1);
      return allows ? toBool(allows) : false;
    }
    case 'JSONSchemaPropsOrStringArray': {
      const property = allBytes(f, 2).map((b) => b.toString('utf8'));
      ctx.spend(property.length);
      if (property.length > 0) return property;
      const schema = allBytes(f, 1);
      return schema.length > 0
        ? decodeValue(ctx, ctx.message(def.byNumber.get(1)!.type), schema, depth + 1)
        : null;
    }
    default:
      throw new ProtoWireError(`${def.name} cannot be decoded on its own`);
  }
}

/** The type meta and raw bytes of a `runtime.Unknown` envelope (after the magic prefix). */
export function readUnknown(bytes: Buffer): { apiVersion: string; kind: string; raw: Buffer } {
  const f = customFields(bytes);
  let apiVersion = '';
  let kind = '';
  for (const tm of allBytes(f, 1)) {
    const t = customFields(tm);
    const v = lastBytes(t, 1);
    const k = lastBytes(t, 2);
    if (v) apiVersion = v.toString('utf8');
    if (k) kind = k.toString('utf8');
  }
  // raw is a bytes field: later occurrences replace earlier ones.
  return { apiVersion, kind, raw: lastBytes(f, 2) ?? Buffer.alloc(0) };
}

/**
 * Decodes `k8s\0` + Unknown into the object's JSON (kind and apiVersion first, as Go's TypeMeta). Missing type
 * meta is taken from `defaults`, as the apiserver defaults it from the endpoint.
 */
export function decodeEnvelope(
  ctx: DecodeContext,
  body: Buffer,
  depth: number,
  defaults: { apiVersion?: string; kind?: string } | undefined,
): Obj {
  if (body.length === 0) throw new ProtoWireError('empty data');
  if (body.length < PROTOBUF_MAGIC.length || !body.subarray(0, 4).equals(PROTOBUF_MAGIC)) {
    throw new ProtoWireError(
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
    );
  }
  if (body.length === PROTOBUF_MAGIC.length) throw new ProtoWireError('empty body');
  const unknown = readUnknown(body.subarray(4));
  const kind = unknown.kind || defaults?.kind || '';
  const apiVersion = unknown.apiVersion || defaults?.apiVersion || '';
  const typeMeta = `runtime.TypeMeta{APIVersion:${JSON.stringify(unknown.apiVersion)}, Kind:${JSON.stringify(unknown.kind)}}`;
  if (!kind) throw new UnsupportedType(`Object 'Kind' is missing in '${typeMeta}'`);
  if (!apiVersion) throw new UnsupportedType(`Object 'apiVersion' is missing in '${typeMeta}'`);
  const name = ctx.table.kinds.get(`${apiVersion}/${kind}`) ?? ctx.table.kinds.get(`*/${kind}`);
  const def = name === undefined ? undefined : ctx.table.messages.get(name);
  if (!def) {
    throw new UnsupportedType(
      `${kind} in version ${JSON.stringify(apiVersion)} cannot be decoded from application/vnd.kubernetes.protobuf by this server; send it as application/json`,
    );
  }
  const obj = decodeValue(ctx, def, [unknown.raw], depth) as Obj;
  return { kind, apiVersion, ...obj };
}

/** The type in the envelope is missing or not one this server decodes. */
export class UnsupportedType extends Error {
  override name = 'UnsupportedType';
}
