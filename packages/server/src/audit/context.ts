/**
 * Where each stage of the request's path finds the request's audit: the HTTP layer by the
 * request or response object, authorization and admission by the async context. A leaf
 * module (it imports nothing of the server), so that every stage can note things for the
 * event without importing the audit backend. Until an audit policy is in use, every hook
 * returns at once.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the stages tell a request's audit. */
export interface AuditHooks {
  /** What authorization, admission and pod security note (`<plugin>/<key>` → value). */
  readonly annotations: Record<string, string>;
  requestRead(body: Buffer, contentType: string | undefined): void;
  responded(status: Record<string, unknown>, unexpected?: unknown): void;
}

const current = new AsyncLocalStorage<AuditHooks>();
const byMessage = new WeakMap<IncomingMessage | ServerResponse, AuditHooks>();
/** Whether any request was ever audited: until then every hook returns at once. */
let auditing = false;

/** @internal Makes `audit` the audit of `req` and `res`; returns how to run the request's stages in its context. */
export function registerAudit(
  req: IncomingMessage,
  res: ServerResponse,
  audit: AuditHooks,
): { run<T>(serve: () => T): T } {
  auditing = true;
  byMessage.set(req, audit);
  byMessage.set(res, audit);
  return { run: (serve) => current.run(audit, serve) };
}

/** @internal The audit of a request (or of its response), if it is audited. */
export function auditOf(message: IncomingMessage | ServerResponse): AuditHooks | undefined {
  return auditing ? byMessage.get(message) : undefined;
}

/** A request body was read: the event's `requestObject` at `Request` level and above. */
export function auditRequestBody(req: IncomingMessage, body: Buffer): void {
  if (auditing) byMessage.get(req)?.requestRead(body, req.headers['content-type']);
}

/**
 * A `Status` is answered: the event's `responseStatus` keeps its fields. `unexpected` is an
 * error that is no API error (the event's `Panic` stage).
 */
export function auditResponseStatus(res: ServerResponse, status: unknown, unexpected?: unknown): void {
  if (!auditing || typeof status !== 'object' || status === null) return;
  if ((status as { kind?: unknown }).kind !== 'Status' && unexpected === undefined) return;
  byMessage.get(res)?.responded(status as Record<string, unknown>, unexpected);
}

/** Where the request's admission plugins put their audit annotations; undefined when not audited. */
export function currentAuditAnnotations(): Record<string, string> | undefined {
  return auditing ? current.getStore()?.annotations : undefined;
}

/** Authorization's decision (`authorization.k8s.io/decision` and `/reason`). */
export function auditAuthorization(allowed: boolean, reason: string | undefined): void {
  const annotations = currentAuditAnnotations();
  if (!annotations) return;
  annotations['authorization.k8s.io/decision'] = allowed ? 'allow' : 'forbid';
  annotations['authorization.k8s.io/reason'] = reason ?? '';
}
