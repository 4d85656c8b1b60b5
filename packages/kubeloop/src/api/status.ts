/**
 * The Kubernetes `Status` object and the typed error that carries it.
 *
 * Every failure of the Kubernetes API is a `Status` (`kind: Status`, `apiVersion: v1`). The
 * server builds them with the constructors below, and the client turns a `Status` it receives
 * back into an {@link ApiError}, so both sides speak the same vocabulary.
 *
 * @example
 * ```ts
 * throw ApiError.notFound({ group: 'apps', resource: 'deployments' }, 'web');
 * // → 404 NotFound: deployments.apps "web" not found
 * ```
 */

/** The `reason` values of `Status` (apimachinery `metav1.StatusReason`). */
export type StatusReason =
  | ''
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'ServerTimeout'
  | 'StoreReadError'
  | 'Timeout'
  | 'TooManyRequests'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Expired'
  | 'ServiceUnavailable';

/** The `reason` of one cause inside `details.causes` (apimachinery `metav1.CauseType`). */
export type CauseType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid'
  | 'UnexpectedServerResponse'
  | 'FieldManagerConflict'
  | 'ResourceVersionTooLarge';

/** One reason an object was rejected, pointing at a field path such as `metadata.name`. */
export interface StatusCause {
  reason?: CauseType | string;
  message?: string;
  field?: string;
}

/** `Status.details`. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** The `Status` object returned by every failing Kubernetes API call. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never> | { resourceVersion?: string; continue?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** A group and plural resource name, as used in error messages (`deployments.apps`). */
export interface GroupResource {
  group: string;
  resource: string;
}

function withoutEmptyStrings(d: StatusDetails): StatusDetails {
  if (d.name !== '' && d.group !== '' && d.kind !== '' && d.uid !== '') return d;
  const out = { ...d };
  for (const k of ['name', 'group', 'kind', 'uid'] as const) if (out[k] === '') delete out[k];
  return out;
}

const qualified = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);

/** An error that carries a Kubernetes `Status`. Thrown by the server's handlers and by the client. */
export class ApiError extends Error {
  readonly status: Status;

