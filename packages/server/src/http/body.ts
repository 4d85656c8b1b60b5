import type { IncomingMessage } from 'node:http';
import { ApiError } from 'kubeloop/api';
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
      if (!failed) resolve(Buffer.concat(chunks));
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
 * The deepest nesting of objects and arrays a request may carry. Go's JSON decoder stops at
 * 10,000; V8 cannot even serialise much more than 3,000 levels, and the server walks objects
 * recursively, so the local server draws the line lower.
 */
export const MAX_JSON_DEPTH = 1000;

/** Whether objects and arrays nest deeper than `limit` in `value` (walked without recursion). */
export function nestingExceeds(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Parses a JSON or YAML body; bad syntax is a 400 with the parser's reason. */
export function decodeBody(raw: Buffer, type: string): unknown {
  const text = raw.toString('utf8');
  let value: unknown;
  if (type === 'application/yaml' || type === 'application/apply-patch+yaml') {
    try {
      value = parseYamlBounded(text, { maxAliasCount: 100, uniqueKeys: false });
    } catch (err) {
      throw ApiError.badRequest(`error converting YAML to JSON: ${(err as Error).message.split('\n')[0]}`);
    }
  } else {
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw ApiError.badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
    }
  }
  if (nestingExceeds(value))
    throw ApiError.badRequest(`couldn't get version/kind; json parse error: exceeded max depth`);
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
