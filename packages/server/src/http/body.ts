import type { IncomingMessage } from 'node:http';
import { ApiError } from 'kubeloop/api';
import { auditRequestBody } from '../audit/context.js';
import { goJsonSyntaxError } from '../util/go-json.js';
import { parseYamlBounded } from '../util/yaml.js';

/** The largest request body the server accepts (kube-apiserver's limit: 3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Reads the whole body, refusing more than `limit` bytes with 413 (without buffering the excess). */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(ApiError.requestEntityTooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        reject(ApiError.requestEntityTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (failed) return;
      const body = Buffer.concat(chunks);
      auditRequestBody(req, body);
      resolve(body);
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
    });
  });
}

/** The media type of a Content-Type header, without parameters, lowercased. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The deepest nesting of objects and arrays a request may carry. kube-apiserver's JSON decoder
 * (sigs.k8s.io/json, Go's scanner) stops at 10,000, and Go's stacks grow as needed; V8's stack is
 * fixed (~1 MB), and below 10,000 levels what overflows first is V8's own: from an empty stack
 * `JSON.stringify` (storage, answers, watch events) overflows at ~4,170 levels and
 * `structuredClone` at ~1,950. Measured in a vitest fork with the limit lifted, the write paths
 * overflow at: the built-in decoder of a CRD's schema (openapi/type-check) ~1,850, server-side
 * apply's typed walks (apply/typed.ts) ~2,080, strategic merge ~3,160, create, update, merge and
 * JSON patch of a custom resource ~4,020 (JSON.stringify in storage); pruned unknown fields of a
 * built-in kind, past 8,000. A stack overflow is answered as a 500 — but one inside V8's
 * regular-expression compiler ends the process — so the limit keeps ~1.85× below the lowest.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * Whether objects and arrays nest deeper than `limit` in `value` (walked without recursion). Every
 * write walks its body here: the stack holds values and depths side by side, and objects are read
 * by `for…in` over their own keys, so that the walk allocates no pair or key array per node.
 */
export function nestingExceeds(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop()!;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const child: unknown = v[i];
        if (child !== null && typeof child === 'object') {
          values.push(child);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) {
      if (!Object.hasOwn(o, k)) continue;
      const child = o[k];
      if (child !== null && typeof child === 'object') {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/**
 * A YAML body written as a JSON object or array (what client-go and kubectl send, apply
 * configurations included), parsed as JSON; undefined when the text is not JSON, which is then
 * parsed as YAML. JSON is YAML, and go-yaml reads it into the same value; but JSON.parse is not
 * recursive, while the `yaml` package composes documents recursively and is held to
 * {@link MAX_YAML_DEPTH}: parsed this way, such a body gets the JSON limit.
 */
export function parseJsonShapedYaml(text: string): unknown {
  const start = /^[ \t\r\n]*[[{]/.exec(text);
  if (start === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The duplicate keys of a JSON text's objects in go-yaml's strict wording (see
 * `yamlDuplicateKeys`), found by one pass over the text without recursion; undefined when
 * there are none. The text is expected to be valid JSON.
 */
export function jsonDuplicateKeys(text: string): string | undefined {
  const found: string[] = [];
  /** Per open collection: its keys so far (undefined for an array). */
  const open: (Set<string> | undefined)[] = [];
  const str = /"(?:[^"\\]|\\.)*"/y;
  let line = 1;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) line++;
    else if (c === 0x7b /* { */) {
      open.push(new Set());
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      open.push(undefined);
      expectKey = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) open.pop();
    else if (c === 0x2c /* , */) expectKey = open[open.length - 1] !== undefined;
    else if (c === 0x22 /* " */) {
      str.lastIndex = i;
      const m = str.exec(text);
      if (m === null) return undefined;
      const keys = open[open.length - 1];
      if (expectKey && keys !== undefined) {
        const key = JSON.parse(m[0]) as string;
        if (keys.has(key)) found.push(`line ${line}: key ${JSON.stringify(key)} already set in map`);
        else keys.add(key);
      }
      expectKey = false;
      i += m[0].length - 1;
    }
  }
  return found.length === 0 ? undefined : `yaml: unmarshal errors:\n  ${found.join('\n  ')}`;
}

/** Parses a JSON or YAML body; bad syntax is a 400 with the parser's reason. */
export function decodeBody(raw: Buffer, type: string): unknown {
  return decodeText(raw.toString('utf8'), type);
}

/** {@link decodeBody} of a body already decoded to text (a caller that keeps the text too). */
export function decodeText(text: string, type: string): unknown {
  let value: unknown;
  if (type === 'application/yaml' || type === 'application/apply-patch+yaml') {
    try {
      value = parseJsonShapedYaml(text) ?? parseYamlBounded(text, { maxAliasCount: 100, uniqueKeys: false });
    } catch (err) {
      throw ApiError.badRequest(`error converting YAML to JSON: ${(err as Error).message.split('\n')[0]}`);
    }
    if (nestingExceeds(value))
      throw ApiError.badRequest(`couldn't get version/kind; json parse error: exceeded max depth`);
  } else {
    try {
      value = JSON.parse(text);
    } catch (err) {
      // Worded as Go's scanner words it (JSON.parse agrees on what is valid, not on the text).
      const reason = goJsonSyntaxError(Buffer.from(text)) ?? (err as Error).message;
      throw ApiError.badRequest(`couldn't get version/kind; json parse error: ${reason}`);
    }
    if (nestingExceeds(value)) {
      const reason = goJsonSyntaxError(Buffer.from(text), MAX_JSON_DEPTH) ?? 'exceeded max depth';
      throw ApiError.badRequest(`couldn't get version/kind; json parse error: ${reason}`);
    }
  }
  // Go's decoder turns an escaped lone surrogate (`"\ud800"`) into U+FFFD; JSON.parse keeps
  // it, and a name holding one could never be addressed by URL again.
  if (/\\u[dD][89a-fA-F]/.test(text)) value = wellFormed(value);
  return value;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `value` with every lone surrogate in its strings and keys replaced by U+FFFD. */
function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(LONE_SURROGATE, '\ufffd');
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, wellFormed(k) as string, {
        value: wellFormed(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