  constructor(
    status: Omit<Status, 'kind' | 'apiVersion' | 'metadata' | 'status'> & { metadata?: Status['metadata'] },
  ) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
    this.name = 'ApiError';
    // StatusDetails' strings are `omitempty`: a Status about an object without a name (a
    // generateName create, an options object) carries no `name` at all.
    if (status.details) status = { ...status, details: withoutEmptyStrings(status.details) };
    this.status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: status.metadata ?? {},
      status: 'Failure',
      ...(status.message !== undefined && { message: status.message }),
      ...(status.reason !== undefined && { reason: status.reason }),
      ...(status.details !== undefined && { details: status.details }),
      code: status.code,
    };
  }

  /** HTTP status code. */
  get code(): number {
    return this.status.code;
  }
  /** Machine-readable reason, such as `NotFound`. */
  get reason(): StatusReason {
    return this.status.reason ?? '';
  }
  /** `details` of the Status, including `causes`. */
  get details(): StatusDetails | undefined {
    return this.status.details;
  }
  /** Seconds the server asked the client to wait before retrying, when it did. */
  get retryAfter(): number | undefined {
    return this.status.details?.retryAfterSeconds;
  }

  /** Turns any `Status`-shaped value into an `ApiError`. */
  static fromStatus(status: Partial<Status> & { code?: number }, fallbackCode = 500): ApiError {
    return new ApiError({
      code: status.code ?? fallbackCode,
      ...(status.message !== undefined && { message: status.message }),
      ...(status.reason !== undefined && { reason: status.reason }),
      ...(status.details !== undefined && { details: status.details }),
    });
  }

  static notFound(gr: GroupResource, name: string): ApiError {
    return new ApiError({
      code: 404,
      reason: 'NotFound',
      message: `${qualified(gr)} "${name}" not found`,
      details: { name, ...(gr.group && { group: gr.group }), kind: gr.resource },
    });
  }

  static alreadyExists(gr: GroupResource, name: string): ApiError {
    return new ApiError({
      code: 409,
      reason: 'AlreadyExists',
      message: `${qualified(gr)} "${name}" already exists`,
      details: { name, ...(gr.group && { group: gr.group }), kind: gr.resource },
    });
  }

  static conflict(gr: GroupResource, name: string, why: string): ApiError {
    return new ApiError({
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`,
      details: { name, ...(gr.group && { group: gr.group }), kind: gr.resource },
    });
  }

  /** The usual optimistic-concurrency conflict of an update with a stale resourceVersion. */
  static staleObject(gr: GroupResource, name: string): ApiError {
    return ApiError.conflict(
      gr,
      name,
      'the object has been modified; please apply your changes to the latest version and try again',
    );
  }

  /**
   * 422 Invalid. `kind` is the object's kind (e.g. `ConfigMap`); several causes are joined as
   * `[err1, err2]`, exactly like apimachinery's `NewInvalid`.
   */
  static invalid(groupKind: { group: string; kind: string }, name: string, causes: StatusCause[]): ApiError {
    const text = (c: StatusCause) => (c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? ''));
    // Like apimachinery's aggregate: identical messages are reported once.
    const texts = [...new Set(causes.map(text))];
    const joined = texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
    const gk = groupKind.group ? `${groupKind.kind}.${groupKind.group}` : groupKind.kind;
    return new ApiError({
      code: 422,
      reason: 'Invalid',
      message: texts.length === 0 ? `${gk} "${name}" is invalid` : `${gk} "${name}" is invalid: ${joined}`,
      details: {
        name,
        ...(groupKind.group && { group: groupKind.group }),
        kind: groupKind.kind,
        causes,
      },
    });
  }

  static badRequest(message: string, causes?: StatusCause[]): ApiError {
    return new ApiError({ code: 400, reason: 'BadRequest', message, ...(causes && { details: { causes } }) });
  }

  static unauthorized(message = 'Unauthorized'): ApiError {
    return new ApiError({ code: 401, reason: 'Unauthorized', message });
  }

  static forbidden(gr: GroupResource, name: string, why: string): ApiError {
    const target = name ? `${qualified(gr)} "${name}"` : qualified(gr);
    return new ApiError({
      code: 403,
      reason: 'Forbidden',
      message: `${target} is forbidden: ${why}`,
      details: { ...(name && { name }), ...(gr.group && { group: gr.group }), kind: gr.resource },
    });
  }

  static methodNotSupported(gr: GroupResource, action: string): ApiError {
    return new ApiError({
      code: 405,
      reason: 'MethodNotAllowed',
      message: `${action} is not supported on resources of kind "${qualified(gr)}"`,
      details: { ...(gr.group && { group: gr.group }), kind: gr.resource },
    });
  }

  static notAcceptable(message: string): ApiError {
    return new ApiError({ code: 406, reason: 'NotAcceptable', message });
  }

  /**
   * A body in a media type the endpoint does not decode (`negotiation.NewUnsupportedMediaTypeError`),
   * listing the ones it does: a built-in kind's `application/json`, `application/yaml` and
   * `application/vnd.kubernetes.protobuf` by default.
   */
  static unsupportedMediaType(
    accepted: readonly string[] = [
      'application/json',
      'application/yaml',
      'application/vnd.kubernetes.protobuf',
    ],
  ): ApiError {
    return new ApiError({
      code: 415,
      reason: 'UnsupportedMediaType',
      message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    });
  }

  static requestEntityTooLarge(message = 'Request entity too large: limit is 3145728'): ApiError {
    return new ApiError({ code: 413, reason: 'RequestEntityTooLarge', message });
  }

  /** 410 Expired (e.g. a `continue` token or resourceVersion older than the retained history). */
  static expired(message: string): ApiError {
    return new ApiError({ code: 410, reason: 'Expired', message });
  }

  /** 410 Gone, used on watch streams for a resourceVersion older than the retained history. */
  static gone(message: string): ApiError {
    return new ApiError({ code: 410, reason: 'Gone', message });
  }

  static tooManyRequests(message: string, retryAfterSeconds = 1): ApiError {
    return new ApiError({ code: 429, reason: 'TooManyRequests', message, details: { retryAfterSeconds } });
  }

  static internal(message: string): ApiError {
    return new ApiError({
      code: 500,
      reason: 'InternalError',
      message: `Internal error occurred: ${message}`,
      details: { causes: [{ message }] },
    });
  }

  static timeout(message: string, retryAfterSeconds = 1): ApiError {
    return new ApiError({ code: 504, reason: 'Timeout', message, details: { retryAfterSeconds } });
  }

  static serviceUnavailable(message: string): ApiError {
    return new ApiError({ code: 503, reason: 'ServiceUnavailable', message });
  }
}

const reasonOf = (err: unknown): StatusReason | undefined =>
  err instanceof ApiError ? err.reason : undefined;
const codeOf = (err: unknown): number | undefined => (err instanceof ApiError ? err.code : undefined);

/** True when `err` is a 404 NotFound `ApiError`. */
export const isNotFound = (err: unknown): boolean => reasonOf(err) === 'NotFound';
/** True when `err` is a 409 AlreadyExists `ApiError`. */
export const isAlreadyExists = (err: unknown): boolean => reasonOf(err) === 'AlreadyExists';
/** True when `err` is a 409 Conflict `ApiError` (stale resourceVersion). */
export const isConflict = (err: unknown): boolean => reasonOf(err) === 'Conflict';
/** True when `err` is a 422 Invalid `ApiError`. */
export const isInvalid = (err: unknown): boolean => reasonOf(err) === 'Invalid';
/** True when `err` is a 410 (Gone or Expired) `ApiError`. */
export const isGone = (err: unknown): boolean => codeOf(err) === 410;
/** True when `err` is a 403 Forbidden `ApiError`. */
export const isForbidden = (err: unknown): boolean => reasonOf(err) === 'Forbidden';
/** True when `err` is a 401 Unauthorized `ApiError`. */
export const isUnauthorized = (err: unknown): boolean => codeOf(err) === 401;
/** True when `err` is a 400 BadRequest `ApiError`. */
export const isBadRequest = (err: unknown): boolean => reasonOf(err) === 'BadRequest';
/** True when `err` is a 429 TooManyRequests `ApiError`. */
export const isTooManyRequests = (err: unknown): boolean => codeOf(err) === 429;
