/**
 * The audit stage of the request's path (kube-apiserver's `WithAudit` filter, right after
 * authentication): where an audit event of each request would be recorded.
 *
 * The server keeps no audit log yet; this is the hook point, called once per authenticated
 * request with what the event's first stage (`RequestReceived`) knows.
 */
import type { UserInfo } from '../auth/authentication/user.js';
import type { RequestInfo } from '../http/request-info.js';

/** What an audit event of a request starts with. */
export interface AuditRequest {
  user: UserInfo;
  info: RequestInfo;
  userAgent: string | undefined;
}

/** Records that a request was received; a no-op until the server has an audit policy and backend. */
export function auditRequestReceived(_request: AuditRequest): void {}
