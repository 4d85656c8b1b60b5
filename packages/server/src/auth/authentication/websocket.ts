/**
 * kube-apiserver's WebSocket protocol authenticator: browsers cannot set an `Authorization`
 * header on a WebSocket, so a bearer token may come as the subprotocol
 * `base64url.bearer.authorization.k8s.io.<base64url token>` (consoles such as Headlamp use it).
 */
import type { IncomingMessage } from 'node:http';
import { isWebSocketRequest, offeredProtocols } from '../../http/streaming/upgrade.js';

const PREFIX = 'base64url.bearer.authorization.k8s.io.';

/**
 * The bearer token a WebSocket request carries in its subprotocols, if exactly one, offered beside
 * at least one other subprotocol (the one to echo back), as k8s.io/apiserver's
 * `ProtocolAuthenticator` requires; undefined otherwise, and the request is then unauthenticated.
 */
export function websocketBearerToken(req: IncomingMessage): string | undefined {
  if (!isWebSocketRequest(req)) return undefined;
  const offered = offeredProtocols(req);
  const tokens = offered.filter((p) => p.startsWith(PREFIX));
  if (tokens.length !== 1 || tokens.length === offered.length) return undefined;
  const token = Buffer.from(tokens[0]!.slice(PREFIX.length), 'base64url').toString('utf8');
  return token === '' ? undefined : token;
}

/**
 * Takes the token subprotocol out of the request's offer once it authenticated the caller, as
 * kube-apiserver does, so that the stream chooses among its own subprotocols and the token is
 * never echoed back.
 */
export function dropTokenProtocol(req: IncomingMessage): void {
  const rest = offeredProtocols(req).filter((p) => !p.startsWith(PREFIX));
  req.headers['sec-websocket-protocol'] = rest.join(', ');
}

/**
 * Whether a WebSocket request offers a token subprotocol at all: one that {@link websocketBearerToken}
 * cannot use (offered alone, or twice) is an authentication error in kube (a 401), not an
 * anonymous request.
 */
export function offersTokenProtocol(req: IncomingMessage): boolean {
  return (
    isWebSocketRequest(req) &&
    offeredProtocols(req).some((p) => p.startsWith(PREFIX) && p.length > PREFIX.length)
  );
}
