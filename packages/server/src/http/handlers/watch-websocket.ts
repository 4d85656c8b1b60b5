/**
 * A watch served over a WebSocket, as kube-apiserver serves a watch GET that asks for one
 * (`Connection: Upgrade`, `Upgrade: websocket`): its handler hands the stream to
 * golang.org/x/net/websocket, whose handshake and framing this reproduces:
 * - the `Origin` header is required (x/net's `Handler` checks it): without one, or with one
 *   that is not a URL, `403 Forbidden` and nothing else;
 * - a version other than 13 is a 400 with `Sec-WebSocket-Version: 13`; a missing key a 400;
 * - subprotocols are not negotiated: one offered is echoed whatever it is (`base64.binary.k8s.io`,
 *   `binary.k8s.io`, anything), none offered gets none, several are a 400;
 * - each event is one text message (the JSON serializer encodes as text), the event's JSON and
 *   the newline Go's encoder ends it with; nothing is base64-encoded whatever the subprotocol;
 * - what the client sends is read and ignored; its close ends the watch, and the end of the watch
 *   (timeout, error event) closes the connection with 1000.
 * Errors found before the watch starts (parameters, authorization) are ordinary `Status` answers.
 */

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { CloseCode, WebSocketConnection } from '../streaming/websocket.js';
import type { WatchSink } from './watch-sink.js';

export { isWebSocketRequest } from '../streaming/websocket.js';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Whether Go's url.ParseRequestURI takes an Origin: an absolute URL or an absolute path. */
function parsesAsRequestUri(origin: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Go refuses control characters.
  if (/[\x00-\x20\x7f]/.test(origin)) return false;
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(origin) || origin.startsWith('/');
}

/** Watch events as WebSocket messages, one per event. */
export class WebSocketWatchSink implements WatchSink {
  private ws: WebSocketConnection | undefined;
  private ended = false;
  private readonly closeListeners: (() => void)[] = [];
  /** The end of an event written in parts (never, in practice: events are written whole). */
  private partial = '';

  constructor(
    private readonly req: IncomingMessage,
    private readonly upgrade: { socket: Duplex; head: Buffer },
  ) {}

  start(): void {
    const { req } = this;
    const { socket } = this.upgrade;
    const key = req.headers['sec-websocket-key'];
    const protocols = (req.headers['sec-websocket-protocol'] ?? '').trim();
    const offered = protocols === '' ? [] : protocols.split(',').map((p) => p.trim());
    let refusal: string | undefined;
    if (req.headers['sec-websocket-version'] !== '13')
      refusal =
        'HTTP/1.1 400 Bad Request\r\nSec-WebSocket-Version: 13\r\n\r\nmissing or bad WebSocket Version';
    else if (typeof key !== 'string' || key === '')
      refusal = 'HTTP/1.1 400 Bad Request\r\n\r\nmismatch challenge/response';
    else if (!parsesAsRequestUri(req.headers.origin ?? '')) refusal = 'HTTP/1.1 403 Forbidden\r\n\r\n';
    else if (offered.length > 1) refusal = 'HTTP/1.1 400 Bad Request\r\n\r\n';
    if (refusal !== undefined) {
      socket.end(refusal);
      queueMicrotask(() => this.closedNow());
      return;
    }
    const accept = createHash('sha1')
      .update((key as string) + WS_GUID)
      .digest('base64');
    const lines = [
      'HTTP/1.1 101 Switching Protocols',
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Accept: ${accept}`,
    ];
    if (offered.length === 1) lines.push(`Sec-WebSocket-Protocol: ${offered[0]}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    const ws = new WebSocketConnection(socket, {
      protocol: offered[0] ?? '',
      maxPayload: 64 * 1024 * 1024,
      closeTimeoutMs: 5000,
    });
    this.ws = ws;
    // The client is not expected to send anything; whatever it sends is dropped.
    ws.on('close', () => this.closedNow());
    ws.on('error', () => undefined);
    if (this.upgrade.head.length > 0) ws.receive(this.upgrade.head);
  }

  write(chunk: string | Buffer): void {
    const ws = this.ws;
    if (!ws?.isOpen) return;
    let text = this.partial + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    let nl = text.indexOf('\n');
    while (nl >= 0) {
      ws.send(text.slice(0, nl + 1), false);
      text = text.slice(nl + 1);
      nl = text.indexOf('\n');
    }
    this.partial = text;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.ws?.close(CloseCode.normal);
  }

  destroy(): void {
    this.ws?.terminate();
    if (!this.ws) this.upgrade.socket.destroy();
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  get buffered(): number {
    return this.upgrade.socket.writableLength;
  }

  flushNow(): void {}

  drained(): Promise<void> {
    const ws = this.ws;
    if (!ws?.isOpen || this.buffered === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        ws.off('drain', done);
        ws.off('close', done);
        resolve();
      };
      ws.on('drain', done);
      ws.on('close', done);
    });
  }

  private closedNow(): void {
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}
