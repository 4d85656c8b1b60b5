/**
 * JSON → Kubernetes protobuf, driven by the same descriptor table as the decoder. The server answers in JSON,
 * so this exists for tests (to build bodies from realistic objects) and for any client-side use.
 *
 * With `gogo: true` it writes what gogo-protobuf's generated Marshal writes for the Go object: every
 * non-pointer field, zero or not (so `decode(encode(x, {gogo: true}))` is the Go JSON normalisation of `x`,
 * and re-encoding a body kubectl sent gives back the same bytes).
 */

import type { Obj } from '../util/object.js';
import { PROTOBUF_MAGIC } from './decode.js';
import {
  type FieldDef,
  isScalar,
  K8S_PROTO,
  type MessageDef,
  type ProtoTable,
  type ScalarType,
} from './table.js';
import { ProtoWriter, WireType } from './wire.js';

/** Options of {@link encodeMessage} and {@link encodeProtobufObject}. */
export interface EncodeOptions {
  /** Write non-pointer fields that are absent from the JSON as their zero value, as Go does. */
  gogo?: boolean;
  table?: ProtoTable;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

class Encoder {
  constructor(
    private readonly table: ProtoTable,
    private readonly gogo: boolean,
  ) {}

  private def(name: string): MessageDef {
    const d = this.table.messages.get(name);
    if (!d) throw new Error(`no descriptor for message ${name}`);
    return d;
  }

  /** JSON keys a message accepts, including those of its inline members. */
  private keys(def: MessageDef, into = new Set<string>()): Set<string> {
    for (const f of def.fields) {
      if (f.inline) this.keys(this.def(f.type), into);
      else into.add(f.json);
    }
    return into;
  }

  /** `strict` rejects keys the message has no field for (inline members see their parent's keys). */
  message(def: MessageDef, value: unknown, path: string, strict = true): Buffer {
    if (def.custom) return this.custom(def, value, path);
    const obj = value === undefined || value === null ? {} : value;
    if (!isObj(obj)) throw new Error(`${path}: expected an object for ${def.name}`);
    if (strict) {
      const accepted = this.keys(def);
      for (const k of Object.keys(obj)) {
        if (!accepted.has(k)) throw new Error(`${path}: unknown field "${k}" in ${def.name}`);
      }
    }
    const w = new ProtoWriter();
    for (const f of def.fields) this.field(w, f, f.inline ? obj : obj[f.json], `${path}.${f.json}`);
    return w.finish();
  }

  private field(w: ProtoWriter, f: FieldDef, v: unknown, path: string): void {
    if (f.inline) {
      w.bytes(f.number, this.message(this.def(f.type), v, path, false));
      return;
    }
    if (f.mapKey !== undefined) {
      if (v === undefined || v === null) return;
      if (!isObj(v)) throw new Error(`${path}: expected an object`);
      // gogo sorts map keys so that the encoding is deterministic.
      for (const key of Object.keys(v).sort()) {
        const entry = new ProtoWriter();
        this.scalar(entry, 1, f.mapKey, key, path);
        if (isScalar(f.type)) this.scalar(entry, 2, f.type, v[key], `${path}.${key}`);
        else entry.bytes(2, this.message(this.def(f.type), v[key], `${path}.${key}`));
        w.bytes(f.number, entry.finish());
      }
      return;
    }
    if (f.repeated) {
      if (v === undefined || v === null) return;
      if (!Array.isArray(v)) throw new Error(`${path}: expected an array`);
      v.forEach((item, i) => {
        if (isScalar(f.type)) this.scalar(w, f.number, f.type, item, `${path}[${i}]`);
        else w.bytes(f.number, this.message(this.def(f.type), item, `${path}[${i}]`));
      });
      return;
    }
    if (!isScalar(f.type)) {
      const def = this.def(f.type);
      if (v === undefined && !(this.gogo && !f.pointer)) return;
      if (v === null && f.pointer) return;
      w.bytes(f.number, this.message(def, v, path));
      return;
    }
    if (v === null) return;
    if (v === undefined) {
      if (!this.gogo || f.pointer || f.type === 'bytes') return;
      this.scalar(w, f.number, f.type, f.type === 'string' ? '' : f.type === 'bool' ? false : 0, path);
      return;
    }
    this.scalar(w, f.number, f.type, v, path);
  }

  private scalar(w: ProtoWriter, no: number, type: ScalarType, v: unknown, path: string): void {
    switch (type) {
      case 'string':
        if (typeof v !== 'string') throw new Error(`${path}: expected a string`);
        w.bytes(no, Buffer.from(v, 'utf8'));
        return;
      case 'bytes':
        if (typeof v !== 'string') throw new Error(`${path}: expected a base64 string`);
        w.bytes(no, Buffer.from(v, 'base64'));
        return;
      case 'bool':
        if (typeof v !== 'boolean') throw new Error(`${path}: expected a boolean`);
        w.key(no, WireType.Varint).varint(v ? 1 : 0);
        return;
      case 'double': {
        if (typeof v !== 'number') throw new Error(`${path}: expected a number`);
        const b = Buffer.alloc(8);
        b.writeDoubleLE(v);
        w.key(no, WireType.Fixed64).raw(b);
        return;
      }
      case 'int32':
      case 'int64':
      case 'uint32':
      case 'uint64':
        if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`${path}: expected an integer`);
        w.key(no, WireType.Varint).varint(v);
        return;
      default:
        throw new Error(`${path}: the encoder does not write ${type}`);
    }
  }

