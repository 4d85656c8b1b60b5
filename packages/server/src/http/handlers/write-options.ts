/** The options every write takes (`CreateOptions`, `UpdateOptions`, `PatchOptions`). */
import type { IncomingMessage } from 'node:http';
import { ApiError, fieldErrors, type StatusCause } from 'kubeloop/api';
import { fieldManagerCauses, managerOrUserAgent } from '../../apply/index.js';
import type { UpdateStrategy } from '../../registry/types.js';

/** `fieldValidation` values of the write options (empty: the default, `Warn`). */
const FIELD_VALIDATION_VALUES = ['', 'Ignore', 'Strict', 'Warn'];

/**
 * The manager a write is recorded under (`fieldManager`, else the User-Agent prefix), after the
 * checks of `ValidateCreateOptions`/`ValidateUpdateOptions`/`ValidatePatchOptions`.
 */
export function writeManager(
  req: IncomingMessage,
  query: URLSearchParams,
  options: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  isApply = false,
): string {
  const fieldManager = query.get('fieldManager') ?? '';
  const causes: StatusCause[] = [];
  if (options === 'PatchOptions') {
    if (!isApply) {
      if (query.has('force'))
        causes.push(fieldErrors.forbidden('force', 'may not be specified for non-apply patch'));
    } else if (!fieldManager) {
      causes.push(fieldErrors.required('fieldManager', 'is required for apply patch'));
    }
  }
  causes.push(...fieldManagerCauses(fieldManager));
  const validation = query.get('fieldValidation');
  if (validation !== null && !FIELD_VALIDATION_VALUES.includes(validation))
    causes.push(fieldErrors.notSupported('fieldValidation', validation, FIELD_VALIDATION_VALUES));
  if (causes.length > 0) throw ApiError.invalid({ group: 'meta.k8s.io', kind: options }, '', causes);
  return managerOrUserAgent(fieldManager, req.headers['user-agent']);
}

/**
 * The update strategy of a subresource. The status strategy serves `status` and a
 * CertificateSigningRequest's `approval`: both write only the object's status (approval its
 * conditions, which is all a client sends through it); a Namespace's `finalize` has its own.
 */
export function updateStrategy(sub: string): UpdateStrategy {
  if (sub === 'status' || sub === 'approval') return 'status';
  return sub === 'finalize' || sub === 'ephemeralcontainers' ? sub : undefined;
}
