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

/**
 * Listeners of the audit stage: what a test records of the requests a client made (the identity
 * and the request's attributes, as the authorizer will see them), before any audit backend
 * exists.
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

/** Records that a request was received: tells `listeners`; no audit policy nor backend yet. */
export function auditRequestReceived(request: AuditRequest, listeners?: AuditListeners): void {
  listeners?.notify(request);
}
