/**
 * `audit.k8s.io/v1 Event` and its pieces, as k8s.io/apiserver's `pkg/audit` (request.go,
 * context.go) fills them and encoding/json writes them: fields in the Go struct's order, empty
 * ones left out where the struct says `omitempty`, annotations with sorted keys.
 */
import { isIP } from 'node:net';
import type { AuditLevel, AuditStage } from './policy.js';

/** `authentication/v1 UserInfo`. */
export interface EventUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The event's `objectRef` (`audit.ObjectReference`). */
export interface ObjectRef {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** The bounded fields of a `Status` the event keeps (`LogResponseObject`). */
export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code?: number;
}

/** `audit.k8s.io/v1 Event`. */
export interface AuditEvent {
  kind: 'Event';
  apiVersion: 'audit.k8s.io/v1';
  level: AuditLevel;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  user: EventUser;
  impersonatedUser?: EventUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectRef;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** Microseconds since the epoch, now (`performance` has sub-millisecond precision). */
export const nowMicros = (): number => Math.floor((performance.timeOrigin + performance.now()) * 1000);

/** `metav1.MicroTime` as JSON: RFC 3339 in UTC with six fractional digits. */
export function microTime(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const iso = new Date(ms).toISOString(); // 2006-01-02T15:04:05.000Z
  return `${iso.slice(0, 23)}${String(micros - ms * 1000).padStart(3, '0')}Z`;
}

/** `user.Info` as the event's UserInfo: extra only when it has keys (an empty map is omitted). */
export function eventUser(u: {
  username: string;
  uid?: string;
  groups: readonly string[];
  extra?: Record<string, string[]>;
}): EventUser {
  return {
    ...(u.username && { username: u.username }),
    ...(u.uid && { uid: u.uid }),
    ...(u.groups.length > 0 && { groups: [...u.groups] }),
    ...(u.extra && Object.keys(u.extra).length > 0 && { extra: u.extra }),
  };
}

/** kube's `maxUserAgentLength`: longer User-Agents are cut and marked. */
const MAX_USER_AGENT = 1024;

/** `maybeTruncateUserAgent`. */
export function userAgentOf(ua: string | undefined): string | undefined {
  if (!ua) return undefined;
  return ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua;
}

/** An address as Go's `net.IP.String()` prints it (IPv4-mapped IPv6 as IPv4). */
function ipString(text: string): string | undefined {
  const t = text.trim();
  if (isIP(t) === 0) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(t);
  return mapped ? mapped[1] : t.toLowerCase();
}

/**
 * `utilnet.SourceIPs`: the `X-Forwarded-For` chain, `X-Real-Ip` unless already in it, then the
 * connection's address unless it ends the chain.
 */
export function sourceIPs(
  headers: Record<string, string | string[] | undefined>,
  remote: string | undefined,
): string[] {
  const out: string[] = [];
  const forwarded = headers['x-forwarded-for'];
  const forwardedText = Array.isArray(forwarded) ? forwarded[0] : forwarded;
  if (forwardedText) {
    for (const part of forwardedText.split(',')) {
      const ip = ipString(part);
      if (ip) out.push(ip);
    }
  }
  const real = headers['x-real-ip'];
  const realIp = typeof real === 'string' && real ? ipString(real) : undefined;
  if (realIp && !out.includes(realIp)) out.push(realIp);
  const remoteIp = remote ? ipString(remote) : undefined;
  if (remoteIp && out[out.length - 1] !== remoteIp) out.push(remoteIp);
  return out;
}

/** A copy of `obj` (or of each item of a list) without `metadata.managedFields` (`removeManagedFields`). */
export function withoutManagedFields(obj: unknown): unknown {
  if (!isRecord(obj)) return obj;
  if (Array.isArray(obj.items)) return { ...obj, items: obj.items.map(withoutManagedFields) };
  if (!isRecord(obj.metadata) || obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** The event as one JSON line, fields in the Go struct's order. */
export function encodeEvent(e: AuditEvent): string {
  const out: Record<string, unknown> = {
    kind: e.kind,
    apiVersion: e.apiVersion,
    level: e.level,
    auditID: e.auditID,
    stage: e.stage,
    requestURI: e.requestURI,
    verb: e.verb,
    user: e.user,
  };
  if (e.impersonatedUser) out.impersonatedUser = e.impersonatedUser;
  if (e.sourceIPs?.length) out.sourceIPs = e.sourceIPs;
  if (e.userAgent) out.userAgent = e.userAgent;
  if (e.objectRef) out.objectRef = orderedRef(e.objectRef);
  if (e.responseStatus) out.responseStatus = orderedStatus(e.responseStatus);
  if (e.requestObject !== undefined) out.requestObject = e.requestObject;
  if (e.responseObject !== undefined) out.responseObject = e.responseObject;
  out.requestReceivedTimestamp = e.requestReceivedTimestamp;
  out.stageTimestamp = e.stageTimestamp;
  if (e.annotations && Object.keys(e.annotations).length > 0) {
    const keys = Object.keys(e.annotations).sort();
    out.annotations = Object.fromEntries(keys.map((k) => [k, e.annotations![k]]));
  }
  return `${JSON.stringify(out)}\n`;
}

function orderedRef(r: ObjectRef): ObjectRef {
  const out: ObjectRef = {};
  for (const k of [
    'resource',
    'namespace',
    'name',
    'uid',
    'apiGroup',
    'apiVersion',
    'resourceVersion',
    'subresource',
  ] as const) {
    if (r[k]) out[k] = r[k];
  }
  return out;
}

function orderedStatus(s: ResponseStatus): ResponseStatus {
  return {
    metadata: {},
    ...(s.status && { status: s.status }),
    ...(s.message && { message: s.message }),
    ...(s.reason && { reason: s.reason }),
    ...(s.details !== undefined && { details: s.details }),
    ...(s.code && { code: s.code }),
  };
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
