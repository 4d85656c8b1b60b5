#!/usr/bin/env node
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { refreshFromBinary } from './proto-binary.mjs';
import {
  APIEXTENSIONS_GO_FIELDS,
  APIEXTENSIONS_PACKAGE,
  CUSTOM_JSON,
  EXTRA_MESSAGES,
  protoRoot,
  ROOTS,
  SCALAR_NAMES,
  target,
} from './proto-tables.mjs';

// ---------------------------------------------------------------------------------------------------------
// Parsing .proto text

function tokenize(text, file) {
  const tokens = [];
  const re =
    /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|"((?:[^"\\]|\\.)*)"|([A-Za-z_.][A-Za-z0-9_.]*)|(-?\d+)|([{}[\]=;<>,()])/y;
  let m;
  re.lastIndex = 0;
  while (re.lastIndex < text.length) {
    const at = re.lastIndex;
    m = re.exec(text);
    if (!m) throw new Error(`${file}: cannot tokenize at ${JSON.stringify(text.slice(at, at + 30))}`);
    if (m[1] !== undefined) tokens.push({ s: m[1] });
    else if (m[2] !== undefined) tokens.push(m[2]);
    else if (m[3] !== undefined) tokens.push(m[3]);
    else if (m[4] !== undefined) tokens.push(m[4]);
  }
  return tokens;
}

function parseProto(text, file) {
  const t = tokenize(text, file);
  let i = 0;
  const peek = () => t[i];
  const next = () => {
    if (i >= t.length) throw new Error(`${file}: unexpected end`);
    return t[i++];
  };
  const expect = (s) => {
    const got = next();
    if (got !== s) throw new Error(`${file}: expected ${s}, got ${JSON.stringify(got)}`);
  };
  const value = () => {
    const v = next();
    if (typeof v === 'object') return v.s;
    if (v === 'true' || v === 'false') return v === 'true';
    return /^-?\d+$/.test(v) ? Number(v) : v;
  };
  const out = { package: '', messages: [] };
  const parseOptions = () => {
    const opts = {};
    if (peek() !== '[') return opts;
    next();
    for (;;) {
      let key;
      if (peek() === '(') {
        next();
        key = next();
        expect(')');
      } else key = next();
      expect('=');
      opts[key.replace(/^gogoproto\./, '')] = value();
      const sep = next();
      if (sep === ']') return opts;
      if (sep !== ',') throw new Error(`${file}: bad option list`);
    }
  };
  while (i < t.length) {
    const kw = next();
    if (kw === 'syntax') {
      expect('=');
      if (value() !== 'proto2') throw new Error(`${file}: only proto2 is supported`);
      expect(';');
    } else if (kw === 'package') {
      out.package = next();
      expect(';');
    } else if (kw === 'import') {
      while (next() !== ';');
    } else if (kw === 'option') {
      while (next() !== ';');
    } else if (kw === 'message') {
      const msg = { name: next(), fields: [] };
      expect('{');
      while (peek() !== '}') {
        let label = next();
        let type;
        let key;
        if (label === 'map') {
          expect('<');
          key = next();
          expect(',');
          type = next();
          expect('>');
        } else if (label === 'optional' || label === 'repeated' || label === 'required') {
          type = next();
        } else {
          throw new Error(`${file}: ${msg.name}: unsupported declaration ${JSON.stringify(label)}`);
        }
        const name = next();
        expect('=');
        const number = value();
        const options = parseOptions();
        expect(';');
        if (label === 'map') label = 'map';
        msg.fields.push({ label, type, key, name, number, options });
      }
      expect('}');
      out.messages.push(msg);
    } else {
      throw new Error(`${file}: unsupported top-level ${JSON.stringify(kw)}`);
    }
  }
  return out;
}

function resolveType(name, pkg, known) {
  if (SCALAR_NAMES.has(name)) return name;
  if (name.startsWith('.')) {
    if (!known.has(name.slice(1))) throw new Error(`unknown type ${name}`);
    return name.slice(1);
  }
  const parts = pkg.split('.');
  for (let n = parts.length; n >= 0; n--) {
    const candidate = [...parts.slice(0, n), name].join('.');
    if (known.has(candidate)) return candidate;
  }
  throw new Error(`unknown type ${name} in package ${pkg}`);
}

function listProtoFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? listProtoFiles(join(dir, e.name))
      : e.name.endsWith('.proto')
        ? [join(dir, e.name)]
        : [],
  );
}

// ---------------------------------------------------------------------------------------------------------
// The table

