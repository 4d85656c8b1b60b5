// Reading the protobuf file descriptors and Go struct tags embedded in a Go binary (kubectl),
// and rendering them as .proto text with the gogoproto options kube's JSON depends on.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { BINARY_FILES, LICENSE, protoRoot, SCALARS } from './proto-tables.mjs';

// ---------------------------------------------------------------------------------------------------------
// Protobuf wire reading (for FileDescriptorProto)

function varint(buf, pos) {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, pos];
  }
}

/** @returns {{no: number, wt: number, value: number | Buffer}[]} */
export function fields(buf) {
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = varint(buf, pos);
    const no = Math.floor(key / 8);
    const wt = key & 7;
    let value;
    if (wt === 0) [value, pos] = varint(buf, pos);
    else if (wt === 2) {
      let len;
      [len, pos] = varint(buf, pos);
      value = buf.subarray(pos, pos + len);
      pos += len;
    } else if (wt === 1) {
      value = buf.subarray(pos, pos + 8);
      pos += 8;
    } else if (wt === 5) {
      value = buf.subarray(pos, pos + 4);
      pos += 4;
    } else throw new Error(`unsupported wire type ${wt}`);
    out.push({ no, wt, value });
  }
  return out;
}
const str = (v) => Buffer.from(v).toString('utf8');

function decodeFieldDescriptor(buf) {
  const f = { options: {} };
  for (const { no, value } of fields(buf)) {
    if (no === 1) f.name = str(value);
    else if (no === 3) f.number = value;
    else if (no === 4) f.label = value;
    else if (no === 5) f.type = value;
    else if (no === 6) f.typeName = str(value);
    else if (no === 8) {
      for (const o of fields(value)) {
        if (o.no === 2) f.options.packed = o.value === 1;
        else if (o.no === 65001) f.options.nullable = o.value === 1;
        else if (o.no === 65004) f.options.customname = str(o.value);
        else if (o.no === 65007) f.options.casttype = str(o.value);
        else if (o.no === 65008) f.options.castkey = str(o.value);
        else if (o.no === 65009) f.options.castvalue = str(o.value);
        else throw new Error(`field ${f.name}: unexpected field option ${o.no}`);
      }
    } else if (no === 9) throw new Error(`field ${f.name}: oneof is not supported`);
  }
  return f;
}

function decodeMessageDescriptor(buf) {
  const m = { fields: [], nested: [], mapEntry: false };
  for (const { no, value } of fields(buf)) {
    if (no === 1) m.name = str(value);
    else if (no === 2) m.fields.push(decodeFieldDescriptor(value));
    else if (no === 3) m.nested.push(decodeMessageDescriptor(value));
    else if (no === 4) throw new Error(`message ${m.name}: nested enums are not supported`);
    else if (no === 7) {
      for (const o of fields(value)) if (o.no === 7) m.mapEntry = o.value === 1;
    } else if (no === 8) throw new Error(`message ${m.name}: oneof is not supported`);
  }
  return m;
}

function decodeFileDescriptor(buf) {
  const fd = { deps: [], messages: [] };
  for (const { no, value } of fields(buf)) {
    if (no === 1) fd.name = str(value);
    else if (no === 2) fd.package = str(value);
    else if (no === 3) fd.deps.push(str(value));
    else if (no === 4) fd.messages.push(decodeMessageDescriptor(value));
    else if (no === 5) throw new Error(`${fd.name}: enums are not supported`);
    else if (no === 8) {
      for (const o of fields(value)) if (o.no === 11) fd.goPackage = str(o.value);
    }
  }
  return fd;
}

