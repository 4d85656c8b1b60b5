/**
 * kube-apiserver's WebSocket protocol authenticator: browsers cannot set an `Authorization`
 * header on a WebSocket, so a bearer token may come as the subprotocol
 * `base64url.bearer.authorization.k8s.io.<base64url token>` (consoles such as Headlamp use it).
 */
import type { IncomingMessage } from 'node:http';
import { isWebSocketRequest, offeredProtocols } from './websocket.js';

const PREFIX = 'base64url.bearer.authorization.k8s.io.';

/** The bearer token a WebSocket request carries in its subprotocols, if exactly one. */
export function websocketBearerToken(req: IncomingMessage): string | undefined {
  if (!isWebSocketRequest(req)) return undefined;
  const tokens = offeredProtocols(req).filter((p) => p.startsWith(PREFIX));
  if (tokens.length !== 1) return undefined;
  const token = Buffer.from(tokens[0]!.slice(PREFIX.length), 'base64url').toString('utf8');
  return token === '' ? undefined : token;
}
