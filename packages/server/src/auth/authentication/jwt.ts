/**
 * Compact JWS (RFC 7515) as kube-apiserver's service account tokens use it: RS256 only, the
 * header `{"alg":"RS256","kid":…}` go-jose writes, and claims serialized as Go marshals a
 * `map[string]interface{}` (keys sorted at every level), so tokens look like kube's.
 */
import { createSign, createVerify, type KeyObject } from 'node:crypto';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A parsed, not yet verified, compact JWS. */
export interface ParsedJws {
  header: Obj;
  claims: Obj;
  /** `base64url(header).base64url(payload)`, what the signature covers. */
  signingInput: string;
  signature: Buffer;
}

/** JSON with object keys sorted at every level, as Go's encoding/json writes a map. */
export function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (isObj(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Signs `claims` with RS256 under key id `kid`. */
export function signRS256(key: KeyObject, kid: string, claims: Obj): string {
  const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid })).toString('base64url');
  const payload = Buffer.from(sortedJson(claims)).toString('base64url');
  const input = `${header}.${payload}`;
  const signature = createSign('RSA-SHA256').update(input).sign(key).toString('base64url');
  return `${input}.${signature}`;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The parts of a compact JWS, or undefined when `token` is not one (not a JWT: another authenticator's). */
export function parseJws(token: string): ParsedJws | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => BASE64URL.test(p))) return undefined;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
    const claims: unknown = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    if (!isObj(header) || !isObj(claims)) return undefined;
    return {
      header,
      claims,
      signingInput: `${parts[0]}.${parts[1]}`,
      signature: Buffer.from(parts[2]!, 'base64url'),
    };
  } catch {
    return undefined;
  }
}

/**
 * Whether `jws` is signed with RS256 by `key`. Any other `alg` (`none`, `HS256` with the public
 * key as a secret…) fails, as go-jose refuses an algorithm that does not match the key.
 */
export function verifyRS256(key: KeyObject, jws: ParsedJws): boolean {
  if (jws.header.alg !== 'RS256' || jws.signature.length === 0) return false;
  try {
    return createVerify('RSA-SHA256').update(jws.signingInput).verify(key, jws.signature);
  } catch {
    return false;
  }
}
