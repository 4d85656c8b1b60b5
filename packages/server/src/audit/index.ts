/**
 * The audit stage of the request's path (kube-apiserver's `WithAuditInit` and `WithAudit`
 * filters): every response carries an `Audit-Id`; with an audit policy and a log
 * (`--audit-policy-file`, `--audit-log-path`), each request the policy selects is written as
 * `audit.k8s.io/v1` events at its stages, with what the later stages noted (authorization's
 * decision, admission's and pod security's annotations).
 *
 * Without a policy nothing is built: the hooks below find no request audit and return, and the
 * backend (`auditor.ts`: policy, log, event encoding) is not even loaded.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../auth/authentication/user.js';
import { ApiResponse } from '../http/api-response.js';
import type { RequestInfo } from '../http/request-info.js';
import { randomUuid } from '../util/uuid.js';
import type { Auditor } from './auditor.js';
import { auditOf, registerAudit } from './context.js';
import type { RequestAudit } from './request.js';

export type { AuditOptions, Auditor } from './auditor.js';
export {
  auditAuthorization,
  auditRequestBody,
  auditResponseStatus,
  currentAuditAnnotations,
} from './context.js';
export type { AuditEvent } from './event.js';
export type { AuditLevel, AuditPolicy, AuditStage, PolicyRule } from './policy.js';

/** What an audit event of a request starts with. */
export interface AuditRequest {
  user: UserInfo;
  info: RequestInfo;
  userAgent: string | undefined;
}

/**
 * Listeners of the audit stage: what a test records of the requests a client made (the identity
 * and the request's attributes, as the authorizer will see them).
 *
 * @example
 * ```ts
 * const seen: string[] = [];
 * const stop = cp.audit.subscribe(({ user, info }) => seen.push(`${user.username} ${info.verb} ${info.resource}`));
 * // … run the client under test …
 * stop();
 * ```
 */
export class AuditListeners {
  private listeners: readonly ((request: AuditRequest) => void)[] = [];

  /** Calls `listener` with every authenticated request from now on; returns the unsubscribe function. */
  subscribe(listener: (request: AuditRequest) => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** @internal The request path calls it once per authenticated request. */
  notify(request: AuditRequest): void {
    for (const listener of this.listeners) {
      try {
        listener(request);
      } catch {
        // A test's listener must not fail the request it observes.
      }
    }
  }
}

/** What Node's `setHeader` refuses in a value. */
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;
const INVALID_HEADER_CHAR_ALL = /[^\t\x20-\x7e\x80-\xff]/g;

/**
 * `WithAuditInit`: the request's audit ID — the client's `Audit-ID` header, else a new UUID — set
 * as the response's `Audit-Id` header; with an auditor, the request's audit, which `run` makes
 * the context of everything that serves the request.
 */
export function auditInit(
  req: IncomingMessage,
  res: ServerResponse,
  auditor: Auditor | undefined,
): { run<T>(serve: () => T): T } | undefined {
  const given = req.headers['audit-id'];
  const id = typeof given === 'string' && given !== '' ? given : randomUuid();
  // The client's ID is echoed as is, but for the bytes a header value cannot hold (Go's writer
  // blanks line breaks; Node refuses control characters).
  const header = id === given && INVALID_HEADER_CHAR.test(id) ? id.replace(INVALID_HEADER_CHAR_ALL, ' ') : id;
  // The server's own responses write it with their first headers (see ApiResponse). An audited
  // request sets it at once: its event reads the response's headers back once it is written,
  // which Node keeps only for headers set before the head.
  if (!auditor && res instanceof ApiResponse) res.setAuditId(header);
  else res.setHeader('Audit-Id', header);
  if (!auditor) return undefined;
  return registerAudit(req, res, auditor.requestAudit(id, req, res));
}

/** The request is authenticated: tells `listeners`, and writes its `RequestReceived` event if audited. */
export function auditRequestReceived(
  request: AuditRequest,
  listeners?: AuditListeners,
  req?: IncomingMessage,
): void {
  listeners?.notify(request);
  if (req) (auditOf(req) as RequestAudit | undefined)?.authenticated(request.user, request.info);
}

/** The request failed authentication: its one event (`WithFailedAuthenticationAudit`), if audited. */
export function auditUnauthenticated(req: IncomingMessage, info: RequestInfo): void {
  (auditOf(req) as RequestAudit | undefined)?.unauthenticated(info);
}

/** The request is served as `served` (impersonation), not as the authenticated `user`. */
export function auditImpersonation(req: IncomingMessage, user: UserInfo, served: UserInfo): void {
  if (served !== user) (auditOf(req) as RequestAudit | undefined)?.impersonated(served);
}
