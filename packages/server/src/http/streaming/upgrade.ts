/**
 * What tells a WebSocket request apart, without the WebSocket implementation (`websocket.ts`): the
 * authenticator and the watch handler ask it of every request, and the implementation loads only
 * with the first WebSocket stream.
 */
import type { IncomingMessage } from 'node:http';

/** Whether a request asks to be upgraded to a WebSocket (`Upgrade: websocket`). */
export function isWebSocketRequest(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '')
    .toLowerCase()
    .split(/\s*,\s*/)
    .includes('websocket');
}

/** The subprotocols a client offers, in its order. */
export function offeredProtocols(req: IncomingMessage): string[] {
  const raw = req.headers['sec-websocket-protocol'];
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}