  private custom(def: MessageDef, v: unknown, path: string): Buffer {
    const w = new ProtoWriter();
    switch (def.custom) {
      case 'Time':
      case 'MicroTime': {
        if (v === undefined || v === null) return w.finish(); // the zero time marshals to nothing
        if (typeof v !== 'string') throw new Error(`${path}: expected an RFC 3339 time`);
        const ms = Date.parse(v);
        if (Number.isNaN(ms)) throw new Error(`${path}: bad time ${v}`);
        const micros =
          def.custom === 'MicroTime' ? Number(/\.(\d{1,6})/.exec(v)?.[1]?.padEnd(6, '0') ?? 0) : 0;
        w.key(1, WireType.Varint).varint(Math.floor(ms / 1000));
        w.key(2, WireType.Varint).varint(micros * 1000);
        return w.finish();
      }
      case 'Duration':
        w.key(1, WireType.Varint).varint(parseDuration(v === undefined || v === null ? '0s' : String(v)));
        return w.finish();
      case 'IntOrString': {
        const value = v ?? 0;
        if (typeof value === 'number') {
          w.key(1, WireType.Varint).varint(0).key(2, WireType.Varint).varint(value).bytes(3, Buffer.alloc(0));
        } else {
          w.key(1, WireType.Varint)
            .varint(1)
            .key(2, WireType.Varint)
            .varint(0)
            .bytes(3, Buffer.from(String(value)));
        }
        return w.finish();
      }
      case 'Quantity':
        w.bytes(1, Buffer.from(v === undefined || v === null ? '0' : String(v), 'utf8'));
        return w.finish();
      case 'RawJSON':
      case 'RawExtension':
        if (v !== undefined && v !== null) w.bytes(1, Buffer.from(JSON.stringify(v), 'utf8'));
        return w.finish();
      case 'StringList':
        if (Array.isArray(v)) for (const s of v) w.bytes(1, Buffer.from(String(s), 'utf8'));
        return w.finish();
      case 'JSONSchemaPropsOrArray': {
        const props = this.def(def.byNumber.get(1)!.type);
        if (Array.isArray(v)) {
          v.forEach((s, i) => {
            w.bytes(2, this.message(props, s, `${path}[${i}]`));
          });
        } else if (v !== undefined && v !== null) w.bytes(1, this.message(props, v, path));
        return w.finish();
      }
      case 'JSONSchemaPropsOrBool': {
        const props = this.def(def.byNumber.get(2)!.type);
        w.key(1, WireType.Varint).varint(v === false || v === undefined || v === null ? 0 : 1);
        if (isObj(v)) w.bytes(2, this.message(props, v, path));
        return w.finish();
      }
      case 'JSONSchemaPropsOrStringArray': {
        const props = this.def(def.byNumber.get(1)!.type);
        if (Array.isArray(v)) for (const s of v) w.bytes(2, Buffer.from(String(s), 'utf8'));
        else if (v !== undefined && v !== null) w.bytes(1, this.message(props, v, path));
        return w.finish();
      }
      default:
        throw new Error(`${path}: cannot encode ${def.name}`);
    }
  }
}

const UNITS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Go's `time.ParseDuration`, in nanoseconds. */
export function parseDuration(s: string): number {
  if (s === '0') return 0;
  const m = /^([-+]?)((?:\d*\.?\d*[a-zµμ]+)+)$/.exec(s);
  if (!m) throw new Error(`time: invalid duration "${s}"`);
  let total = 0;
  for (const [, num, unit] of m[2]!.matchAll(/(\d*\.?\d*)([a-zµμ]+)/g)) {
    const scale = UNITS[unit!];
    if (scale === undefined || num === '' || num === '.') throw new Error(`time: invalid duration "${s}"`);
    total += Math.round(Number(num) * scale);
  }
  return m[1] === '-' ? -total : total;
}

/** Encodes one message (no envelope). */
export function encodeMessage(name: string, value: unknown, options: EncodeOptions = {}): Buffer {
  const table = options.table ?? K8S_PROTO;
  const def = table.messages.get(name);
  if (!def) throw new Error(`no descriptor for message ${name}`);
  return new Encoder(table, options.gogo ?? false).message(def, value, name);
}

/**
 * Encodes a built-in object as `application/vnd.kubernetes.protobuf` (`k8s\0` + runtime.Unknown), taking
 * the message type from its `apiVersion` and `kind`.
 *
 * @example
 * ```ts
 * const body = encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }, { gogo: true });
 * ```
 */
export function encodeProtobufObject(obj: Record<string, unknown>, options: EncodeOptions = {}): Buffer {
  const table = options.table ?? K8S_PROTO;
  const { apiVersion, kind, ...rest } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string')
    throw new Error('apiVersion and kind are required');
  const name = table.kinds.get(`${apiVersion}/${kind}`) ?? table.kinds.get(`*/${kind}`);
  if (name === undefined) throw new Error(`${apiVersion}, Kind=${kind} has no protobuf descriptor`);
  const raw = encodeMessage(name, rest, options);
  const typeMeta = new ProtoWriter().bytes(1, Buffer.from(apiVersion)).bytes(2, Buffer.from(kind)).finish();
  const unknown = new ProtoWriter()
    .bytes(1, typeMeta)
    .bytes(2, raw)
    .bytes(3, Buffer.alloc(0))
    .bytes(4, Buffer.alloc(0))
    .finish();
  return Buffer.concat([PROTOBUF_MAGIC, unknown]);
}