/** Every gzipped FileDescriptorProto a Go binary registers (gogo's `fileDescriptor_<hash>` variables). */
function embeddedDescriptors(bin) {
  const found = new Map();
  const magic = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]);
  for (let at = bin.indexOf(magic); at !== -1; at = bin.indexOf(magic, at + 1)) {
    let raw;
    try {
      raw = inflateRawSync(bin.subarray(at + 10, at + 10 + 4 * 1024 * 1024));
    } catch {
      continue;
    }
    // FileDescriptorProto starts with field 1 (name): 0x0a, length, "....proto".
    if (raw[0] !== 0x0a) continue;
    const head = raw.subarray(2, 2 + raw[1]).toString('latin1');
    if (!head.endsWith('.proto')) continue;
    try {
      const fd = decodeFileDescriptor(raw);
      if (!found.has(fd.name)) found.set(fd.name, fd);
    } catch (err) {
      if (/generated\.proto$/.test(head)) throw new Error(`${head}: ${err.message}`);
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------
// Go struct tags from the binary's type metadata (ELF, Go ≥ 1.21 abi layout)

function elfSection(bin, wanted) {
  if (bin.readUInt32BE(0) !== 0x7f454c46 || bin[4] !== 2 || bin[5] !== 1) {
    throw new Error('not a little-endian ELF64 binary');
  }
  const shoff = Number(bin.readBigUInt64LE(0x28));
  const shentsize = bin.readUInt16LE(0x3a);
  const shnum = bin.readUInt16LE(0x3c);
  const shstrndx = bin.readUInt16LE(0x3e);
  const section = (i) => {
    const h = shoff + i * shentsize;
    return {
      name: bin.readUInt32LE(h),
      addr: Number(bin.readBigUInt64LE(h + 16)),
      offset: Number(bin.readBigUInt64LE(h + 24)),
      size: Number(bin.readBigUInt64LE(h + 32)),
    };
  };
  const names = section(shstrndx);
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    const end = bin.indexOf(0, names.offset + s.name);
    if (bin.toString('latin1', names.offset + s.name, end) === wanted) return s;
  }
  throw new Error(`no ${wanted} section`);
}

/**
 * Maps proto message full name → field number → { json, goName } by walking the Go runtime type metadata:
 * struct field records (`abi.StructField{Name, Typ, Offset}`) point at name records that carry the tag, and the
 * struct type (`abi.StructType`) that owns a field array names the Go type and, through its uncommon type,
 * the package — which go-to-protobuf maps 1:1 onto the proto package.
 */
function goStructTags(bin) {
  const ro = elfSection(bin, '.rodata');
  const base = ro.addr; // runtime.types: type names and package paths are offsets from here
  const inRo = (va) => va >= ro.addr && va < ro.addr + ro.size;
  const at = (va) => va - ro.addr + ro.offset;
  const u64 = (va) => {
    const o = at(va);
    return bin.readUInt32LE(o + 4) === 0 ? bin.readUInt32LE(o) : -1;
  };
  const readName = (va) => {
    if (!inRo(va)) return undefined;
    let o = at(va);
    const flag = bin[o++];
    if (flag > 15) return undefined; // exported, hasTag, hasPkgPath, embedded
    const [len, afterLen] = varint(bin, o);
    o = afterLen;
    if (len === 0 || len > 512) return undefined;
    const name = bin.toString('latin1', o, o + len);
    if (!/^[\x21-\x7e]+$/.test(name)) return undefined;
    o += len;
    let tag = '';
    if (flag & 2) {
      let tlen;
      [tlen, o] = varint(bin, o);
      tag = bin.toString('utf8', o, o + tlen);
    }
    return { name, tag };
  };

  // 1. Name records whose tag has a protobuf key. Tags start with `json:"` by Kubernetes convention.
  const records = new Set();
  const jsonKey = Buffer.from('json:"');
  const roEnd = ro.offset + ro.size;
  for (let t = bin.indexOf(jsonKey, ro.offset); t !== -1 && t < roEnd; t = bin.indexOf(jsonKey, t + 1)) {
    for (const tl of [1, 2]) {
      let tagLen;
      let next;
      try {
        [tagLen, next] = varint(bin, t - tl);
      } catch {
        continue;
      }
      if (next !== t) continue;
      if (!bin.toString('latin1', t, t + tagLen).includes('protobuf:"')) continue;
      for (let nl = 1; nl < 128; nl++) {
        const p = t - tl - nl - 1;
        if (bin[p] === nl && bin[p - 1] < 16 && (bin[p - 1] & 3) === 3) {
          const va = p - 1 - ro.offset + ro.addr;
          if (readName(va)) {
            records.add(va);
            break;
          }
        }
      }
      break;
    }
  }

  // 2. Struct field records pointing at them, grouped into field arrays.
  const field = (va) => {
    if (!inRo(va) || !inRo(va + 16)) return undefined;
    const nameVa = u64(va);
    const typVa = u64(va + 8);
    if (!inRo(typVa)) return undefined;
    const n = readName(nameVa);
    return n && { ...n, offset: u64(va + 16) };
  };
  const arrays = new Map();
  for (let o = ro.offset; o + 8 <= roEnd; o += 8) {
    if (bin.readUInt32LE(o + 4) !== 0 || !records.has(bin.readUInt32LE(o))) continue;
    let start = o - ro.offset + ro.addr;
    for (;;) {
      const prev = field(start - 24);
      const cur = field(start);
      if (!prev || !cur || prev.offset >= cur.offset) break;
      start -= 24;
    }
    if (arrays.has(start)) continue;
    const list = [];
    for (let va = start; ; va += 24) {
      const f = field(va);
      if (!f || (list.length > 0 && f.offset <= list[list.length - 1].offset)) break;
      list.push(f);
    }
    arrays.set(start, list);
  }

  // 3. The struct types owning those arrays: abi.StructType{Type (48 bytes), PkgPath, Fields []StructField}.
  const byMessage = new Map();
  for (let o = ro.offset; o + 8 <= roEnd; o += 8) {
    if (bin.readUInt32LE(o + 4) !== 0) continue;
    const fieldsVa = bin.readUInt32LE(o);
    const candidates = arrays.get(fieldsVa);
    if (!candidates) continue;
    const header = o - 56;
    // The forward walk may run past the array's end; the struct type knows its field count.
    const count = Number(bin.readBigUInt64LE(header + 64));
    if ((bin[header + 23] & 0x1f) !== 25 || count === 0 || count > candidates.length) continue;
    const list = candidates.slice(0, count);
    const tflag = bin[header + 20];
    let typeName = readName(base + bin.readInt32LE(header + 40))?.name;
    if (!typeName) continue;
    if (tflag & 2) typeName = typeName.slice(1); // tflagExtraStar
    let pkgPath;
    if (tflag & 1) pkgPath = readName(base + bin.readInt32LE(header + 80))?.name; // uncommonType.PkgPath
    if (!pkgPath) pkgPath = readName(u64(header - ro.offset + ro.addr + 48))?.name;
    if (!pkgPath) continue;
    const message = `${pkgPath.replaceAll('/', '.').replaceAll('-', '_')}.${typeName.slice(typeName.indexOf('.') + 1)}`;
    const tags = new Map();
    for (const f of list) {
      const pb = /protobuf:"([^"]*)"/.exec(f.tag);
      const js = /json:"([^"]*)"/.exec(f.tag);
      if (!pb || !js) continue;
      const number = Number(pb[1].split(',')[1]);
      if (Number.isInteger(number)) tags.set(number, { json: js[1], goName: f.name });
    }
    byMessage.set(message, tags);
  }
  return byMessage;
}

