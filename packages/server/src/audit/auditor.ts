/**
 * The audit backend: the policy (`--audit-policy-file`) and the log (`--audit-log-path`) that each
 * audited request's events are written to. Its own module, loaded only by a server that has a
 * policy: a server without one never builds an event, so its start-up does not load the policy
 * parser, the log rotation or the event encoder.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AuditSink, openLogBackend } from './log-backend.js';
import { loadPolicyFile, type PolicyEvaluator } from './policy.js';
import { type AuditBackend, RequestAudit } from './request.js';

/** kube-apiserver's audit flags, as options of the control plane. */
export interface AuditOptions {
  /**
   * `--audit-policy-file`: an `audit.k8s.io/v1 Policy` (YAML or JSON). Read and validated at
   * start; a bad policy refuses to start with kube-apiserver's message.
   */
  auditPolicyFile?: string;
  /** `--audit-log-path`: where events are appended, one JSON line each; `-` is standard output. Without a policy nothing is written. */
  auditLogPath?: string;
  /** `--audit-log-maxsize`: megabytes before the log is rotated (0, the default: never). */
  auditLogMaxSize?: number;
  /** `--audit-log-maxbackup`: rotated logs kept (0, the default: all). */
  auditLogMaxBackup?: number;
  /** `--audit-log-maxage`: days a rotated log is kept (0, the default: no limit). */
  auditLogMaxAge?: number;
}

/** The server's audit: the policy and the log its events go to. */
export class Auditor implements AuditBackend {
  private constructor(
    readonly evaluator: PolicyEvaluator,
    private readonly sink: AuditSink,
  ) {}

  /**
   * The auditor of `options`, or undefined when nothing is to be audited (no policy, or no log:
   * kube-apiserver then records no events). Throws for a policy that does not load.
   */
  static open(options: AuditOptions): Auditor | undefined {
    if (!options.auditPolicyFile) return undefined;
    const evaluator = loadPolicyFile(options.auditPolicyFile);
    if (!options.auditLogPath) return undefined;
    return new Auditor(
      evaluator,
      openLogBackend({
        path: options.auditLogPath,
        ...(options.auditLogMaxSize !== undefined && { maxSizeMB: options.auditLogMaxSize }),
        ...(options.auditLogMaxBackup !== undefined && { maxBackups: options.auditLogMaxBackup }),
        ...(options.auditLogMaxAge !== undefined && { maxAgeDays: options.auditLogMaxAge }),
      }),
    );
  }

  /** @internal The audit of one request, identified by `id` (its `Audit-Id`). */
  requestAudit(id: string, req: IncomingMessage, res: ServerResponse): RequestAudit {
    return new RequestAudit(this, id, req, res);
  }

  /** @internal */
  write(line: string): void {
    this.sink.write(line);
  }

  /** Closes the log. */
  close(): void {
    this.sink.close();
  }
}
