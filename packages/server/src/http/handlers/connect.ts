/**
 * Connect-style subresources (`pods/exec`, `pods/attach`, `pods/log`, `pods/portforward`): served
 * by handlers the composition root registers by `resource/subresource`, not by the registry.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { UserInfo } from '../../auth/authentication/user.js';
import type { ResourceType } from '../../registry/types.js';
import type { RequestContext } from '../context.js';
import { methodNotAllowed, notFound } from '../errors.js';

/** A request to a connect-style subresource (`pods/log`, `pods/exec`, `pods/portforward`, ...). */
export interface ConnectRequest {
  req: IncomingMessage;
  /** The response; for an upgrade request it writes on the raw socket (errors before taking it over). */
  res: ServerResponse;
  /** The socket and first bytes of an upgrade request (`Connection: Upgrade`), to take over. */
  upgrade?: { socket: Duplex; head: Buffer };
  namespace: string;
  name: string;
  /** `get` or `create` (GET or POST). */
  verb: string;
  /** The request's user (for admission). */
  user?: UserInfo;
  query: URLSearchParams;
}

/** Serves one connect-style subresource; throwing an ApiError before taking over the socket answers it. */
export type ConnectHandler = (r: ConnectRequest) => Promise<void>;

/** The connect handler of a request's subresource, if it has one (core group only, as kube's are). */
export function connectHandler(
  handlers: Readonly<Record<string, ConnectHandler>> | undefined,
  t: ResourceType,
  subresource: string,
): ConnectHandler | undefined {
  return subresource && !t.group ? handlers?.[`${t.resource}/${subresource}`] : undefined;
}

/** Hands a request over to its connect handler. */
export async function connect(
  handler: ConnectHandler,
  ctx: RequestContext,
  upgrade: { socket: Duplex; head: Buffer } | undefined,
): Promise<void> {
  const { info } = ctx;
  if (!info.namespace || !info.name) throw notFound();
  if (info.verb !== 'get' && info.verb !== 'create') throw methodNotAllowed();
  await handler({
    req: ctx.req,
    res: ctx.res,
    ...(upgrade && { upgrade }),
    namespace: info.namespace,
    name: info.name,
    verb: info.verb,
    query: ctx.query,
    ...(ctx.user && { user: ctx.user }),
  });
}
