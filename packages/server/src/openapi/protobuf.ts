/**
 * The OpenAPI v2 document in protobuf (gnostic's `openapi_v2.Document`), the only form in
 * which client-go's `OpenAPISchema()` accepts it
 * (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`).
 *
 * kubectl 1.32 still needs it even though it reads OpenAPI v3 first: a `kind: List` file
 * (`kubectl get -o yaml` output) given to `apply` or `create` is validated client-side against
 * the v2 models, and without them the command fails; `explain --output plaintext-openapiv2`
 * reads only v2.
 *
 * The encoder mirrors gnostic's `ParseDocument` (the JSON → message mapping kube-openapi uses):
 * field numbers from `openapiv2/OpenAPIv2.proto`, vendor extensions and free-form values
 * (`default`, `enum`, `example`) as `Any { yaml }` — JSON being YAML, they are written as JSON.
 * Properties the message has no field for are left out, as gnostic would refuse them.
 */
import type { Obj } from './builtin.js';

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;

/**
 * One message being written. Nested messages are kept as children and copied once, into a
 * buffer of the final size, so that length prefixes cost nothing however deep the nesting.
 */
class Message {
  readonly parts: (Uint8Array | Message)[] = [];
  length = 0;
  private scratch: number[] = [];

  private flush(): void {
    if (this.scratch.length === 0) return;
    this.parts.push(Uint8Array.from(this.scratch));
    this.scratch = [];
  }

  private byte(b: number): void {
    this.scratch.push(b);
    this.length++;
  }

