/**
 * The request context: what the stages of the request's path learn about one request, carried
 * from stage to stage so that each thing is worked out once — the request info (from the URL),
 * the user (authentication, then impersonation), the answer's media type (negotiation).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from 'kubeloop/api';
import type { UserInfo } from '../auth/authentication/user.js';
import { negotiateSerializer, type Serializer } from './negotiation.js';
import { parseRequestInfo, type RequestInfo } from './request-info.js';

/** One request on its way through the stages. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The decoded path. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** What the URL addresses (Kubernetes' `RequestInfo`). */
  readonly info: RequestInfo;
  /** Who the request is served as: set by authentication (and impersonation). */
  user?: UserInfo;
  /** The serializer of answers that are not the resource's own representation (memoized). */
  serializer?: Serializer;
}

/** The context of a request: its URL read once. Throws a 400 for a malformed URL escape. */
export function requestContext(req: IncomingMessage, res: ServerResponse): RequestContext {
  const { path, query } = splitUrl(req.url ?? '/');
  return { req, res, path, query, info: parseRequestInfo(req.method ?? 'GET', path, query) };
}

/** The serializer `Accept` asks for, negotiated on first use. */
export function serializerOf(ctx: Pick<RequestContext, 'req' | 'serializer'>): Serializer {
  ctx.serializer ??= negotiateSerializer(ctx.req.headers.accept);
  return ctx.serializer;
}

/**
 * The decoded path and the query of a request target, as Go's `URL.Path` reads them: escapes
 * such as `%3A` are decoded (names in paths are often escaped), and `..` segments stay as they
 * are (a WHATWG URL would resolve them).
 */
export function splitUrl(target: string): { path: string; query: URLSearchParams } {
  const q = target.indexOf('?');
  const raw = q >= 0 ? target.slice(0, q) : target;
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    const bad = /%(?![0-9a-fA-F]{2}).{0,2}/.exec(raw)?.[0] ?? raw;
    throw ApiError.badRequest(`invalid URL escape ${JSON.stringify(bad)}`);
  }
  return {
    path: path.startsWith('/') ? path : `/${path}`,
    query: new URLSearchParams(q >= 0 ? target.slice(q + 1) : ''),
  };
}
