/** What the generic REST storage tells admission about a request besides its objects. */
import type { AdmissionOptions } from '../../admission/options.js';
import { currentAuditAnnotations } from '../../audit/context.js';
import type { Obj } from '../../util/object.js';
import type { WriteContext } from './errors.js';

/**
 * What admission sees of a write besides its objects: the request's user, namespace and name,
 * and its options as kube passes them (`CreateOptions`, `UpdateOptions`, `DeleteOptions`).
 */
export function admissionOptions(
  ctx: WriteContext,
  kind: 'CreateOptions' | 'UpdateOptions' | 'DeleteOptions',
  namespace: string | undefined,
  name: string,
  fields?: Obj,
): AdmissionOptions {
  // Spread only when there are fields (deletes): a create or update, every write, makes the
  // literal alone, which V8 builds by its fast path (a spread, even of {}, copies generically).
  const operationOptions: Obj = fields
    ? { kind, apiVersion: 'meta.k8s.io/v1', ...fields }
    : { kind, apiVersion: 'meta.k8s.io/v1' };
  if (ctx.dryRun) operationOptions.dryRun = ['All'];
  if (kind !== 'DeleteOptions' && ctx.fieldManager !== undefined)
    operationOptions.fieldManager = ctx.fieldManager;
  const auditAnnotations = currentAuditAnnotations();
  const options: AdmissionOptions = {
    dryRun: ctx.dryRun,
    warnings: ctx.warnings,
    name,
    namespace: namespace ?? '',
    operationOptions,
  };
  if (auditAnnotations) options.auditAnnotations = auditAnnotations;
  if (ctx.user) options.user = ctx.user;
  return options;
}

/** Parsed DeleteOptions (body or query). */
export interface DeleteParams {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** The deprecated `orphanDependents` (true is also given as propagationPolicy `Orphan`). */
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** The `preconditions` of a DeleteOptions body: its string `uid` and `resourceVersion`. */
export function preconditionsOf(v: Obj): NonNullable<DeleteParams['preconditions']> {
  return {
    ...(typeof v.uid === 'string' && { uid: v.uid }),
    ...(typeof v.resourceVersion === 'string' && { resourceVersion: v.resourceVersion }),
  };
}

/** A delete's options as DeleteOptions fields. */
export function deleteOptions(opts: DeleteParams): Obj {
  return {
    ...(opts.gracePeriodSeconds !== undefined && { gracePeriodSeconds: opts.gracePeriodSeconds }),
    ...(opts.preconditions && { preconditions: opts.preconditions }),
    ...(opts.propagationPolicy && { propagationPolicy: opts.propagationPolicy }),
  };
}
