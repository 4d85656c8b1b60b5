/**
 * Failures that are not answers of the API server: the connection could not be made, broke,
 * or took too long. An answer of the server, even an error, is an {@link ApiError} instead.
 */
import { ApiError, type StatusReason } from '../../api/status.js';

/** What went wrong on the wire. */
export type NetworkErrorKind =
  /** The connection could not be opened (refused, unknown host, connect timeout): the request was not sent. */
  | 'connect'
  /** The TLS handshake failed (untrusted or mismatching server certificate, rejected client certificate). */
  | 'tls'
  /** The connection broke after the request may have been sent (reset, closed, truncated answer). */
  | 'reset'
  /** No complete answer within the request's timeout. */
  | 'timeout';

/**
 * A request that got no (complete) answer from the server. `kind` says whether it is safe to
 * send again (`connect`: the server never saw it).
 *
 * @example
 * ```ts
 * try { await pods.get('web'); }
 * catch (err) { if (isNetworkError(err) && err.kind === 'timeout') ... }
 * ```
 */
export class NetworkError extends Error {
  readonly kind: NetworkErrorKind;
  /** The underlying error code, such as `ECONNREFUSED` or `UND_ERR_SOCKET`. */
  readonly code: string | undefined;
  readonly method: string;
  readonly url: string;

  constructor(
    kind: NetworkErrorKind,
    message: string,
    req: { method: string; url: string },
    cause?: unknown,
  ) {
    super(`${req.method} ${req.url}: ${message}`, cause === undefined ? undefined : { cause });
    this.name = 'NetworkError';
    this.kind = kind;
    this.method = req.method;
    this.url = req.url;
    const code = (cause as { code?: unknown } | undefined)?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/** True for a {@link NetworkError} (no answer from the server), as opposed to an {@link ApiError}. */
export const isNetworkError = (err: unknown): err is NetworkError => err instanceof NetworkError;

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  // a Unix socket that does not exist (any more)
  'ENOENT',
]);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** Sorts an error thrown by undici or node:tls into a {@link NetworkError}. */
export function toNetworkError(err: unknown, req: { method: string; url: string }): NetworkError {
  if (err instanceof NetworkError) return err;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown };
  // undici wraps socket errors: the interesting code can be one level down.
  const inner = e?.cause as { code?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : typeof inner?.code === 'string' ? inner.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (CONNECT_CODES.has(code)) return new NetworkError('connect', `cannot connect: ${message}`, req, err);
  if (TIMEOUT_CODES.has(code)) return new NetworkError('timeout', message, req, err);
  if (
    code.startsWith('ERR_TLS') ||
    code.startsWith('ERR_SSL') ||
    /CERT|SIGNATURE|ISSUER|SELF_SIGNED|VERIFY/.test(code)
  ) {
    return new NetworkError('tls', `TLS handshake failed: ${message}`, req, err);
  }
  return new NetworkError('reset', message, req, err);
}

const REASONS: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** Messages of apimachinery's `NewGenericServerResponse`, for answers without a `Status` body. */
function genericMessage(code: number, body: string): string {
  switch (code) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'the server has asked for the client to provide credentials';
    case 403:
      return 'the server does not allow access to the requested resource';
    case 404:
      return 'the server could not find the requested resource';
    case 405:
      return 'the server does not allow this method on the requested resource';
    case 409:
      return 'the server reported a conflict';
    case 410:
      return 'the server has indicated the requested resource is no longer available';
    case 422:
      return 'the server rejected our request due to an error in our request';
    case 429:
      return 'the server has received too many requests and has asked us to try again later';
    case 503:
      return 'the server is currently unable to handle the request';
    case 504:
      return 'the server was unable to return a response in the time allotted, but may still be processing the request';
    default: {
      const text = body.trim().slice(0, 512);
      return code >= 500
        ? `an error on the server (${JSON.stringify(text || 'unknown')}) has prevented the request from succeeding`
        : `the server responded with the status code ${code} but did not return more information`;
    }
  }
}

/**
 * The {@link ApiError} for an error answer: its `Status` body when there is one, else a
 * `Status` made up from the HTTP code the way client-go does. `Retry-After` is copied into
 * `details.retryAfterSeconds` when the body lacks it.
 */
export function apiErrorFromResponse(
  status: number,
  body: string,
  retryAfterHeader: string | undefined,
): ApiError {
  let parsed: unknown;
  try {
    parsed = body ? JSON.parse(body) : undefined;
  } catch {
    parsed = undefined;
  }
  const retryAfter = parseRetryAfter(retryAfterHeader);
  const p = parsed as Record<string, unknown> | undefined;
  if (p && typeof p === 'object' && p.kind === 'Status') {
    const details = (typeof p.details === 'object' && p.details !== null ? { ...p.details } : undefined) as
      | Record<string, unknown>
      | undefined;
    const withRetry =
      retryAfter !== undefined && details?.retryAfterSeconds === undefined
        ? { ...details, retryAfterSeconds: retryAfter }
        : details;
    return new ApiError({
      code: typeof p.code === 'number' && p.code > 0 ? p.code : status,
      ...(typeof p.message === 'string' && { message: p.message }),
      ...(typeof p.reason === 'string' && { reason: p.reason as StatusReason }),
      ...(withRetry !== undefined && { details: withRetry }),
    });
  }
  return new ApiError({
    code: status,
    reason: REASONS[status] ?? (status >= 500 ? 'InternalError' : ''),
    message: genericMessage(status, body),
    ...(retryAfter !== undefined && { details: { retryAfterSeconds: retryAfter } }),
  });
}

/** `Retry-After` in whole seconds (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}
