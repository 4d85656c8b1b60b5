/** The errors the HTTP layer itself answers (routes that do not exist, methods they do not take). */
import { ApiError } from 'kubeloop/api';

/** go-restful's 404 for a path of a served group/version that no route takes: a `Status`. */
export const notFound = (): ApiError =>
  new ApiError({
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
    details: {},
  });

/** go-restful's answer to a method no route of the path accepts (`NewGenericServerResponse(405)`). */
export function methodNotAllowed(): ApiError {
  return new ApiError({
    code: 405,
    reason: 'MethodNotAllowed',
    message: `the server does not allow this method on the requested resource`,
    details: {},
  });
}

/** A path no handler serves: answered as Go's `http.NotFound` (plain text), not with a `Status`. */
export class PageNotFound extends ApiError {
  constructor() {
    super({ code: 404, reason: 'NotFound', message: '404 page not found' });
  }
}

/** The `Status` reason of an HTTP code, for faults injected with a code alone. */
export function defaultReason(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 429:
      return 'TooManyRequests';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'InternalError';
  }
}