  private varint(value: number): void {
    if (value < 0) {
      // Negative int64: ten bytes of two's complement.
      let v = BigInt.asUintN(64, BigInt(Math.trunc(value)));
      while (v >= 0x80n) {
        this.byte(Number((v & 0x7fn) | 0x80n));
        v >>= 7n;
      }
      this.byte(Number(v));
      return;
    }
    let v = Math.trunc(value);
    while (v >= 0x80) {
      this.byte((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.byte(v);
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  string(field: number, value: unknown): void {
    if (typeof value !== 'string' || value === '') return;
    this.bytes(field, Buffer.from(value, 'utf8'));
  }

  /** Each string of a repeated string field (non-strings are skipped). */
  strings(field: number, values: unknown): void {
    if (!Array.isArray(values)) return;
    for (const value of values) {
      if (typeof value === 'string') this.bytes(field, Buffer.from(value, 'utf8'));
    }
  }

  private bytes(field: number, data: Uint8Array): void {
    this.tag(field, BYTES);
    this.varint(data.length);
    this.flush();
    this.parts.push(data);
    this.length += data.length;
  }

  bool(field: number, value: unknown, always = false): void {
    if (typeof value !== 'boolean' || (!value && !always)) return;
    this.tag(field, VARINT);
    this.byte(value ? 1 : 0);
  }

  int64(field: number, value: unknown): void {
    if (typeof value !== 'number' || !Number.isFinite(value) || value === 0) return;
    this.tag(field, VARINT);
    this.varint(value);
  }

  double(field: number, value: unknown): void {
    if (typeof value !== 'number' || value === 0) return;
    this.tag(field, FIXED64);
    const data = Buffer.allocUnsafe(8);
    data.writeDoubleLE(value);
    for (const b of data) this.byte(b);
  }

  /** A nested message, written even when empty (proto3 keeps set sub-messages). */
  message(field: number, child: Message): void {
    this.tag(field, BYTES);
    this.varint(child.length);
    this.flush();
    this.parts.push(child);
    this.length += child.length;
  }

  /** Copies the message into `out` at `offset`; returns the offset after it. */
  writeTo(out: Buffer, offset: number): number {
    this.flush();
    let at = offset;
    for (const part of this.parts) {
      if (part instanceof Message) at = part.writeTo(out, at);
      else {
        out.set(part, at);
        at += part.length;
      }
    }
    return at;
  }

  toBuffer(): Buffer {
    this.flush();
    const out = Buffer.allocUnsafe(this.length);
    this.writeTo(out, 0);
    return out;
  }
}

function asObj(value: unknown): Obj | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined;
}

/** `Any { yaml = 2 }` holding a JSON value. */
function any(value: unknown): Message {
  const m = new Message();
  m.string(2, `${JSON.stringify(value)}\n`);
  return m;
}

/** `NamedAny` entries for the `x-` keys of an object, at `field`. */
function vendorExtensions(m: Message, field: number, obj: Obj): void {
  for (const [name, value] of Object.entries(obj)) {
    if (!name.startsWith('x-')) continue;
    const named = new Message();
    named.string(1, name);
    named.message(2, any(value));
    m.message(field, named);
  }
}

/** A `Named<T>` pair: `name = 1`, `value = 2`. */
function named(name: string, value: Message): Message {
  const m = new Message();
  m.string(1, name);
  m.message(2, value);
  return m;
}

function externalDocs(value: unknown): Message | undefined {
  const obj = asObj(value);
  if (!obj) return undefined;
  const m = new Message();
  m.string(1, obj.description);
  m.string(2, obj.url);
  vendorExtensions(m, 3, obj);
  return m;
}

function schema(s: Obj): Message {
  const m = new Message();
  m.string(1, s.$ref);
  m.string(2, s.format);
  m.string(3, s.title);
  m.string(4, s.description);
  if ('default' in s) m.message(5, any(s.default));
  m.double(6, s.multipleOf);
  m.double(7, s.maximum);
  m.bool(8, s.exclusiveMaximum);
  m.double(9, s.minimum);
  m.bool(10, s.exclusiveMinimum);
  m.int64(11, s.maxLength);
  m.int64(12, s.minLength);
  m.string(13, s.pattern);
  m.int64(14, s.maxItems);
  m.int64(15, s.minItems);
  m.bool(16, s.uniqueItems);
  m.int64(17, s.maxProperties);
  m.int64(18, s.minProperties);
  m.strings(19, s.required);
  if (Array.isArray(s.enum)) for (const value of s.enum) m.message(20, any(value));
  const additional = s.additionalProperties;
  if (typeof additional === 'boolean') {
    const item = new Message();
    item.bool(2, additional, true);
    m.message(21, item);
  } else if (asObj(additional)) {
    const item = new Message();
    item.message(1, schema(additional as Obj));
    m.message(21, item);
  }
  if (typeof s.type === 'string' || Array.isArray(s.type)) {
    const type = new Message();
    type.strings(1, Array.isArray(s.type) ? s.type : [s.type]);
    m.message(22, type);
  }
  if (s.items !== undefined) {
    const items = new Message();
    const list = Array.isArray(s.items) ? s.items : [s.items];
    for (const item of list) {
      const obj = asObj(item);
      if (obj) items.message(1, schema(obj));
    }
    m.message(23, items);
  }
  if (Array.isArray(s.allOf)) {
    for (const part of s.allOf) {
      const obj = asObj(part);
      if (obj) m.message(24, schema(obj));
    }
  }
  const properties = asObj(s.properties);
  if (properties) {
    const props = new Message();
    for (const [name, sub] of Object.entries(properties)) {
      const obj = asObj(sub);
      if (obj) props.message(1, named(name, schema(obj)));
    }
    m.message(25, props);
  }
  m.string(26, s.discriminator);
  m.bool(27, s.readOnly);
  const docs = externalDocs(s.externalDocs);
  if (docs) m.message(29, docs);
  if ('example' in s) m.message(30, any(s.example));
  vendorExtensions(m, 31, s);
  return m;
}

function primitivesItems(p: Obj): Message {
  const m = new Message();
  m.string(1, p.type);
  m.string(2, p.format);
  const items = asObj(p.items);
  if (items) m.message(3, primitivesItems(items));
  m.string(4, p.collectionFormat);
  if ('default' in p) m.message(5, any(p.default));
  m.double(6, p.maximum);
  m.bool(7, p.exclusiveMaximum);
  m.double(8, p.minimum);
  m.bool(9, p.exclusiveMinimum);
  m.int64(10, p.maxLength);
  m.int64(11, p.minLength);
  m.string(12, p.pattern);
  m.int64(13, p.maxItems);
  m.int64(14, p.minItems);
  m.bool(15, p.uniqueItems);
  if (Array.isArray(p.enum)) for (const value of p.enum) m.message(16, any(value));
  m.double(17, p.multipleOf);
  vendorExtensions(m, 18, p);
  return m;
}

/**
 * A non-body parameter sub-schema. Query and form-data ones have `allow_empty_value` at 5,
 * which shifts every later field by one compared with path and header ones.
 */
function subSchema(p: Obj, withAllowEmpty: boolean): Message {
  const m = new Message();
  m.bool(1, p.required);
  m.string(2, p.in);
  m.string(3, p.description);
  m.string(4, p.name);
  const shift = withAllowEmpty ? 1 : 0;
  if (withAllowEmpty) m.bool(5, p.allowEmptyValue);
  m.string(5 + shift, p.type);
  m.string(6 + shift, p.format);
  const items = asObj(p.items);
  if (items) m.message(7 + shift, primitivesItems(items));
  m.string(8 + shift, p.collectionFormat);
  if ('default' in p) m.message(9 + shift, any(p.default));
  m.double(10 + shift, p.maximum);
  m.bool(11 + shift, p.exclusiveMaximum);
  m.double(12 + shift, p.minimum);
  m.bool(13 + shift, p.exclusiveMinimum);
  m.int64(14 + shift, p.maxLength);
  m.int64(15 + shift, p.minLength);
  m.string(16 + shift, p.pattern);
  m.int64(17 + shift, p.maxItems);
  m.int64(18 + shift, p.minItems);
  m.bool(19 + shift, p.uniqueItems);
  if (Array.isArray(p.enum)) for (const value of p.enum) m.message(20 + shift, any(value));
  m.double(21 + shift, p.multipleOf);
  vendorExtensions(m, 22 + shift, p);
  return m;
}

/** `Parameter`: a body parameter, or a header/formData/query/path one. */
function parameter(p: Obj): Message {
  const m = new Message();
  if (p.in === 'body') {
    const body = new Message();
    body.string(1, p.description);
    body.string(2, p.name);
    body.string(3, p.in);
    body.bool(4, p.required);
    const s = asObj(p.schema);
    if (s) body.message(5, schema(s));
    vendorExtensions(body, 6, p);
    m.message(1, body);
    return m;
  }
  const nonBody = new Message();
  switch (p.in) {
    case 'header':
      nonBody.message(1, subSchema(p, false));
      break;
    case 'formData':
      nonBody.message(2, subSchema(p, true));
      break;
    case 'query':
      nonBody.message(3, subSchema(p, true));
      break;
    default:
      nonBody.message(4, subSchema(p, false));
  }
  m.message(2, nonBody);
  return m;
}

/** `ParametersItem`: a parameter, or a `JsonReference` to one. */
function parametersItem(p: Obj): Message {
  const m = new Message();
  if (typeof p.$ref === 'string') {
    const ref = new Message();
    ref.string(1, p.$ref);
    ref.string(2, p.description);
    m.message(2, ref);
  } else {
    m.message(1, parameter(p));
  }
  return m;
}

function response(r: Obj): Message {
  const m = new Message();
  m.string(1, r.description);
  const s = asObj(r.schema);
  if (s) {
    const item = new Message();
    item.message(1, schema(s));
    m.message(2, item);
  }
  vendorExtensions(m, 5, r);
  return m;
}

function operation(op: Obj): Message {
  const m = new Message();
  m.strings(1, op.tags);
  m.string(2, op.summary);
  m.string(3, op.description);
  const docs = externalDocs(op.externalDocs);
  if (docs) m.message(4, docs);
  m.string(5, op.operationId);
  m.strings(6, op.produces);
  m.strings(7, op.consumes);
  if (Array.isArray(op.parameters)) {
    for (const p of op.parameters) {
      const obj = asObj(p);
      if (obj) m.message(8, parametersItem(obj));
    }
  }
  const responses = asObj(op.responses);
  if (responses) {
    const rs = new Message();
    for (const [code, r] of Object.entries(responses)) {
      const obj = asObj(r);
      if (!obj || code.startsWith('x-')) continue;
      const value = new Message();
      if (typeof obj.$ref === 'string') {
        const ref = new Message();
        ref.string(1, obj.$ref);
        value.message(2, ref);
      } else {
        value.message(1, response(obj));
      }
      rs.message(1, named(code, value));
    }
    vendorExtensions(rs, 2, responses);
    m.message(9, rs);
  }
  m.strings(10, op.schemes);
  m.bool(11, op.deprecated);
  if (Array.isArray(op.security)) for (const req of op.security) m.message(12, securityRequirement(req));
  vendorExtensions(m, 13, op);
  return m;
}

const PATH_METHODS: [string, number][] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

function pathItem(item: Obj): Message {
  const m = new Message();
  m.string(1, item.$ref);
  for (const [method, field] of PATH_METHODS) {
    const op = asObj(item[method]);
    if (op) m.message(field, operation(op));
  }
  if (Array.isArray(item.parameters)) {
    for (const p of item.parameters) {
      const obj = asObj(p);
      if (obj) m.message(9, parametersItem(obj));
    }
  }
  vendorExtensions(m, 10, item);
  return m;
}

function securityRequirement(req: unknown): Message {
  const m = new Message();
  for (const [name, scopes] of Object.entries(asObj(req) ?? {})) {
    const array = new Message();
    array.strings(1, scopes);
    m.message(1, named(name, array));
  }
  return m;
}

function securityDefinitionsItem(def: Obj): Message {
  const m = new Message();
  const inner = new Message();
  if (def.type === 'basic') {
    inner.string(1, def.type);
    inner.string(2, def.description);
    vendorExtensions(inner, 3, def);
    m.message(1, inner);
  } else {
    // apiKey, the only kind Kubernetes publishes; OAuth2 flows are not described.
    inner.string(1, def.type);
    inner.string(2, def.name);
    inner.string(3, def.in);
    inner.string(4, def.description);
    vendorExtensions(inner, 5, def);
    m.message(2, inner);
  }
  return m;
}

/**
 * Encodes a Swagger 2.0 document (as served on `/openapi/v2` in JSON) as gnostic's
 * `openapi_v2.Document` protobuf message.
 */
export function encodeSwaggerV2Protobuf(doc: Obj): Buffer {
  const m = new Message();
  m.string(1, doc.swagger);
  const info = asObj(doc.info);
  if (info) {
    const i = new Message();
    i.string(1, info.title);
    i.string(2, info.version);
    i.string(3, info.description);
    i.string(4, info.termsOfService);
    vendorExtensions(i, 7, info);
    m.message(2, i);
  }
  m.string(3, doc.host);
  m.string(4, doc.basePath);
  m.strings(5, doc.schemes);
  m.strings(6, doc.consumes);
  m.strings(7, doc.produces);
  const paths = asObj(doc.paths);
  if (paths) {
    const p = new Message();
    vendorExtensions(p, 1, paths);
    for (const [path, item] of Object.entries(paths)) {
      const obj = asObj(item);
      if (obj && !path.startsWith('x-')) p.message(2, named(path, pathItem(obj)));
    }
    m.message(8, p);
  }
  const definitions = asObj(doc.definitions);
  if (definitions) {
    const d = new Message();
    for (const [name, s] of Object.entries(definitions)) {
      const obj = asObj(s);
      if (obj) d.message(1, named(name, schema(obj)));
    }
    m.message(9, d);
  }
  const parameters = asObj(doc.parameters);
  if (parameters) {
    const ps = new Message();
    for (const [name, p] of Object.entries(parameters)) {
      const obj = asObj(p);
      if (obj) ps.message(1, named(name, parameter(obj)));
    }
    m.message(10, ps);
  }
  if (Array.isArray(doc.security)) for (const req of doc.security) m.message(12, securityRequirement(req));
  const securityDefinitions = asObj(doc.securityDefinitions);
  if (securityDefinitions) {
    const sd = new Message();
    for (const [name, def] of Object.entries(securityDefinitions)) {
      const obj = asObj(def);
      if (obj) sd.message(1, named(name, securityDefinitionsItem(obj)));
    }
    m.message(13, sd);
  }
  const docs = externalDocs(doc.externalDocs);
  if (docs) m.message(15, docs);
  vendorExtensions(m, 16, doc);
  return m.toBuffer();
}