function generate() {
  const parsed = listProtoFiles(protoRoot).map((file) => ({
    file: relative(protoRoot, file).split(sep).join('/'),
    ...parseProto(readFileSync(file, 'utf8'), file),
  }));
  const known = new Set(parsed.flatMap((p) => p.messages.map((m) => `${p.package}.${m.name}`)));
  const messages = new Map();
  for (const p of parsed) {
    for (const m of p.messages) {
      const full = `${p.package}.${m.name}`;
      const overlay = p.package === APIEXTENSIONS_PACKAGE ? APIEXTENSIONS_GO_FIELDS[m.name] : undefined;
      const overlayTokens = overlay === undefined ? undefined : overlay.split(' ').filter(Boolean);
      if (overlayTokens && overlayTokens.length !== m.fields.length) {
        throw new Error(
          `${full}: APIEXTENSIONS_GO_FIELDS has ${overlayTokens.length} entries for ${m.fields.length} fields`,
        );
      }
      messages.set(
        full,
        m.fields.map((f, idx) => {
          let json = f.options.jsontag;
          let pointer = f.options.nullable !== false;
          const tok = overlayTokens?.[idx];
          if (tok !== undefined) {
            pointer = tok.startsWith('*');
            json = tok.replace(/^\*/, '').replace(/\?$/, ',omitempty');
          }
          const type =
            f.label === 'map'
              ? `map<${resolveType(f.key, p.package, known)},${resolveType(f.type, p.package, known)}>`
              : resolveType(f.type, p.package, known);
          return {
            number: f.number,
            protoName: f.name,
            json,
            pointer,
            repeated: f.label === 'repeated',
            type,
          };
        }),
      );
    }
  }

  // Reachability from the roots.
  const keep = new Set();
  const visit = (name) => {
    if (keep.has(name)) return;
    const fieldsOf = messages.get(name);
    if (!fieldsOf) throw new Error(`message ${name} is not defined under scripts/proto`);
    keep.add(name);
    for (const f of fieldsOf) {
      const m = /^map<[^,]+,(.+)>$/.exec(f.type);
      const t = m ? m[1] : f.type;
      if (!SCALAR_NAMES.has(t)) visit(t);
    }
  };
  for (const [, , message] of ROOTS) visit(message);
  for (const message of EXTRA_MESSAGES) visit(message);

  const out = {};
  for (const name of [...keep].sort()) {
    const custom = CUSTOM_JSON[name] !== undefined;
    out[name] = messages
      .get(name)
      .slice()
      .sort((a, b) => a.number - b.number)
      .map((f) => {
        let jsonName = f.protoName;
        let flags = '';
        if (!custom) {
          if (f.json === undefined) throw new Error(`${name}.${f.protoName}: no Go json tag is known`);
          const [tagName, ...opts] = f.json.split(',');
          if (opts.includes('inline')) flags += 'i';
          else if (tagName === '-' || tagName === '')
            throw new Error(`${name}.${f.protoName}: json tag "${f.json}"`);
          else jsonName = tagName;
          if (opts.includes('omitempty')) flags += 'o';
        }
        if (f.repeated) flags += 'r';
        if (f.pointer && !f.repeated && !f.type.startsWith('map<') && f.type !== 'bytes') flags += 'p';
        return flags ? [f.number, jsonName, f.type, flags] : [f.number, jsonName, f.type];
      });
  }
  const kinds = Object.fromEntries(
    ROOTS.map(([apiVersion, kind, message]) => [`${apiVersion}/${kind}`, message]),
  );
  const sources = parsed
    .filter((p) => [...keep].some((k) => k.startsWith(`${p.package}.`)))
    .map((p) => p.file)
    .sort();
  const table = {
    comment:
      'Generated by packages/server/scripts/extract-proto.mjs from packages/server/scripts/proto. Do not edit.',
    sources,
    flags: 'i = embedded json:",inline", o = omitempty, r = repeated, p = Go pointer (present only when set)',
    kinds,
    custom: Object.fromEntries(
      Object.entries(CUSTOM_JSON)
        .filter(([name]) => keep.has(name))
        .sort(),
    ),
    messages: out,
  };
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(table, null, 0)}\n`);
  console.log(
    `wrote ${Object.keys(out).length} messages for ${ROOTS.length} kinds to ${relative(process.cwd(), target)}`,
  );
}

const fromBinary = process.argv.indexOf('--from-binary');
if (fromBinary !== -1) {
  const path = process.argv[fromBinary + 1];
  if (!path) throw new Error('--from-binary needs the path of a kubectl binary');
  refreshFromBinary(path);
}
generate();
