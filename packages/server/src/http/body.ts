import type { IncomingMessage } from 'node:http';
import { ApiError } from 'kubeloop';
import { parse as parseYaml } from 'yaml';

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

/** Parses a JSON or YAML body; bad syntax is a 400 with the parser's reason. */
export function decodeBody(raw: Buffer, type: string): unknown {
  const text = raw.toString('utf8');
  if (type === 'application/yaml' || type === 'application/apply-patch+yaml') {
    try {
      return parseYaml(text, { maxAliasCount: 100, uniqueKeys: false });
    } catch (err) {
      throw ApiError.badRequest(`error converting YAML to JSON: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw ApiError.badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}
