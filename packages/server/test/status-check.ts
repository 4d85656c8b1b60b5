/**
 * Checks shared by the reliability tests: what a well-formed `Status` body and a well-formed
 * stored object look like, and a seeded random number generator for reproducible fuzzing.
 */
import { expect } from 'vitest';

/** The failure `Status` of a response, checked for its code, reason and (when given) message. */
export function failure(
  r: { status: number; json: any; text: string },
  code: number,
  reason: string,
  message?: string,
) {
  expect(r.status, r.text).toBe(code);
  expect(statusProblems(code, r.json), r.text).toEqual([]);
  expect(r.json.reason).toBe(reason);
  if (message !== undefined) expect(r.json.message).toBe(message);
  return r.json;
}

/**
 * Whether a 5xx answer is one kube-apiserver itself gives (so the local plane must too), not a
 * crash: its plain-error 500s without a reason (a create that carries a resourceVersion, a
 * resourceVersion strconv.ParseUint refuses, a DeleteOptions body that does not decode, a pod binding without a target, the strategic merge patch library's failures, an
 * apply configuration outside the schema, an object past etcd's request limit) and the 504 of a
 * resourceVersion from the future.
 */
export function kubeApiserverOwn5xx(
  req: { method: string; headers: Record<string, string> },
  code: number,
  status: { reason?: unknown; message?: unknown } | undefined,
): boolean {
  const message = String(status?.message);
  if (code === 504) return status?.reason === 'Timeout' && message.includes('Too large resource version');
  if (code !== 500 || status?.reason !== undefined) return false;
  const type = req.headers['Content-Type'];
  return (
    (req.method === 'POST' && message === 'resourceVersion should not be set on objects to be created') ||
    /(^|: )strconv\.ParseUint: parsing /.test(message) ||
    // The delete handler passes its body's decoding errors on as they are.
    (req.method === 'DELETE' &&
      /^(couldn't get version\/kind; json parse error: |json: cannot unmarshal .* into Go struct field DeleteOptions\.|no kind ".*" is registered for version )/.test(
        message,
      )) ||
    // BindingREST passes ValidatePodBinding's errors on as a plain aggregate.
    (req.method === 'POST' && /^\[?target\.(name|kind): /.test(message)) ||
    (req.method === 'PATCH' && type === 'application/strategic-merge-patch+json') ||
    // An apply configuration that does not fit the schema (kubernetes/kubernetes#122480).
    (req.method === 'PATCH' &&
      type === 'application/apply-patch+yaml' &&
      message.startsWith('failed to create typed patch object')) ||
    message.endsWith('etcdserver: request is too large')
  );
}

/** The problems of a failure body: empty when it is a well-formed `Status` for `httpStatus`. */
export function statusProblems(httpStatus: number, body: unknown): string[] {
  const problems: string[] = [];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return ['body is not a JSON object'];
  const s = body as Record<string, unknown>;
  if (s.kind !== 'Status') problems.push(`kind is ${JSON.stringify(s.kind)}`);
  if (s.apiVersion !== 'v1') problems.push(`apiVersion is ${JSON.stringify(s.apiVersion)}`);
  if (s.status !== 'Failure') problems.push(`status is ${JSON.stringify(s.status)}`);
  if (s.code !== httpStatus) problems.push(`code ${JSON.stringify(s.code)} differs from HTTP ${httpStatus}`);
  if (typeof s.message !== 'string' || s.message === '') problems.push('message is missing');
  if (s.reason !== undefined && typeof s.reason !== 'string') problems.push('reason is not a string');
  if (s.metadata === null || typeof s.metadata !== 'object') problems.push('metadata is missing');
  if (s.details !== undefined) {
    const d = s.details as Record<string, unknown> | null;
    if (d === null || typeof d !== 'object') problems.push('details is not an object');
    else if (d.causes !== undefined) {
      if (!Array.isArray(d.causes)) problems.push('details.causes is not an array');
      else
        for (const c of d.causes) {
          if (c === null || typeof c !== 'object') problems.push('a cause is not an object');
        }
    }
  }
  return problems;
}

/** The problems of an object as the server stores it: the fields every object must carry. */
export function storedObjectProblems(obj: unknown): string[] {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return ['not an object'];
  const o = obj as Record<string, unknown>;
  const m = o.metadata as Record<string, unknown> | undefined;
  if (!m || typeof m !== 'object') return ['metadata is missing'];
  const problems: string[] = [];
  for (const field of ['name', 'uid', 'resourceVersion', 'creationTimestamp']) {
    if (typeof m[field] !== 'string' || m[field] === '') problems.push(`metadata.${field} is missing`);
  }
  if (typeof m.resourceVersion === 'string' && !/^[1-9]\d*$/.test(m.resourceVersion))
    problems.push(`metadata.resourceVersion ${JSON.stringify(m.resourceVersion)} is not a revision`);
  if (
    typeof m.creationTimestamp === 'string' &&
    !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(m.creationTimestamp)
  )
    problems.push(`metadata.creationTimestamp ${JSON.stringify(m.creationTimestamp)} is not RFC 3339`);
  if (typeof o.apiVersion !== 'string' || typeof o.kind !== 'string')
    problems.push('apiVersion/kind missing');
  return problems;
}

/** A small, fast, seedable PRNG (sfc32): the same seed gives the same sequence everywhere. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    this.a = 0x9e3779b9 ^ seed;
    this.b = 0x243f6a88 ^ stream;
    this.c = 0xb7e15162;
    this.d = 1;
    for (let i = 0; i < 15; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    let t = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    t = (t + this.d) | 0;
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** A string of `n` characters drawn from `alphabet`. */
  string(n: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
}