// ---------------------------------------------------------------------------------------------------------
// Rendering descriptors as .proto text

function renderProto(fd, goTags, source) {
  const lines = [LICENSE];
  lines.push(
    `// Rendered by packages/server/scripts/extract-proto.mjs from the FileDescriptorProto compiled into`,
    `// ${source}, with the gogoproto options kept and each field's Go json tag recorded as`,
    `// (gogoproto.jsontag). Regenerate rather than edit.`,
    '',
    'syntax = "proto2";',
    '',
    `package ${fd.package};`,
    '',
  );
  for (const dep of fd.deps) lines.push(`import "${dep}";`);
  lines.push('');
  if (fd.goPackage) lines.push(`option go_package = "${fd.goPackage}";`, '');
  const typeOf = (f) => (f.type === 11 || f.type === 14 ? f.typeName : SCALARS[f.type]);
  for (const m of fd.messages) {
    const full = `${fd.package}.${m.name}`;
    const tags = goTags.get(full);
    const entries = new Map(m.nested.filter((n) => n.mapEntry).map((n) => [`.${full}.${n.name}`, n]));
    if (m.nested.some((n) => !n.mapEntry)) throw new Error(`${full}: nested messages are not supported`);
    lines.push(`message ${m.name} {`);
    for (const f of m.fields) {
      const opts = [];
      if (f.options.customname) opts.push(`(gogoproto.customname) = "${f.options.customname}"`);
      if (f.options.nullable === false) opts.push('(gogoproto.nullable) = false');
      for (const k of ['casttype', 'castkey', 'castvalue']) {
        if (f.options[k]) opts.push(`(gogoproto.${k}) = "${f.options[k]}"`);
      }
      if (f.options.packed !== undefined) opts.push(`packed = ${f.options.packed}`);
      const tag = tags?.get(f.number);
      if (tag) opts.push(`(gogoproto.jsontag) = "${tag.json}"`);
      const suffix = opts.length > 0 ? ` [${opts.join(', ')}]` : '';
      const entry = f.label === 3 && f.type === 11 ? entries.get(f.typeName) : undefined;
      if (entry) {
        const [k, v] = [entry.fields.find((x) => x.number === 1), entry.fields.find((x) => x.number === 2)];
        lines.push(`  map<${typeOf(k)}, ${typeOf(v)}> ${f.name} = ${f.number}${suffix};`);
      } else {
        const label = f.label === 3 ? 'repeated' : f.label === 2 ? 'required' : 'optional';
        lines.push(`  ${label} ${typeOf(f)} ${f.name} = ${f.number}${suffix};`);
      }
    }
    lines.push('}', '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

export function refreshFromBinary(path) {
  const bin = readFileSync(path);
  const descriptors = embeddedDescriptors(bin);
  const goTags = goStructTags(bin);
  const wanted = new Set();
  const visit = (name) => {
    if (wanted.has(name) || name.startsWith('github.com/gogo/')) return;
    const fd = descriptors.get(name);
    if (!fd) throw new Error(`${name} is not compiled into ${path}`);
    wanted.add(name);
    fd.deps.forEach(visit);
  };
  for (const file of BINARY_FILES) visit(file);
  const version = JSON.parse(execFileSync(path, ['version', '--client', '-o', 'json'], { encoding: 'utf8' }))
    .clientVersion?.gitVersion;
  const source = `kubectl ${version ?? '(unknown version)'}`;
  for (const name of [...wanted].sort()) {
    const file = join(protoRoot, ...name.split('/'));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, renderProto(descriptors.get(name), goTags, source));
    console.log(`wrote ${relative(process.cwd(), file)}`);
  }
}
