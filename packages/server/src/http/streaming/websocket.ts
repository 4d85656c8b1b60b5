/**
 * A WebSocket server endpoint (RFC 6455) over the HTTP upgrade of `node:http(s)`, without a
 * dependency: the handshake, the framing (masking, fragmentation, 7/16/64-bit lengths), ping/pong
 * and the closing handshake with its status codes.
 *
 * The Kubernetes streaming subresources (`pods/exec`, `pods/attach`, `pods/portforward`) speak
 * their channel protocols on top of one {@link WebSocketConnection}.
 *
 * Guarantees:
 * - a peer's protocol error (unmasked frame, reserved bits or opcodes, oversized or fragmented
 *   control frames, a continuation out of place, invalid UTF-8 in a text message or close
 *   reason, an invalid close code) closes the connection with the code RFC 6455 §7.4 names for
 *   it (1002, 1007, 1009), then `close` is emitted once;
 * - pings are answered with pongs carrying the same payload, without the user's code;
 * - `close` is emitted exactly once, with the code and reason the peer sent (1005 when it sent
 *   none, 1006 when the connection dropped without a closing handshake).
 *
 * @example
 * ```ts
 * server.on('upgrade', (req, socket, head) => {
 *   const ws = acceptWebSocket(req, socket, head, { protocols: ['v5.channel.k8s.io'] });
 *   if (!ws) return; // not a WebSocket handshake: answered with 400 already
 *   ws.on('message', (data, isBinary) => ws.send(data, isBinary));
 *   ws.on('close', (code, reason) => console.log('closed', code, reason));
 * });
 * ```
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { isWebSocketRequest, offeredProtocols } from './upgrade.js';

export { isWebSocketRequest, offeredProtocols };

/** The GUID of RFC 6455 §1.3 that the accept key is derived with. */
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Opcodes of RFC 6455 §5.2. */
export const Opcode = {
  continuation: 0x0,
  text: 0x1,
  binary: 0x2,
  close: 0x8,
  ping: 0x9,
  pong: 0xa,
} as const;

/** Close codes of RFC 6455 §7.4.1 that this module sends or reports. */
export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  unsupportedData: 1003,
  /** Reported (never sent) when the peer's close frame carried no code. */
  noStatus: 1005,
  /** Reported (never sent) when the connection ended without a closing handshake. */
  abnormal: 1006,
  invalidPayload: 1007,
  policyViolation: 1008,
  messageTooBig: 1009,
  internalError: 1011,
} as const;

/** Options of {@link acceptWebSocket}. */
export interface AcceptWebSocketOptions {
  /**
   * Subprotocols the server speaks, in no particular order. The first protocol the client offers
   * (in its `Sec-WebSocket-Protocol` order) that is in this list is chosen, as Kubernetes' wsstream
   * does. Include `''` to accept a client that offers none. Without this option any offer is
   * ignored and no protocol is selected.
   */
  protocols?: readonly string[];
  /** Largest message (after reassembly of fragments) accepted, in bytes (default 64 MiB): beyond, close 1009. */
  maxPayload?: number;
  /** Extra headers of the 101 response. */
  headers?: Record<string, string>;
  /** How long {@link WebSocketConnection.close} waits for the peer's close frame (default 5 s). */
  closeTimeoutMs?: number;
}

/** Why a request cannot be upgraded to a WebSocket; `status` is the HTTP status to answer with. */
export class WebSocketHandshakeError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'WebSocketHandshakeError';
  }
}

/**
 * The subprotocol to select: the first the client offers that the server speaks (`''` stands for
 * "none offered"); undefined when there is none in common.
 */
export function selectProtocol(offered: readonly string[], supported: readonly string[]): string | undefined {
  const candidates = offered.length === 0 ? [''] : offered;
  return candidates.find((p) => supported.includes(p));
}

/**
 * Checks a WebSocket opening handshake (RFC 6455 §4.2.1) and returns the accept key and the chosen
 * subprotocol; throws {@link WebSocketHandshakeError} when the request is not a valid handshake or
 * no subprotocol is in common. Nothing is written.
 */
export function checkHandshake(
  req: IncomingMessage,
  options: Pick<AcceptWebSocketOptions, 'protocols'> = {},
): { accept: string; protocol: string | undefined } {
  if (req.method !== 'GET') throw new WebSocketHandshakeError(400, 'a WebSocket handshake must be a GET');
  if (!isWebSocketRequest(req)) throw new WebSocketHandshakeError(400, 'missing "Upgrade: websocket" header');
  const connection = (req.headers.connection ?? '').toLowerCase().split(/\s*,\s*/);
  if (!connection.includes('upgrade'))
    throw new WebSocketHandshakeError(400, 'missing "Connection: Upgrade" header');
  const version = req.headers['sec-websocket-version'];
  if (version !== '13')
    throw new WebSocketHandshakeError(426, 'unsupported WebSocket version', {
      'Sec-WebSocket-Version': '13',
    });
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || Buffer.from(key.trim(), 'base64').length !== 16)
    throw new WebSocketHandshakeError(400, 'invalid Sec-WebSocket-Key header');
  let protocol: string | undefined;
  if (options.protocols) {
    const offered = offeredProtocols(req);
    protocol = selectProtocol(offered, options.protocols);
    if (protocol === undefined)
      throw new WebSocketHandshakeError(
        400,
        `requested protocol(s) are not supported: [${offered.join(' ')}]; supports [${options.protocols.join(' ')}]`,
      );
  }
  const accept = createHash('sha1')
    .update(key.trim() + WS_GUID)
    .digest('base64');
  return { accept, protocol: protocol === '' ? undefined : protocol };
}

/**
 * Writes a plain HTTP response on a socket that was handed over by an `upgrade` event (which has
 * no `ServerResponse`), then ends the socket.
 */
export function rejectUpgrade(
  socket: Duplex,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (socket.destroyed) return;
  const all: Record<string, string> = {
    'Content-Type': 'text/plain; charset=utf-8',
    ...headers,
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  const head = [`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`];
  for (const [k, v] of Object.entries(all)) head.push(`${k}: ${v}`);
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  426: 'Upgrade Required',
  500: 'Internal Server Error',
};

/**
 * Accepts a WebSocket handshake on the socket of an `upgrade` event: answers `101 Switching
 * Protocols` and returns the open connection. When the request is not a valid handshake (or no
 * subprotocol is in common), answers the HTTP error itself and returns undefined; use
 * {@link checkHandshake} first to answer such requests differently.
 */
export function acceptWebSocket(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  options: AcceptWebSocketOptions = {},
): WebSocketConnection | undefined {
  let hs: { accept: string; protocol: string | undefined };
  try {
    hs = checkHandshake(req, options);
  } catch (err) {
    if (!(err instanceof WebSocketHandshakeError)) throw err;
    rejectUpgrade(socket, err.status, err.message, err.headers);
    return undefined;
  }
  const lines = [
    'HTTP/1.1 101 Switching Protocols',
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Accept: ${hs.accept}`,
  ];
  if (hs.protocol !== undefined) lines.push(`Sec-WebSocket-Protocol: ${hs.protocol}`);
  for (const [k, v] of Object.entries(options.headers ?? {})) lines.push(`${k}: ${v}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  const ws = new WebSocketConnection(socket, {
    protocol: hs.protocol ?? '',
    maxPayload: options.maxPayload ?? 64 * 1024 * 1024,
    closeTimeoutMs: options.closeTimeoutMs ?? 5000,
  });
  if (head.length > 0) ws.receive(head);
  return ws;
}

/** Events of a {@link WebSocketConnection}. */
export interface WebSocketEvents {
  /** A complete (reassembled) message: binary as sent, text as its UTF-8 bytes. */
  message: [data: Buffer, isBinary: boolean];
  /** A ping (already answered). */
  ping: [data: Buffer];
  pong: [data: Buffer];
  /** Once, when the connection is over: the peer's code and reason, or 1006 if it just dropped. */
  close: [code: number, reason: string];
  /** The socket's write buffer emptied (after a `send` returned false). */
  drain: [];
  /** A socket error; `close` follows. */
  error: [err: Error];
}

/**
 * One open WebSocket connection (server side). Messages go out unmasked and unfragmented; frames
 * coming in are parsed incrementally, so frames split across TCP reads and several frames in one
 * read are both handled.
 */
export class WebSocketConnection extends EventEmitter<WebSocketEvents> {
  /** The negotiated subprotocol (`''` when none). */
  readonly protocol: string;
  private readonly maxPayload: number;
  private readonly closeTimeoutMs: number;
  private buffer: Buffer = Buffer.alloc(0);
  /** Fragments of the message being received, and its type. */
  private fragments: Buffer[] = [];
  private fragmentsSize = 0;
  private fragmentOpcode: number | undefined;
  private closeSent = false;
  private closed = false;
  private closeTimer: NodeJS.Timeout | undefined;
  /** What the peer's close frame said, reported in `close`. */
  private peerClose: { code: number; reason: string } | undefined;

  /** @internal Made by {@link acceptWebSocket}. */
  constructor(
    private readonly socket: Duplex,
    o: { protocol: string; maxPayload: number; closeTimeoutMs: number },
  ) {
    super();
    this.protocol = o.protocol;
    this.maxPayload = o.maxPayload;
    this.closeTimeoutMs = o.closeTimeoutMs;
    const s = socket as Duplex & { setNoDelay?(b: boolean): void; setTimeout?(ms: number): void };
    s.setNoDelay?.(true);
    s.setTimeout?.(0);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('drain', () => this.emit('drain'));
    socket.on('error', (err) => {
      if (this.listenerCount('error') > 0) this.emit('error', err);
    });
    socket.on('close', () => this.finish());
    socket.on('end', () => {
      // The peer half-closed without a closing handshake: nothing more can come.
      socket.end();
    });
  }

  /** Whether messages can still be sent (no close frame sent and the socket is writable). */
  get isOpen(): boolean {
    return !this.closeSent && !this.closed && !this.socket.destroyed;
  }

  /**
   * Sends one message: a Buffer (or Uint8Array) as binary unless `isBinary` is false, a string as
   * text. Returns false when the socket's buffer is full (wait for `drain`); does nothing after close.
   */
  send(data: Buffer | Uint8Array | string, isBinary = typeof data !== 'string'): boolean {
    if (!this.isOpen) return false;
    const payload =
      typeof data === 'string'
        ? Buffer.from(data, 'utf8')
        : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return this.writeFrame(isBinary ? Opcode.binary : Opcode.text, payload);
  }

  /** Sends a ping (the peer answers with a pong event). */
  ping(data: Buffer = Buffer.alloc(0)): void {
    if (this.isOpen) this.writeFrame(Opcode.ping, data.subarray(0, 125));
  }

  /**
   * Starts the closing handshake: sends a close frame with the code (default 1000) and reason
   * (at most 123 bytes) and ends the writing side; the connection is dropped after the close
   * timeout if the peer does not end its side. Idempotent.
   */
  close(code: number = CloseCode.normal, reason = ''): void {
    if (this.closeSent || this.closed) return;
    this.sendClose(code, reason);
    // Nothing more goes out after a close frame: end our side now (the peer's close frame can
    // still be read), as kubelet's WebSocket server does; clients that wait for the TCP end
    // (the Python client) would otherwise wait for the close timeout.
    this.endSocket();
  }

  /** Drops the connection at once, without a closing handshake. */
  terminate(): void {
    this.socket.destroy();
  }

  private sendClose(code: number, reason: string): void {
    this.closeSent = true;
    let payload = Buffer.alloc(0);
    if (code !== CloseCode.noStatus) {
      const r = Buffer.from(reason, 'utf8').subarray(0, 123);
      payload = Buffer.alloc(2 + r.length);
      payload.writeUInt16BE(code, 0);
      r.copy(payload, 2);
    }
    this.writeFrame(Opcode.close, payload);
  }

  private writeFrame(opcode: number, payload: Buffer): boolean {
    if (this.socket.destroyed || !this.socket.writable) return false;
    const len = payload.length;
    let header: Buffer;
    if (len < 126) {
      header = Buffer.alloc(2);
      header[1] = len;
    } else if (len < 0x10000) {
      header = Buffer.alloc(4);
      header[1] = 126;
      header.writeUInt16BE(len, 2);
    } else {
      header = Buffer.alloc(10);
      header[1] = 127;
      header.writeBigUInt64BE(BigInt(len), 2);
    }
    header[0] = 0x80 | opcode;
    if (len === 0) return this.socket.write(header);
    this.socket.write(header);
    return this.socket.write(payload);
  }

  /** @internal Feeds bytes read from the socket (also the `head` of the upgrade). */
  receive(chunk: Buffer): void {
    if (this.closed) return;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    while (!this.closed && this.buffer.length >= 2) {
      const consumed = this.parseFrame(this.buffer);
      if (consumed === 0) break;
      this.buffer = this.buffer.subarray(consumed);
    }
  }

  /** Parses one frame at the start of `b`; returns the bytes used (0: incomplete, or failed). */
  private parseFrame(b: Buffer): number {
    const b0 = b[0]!;
    const b1 = b[1]!;
    const fin = (b0 & 0x80) !== 0;
    const opcode = b0 & 0x0f;
    const masked = (b1 & 0x80) !== 0;
    let len = b1 & 0x7f;
    let offset = 2;
    if ((b0 & 0x70) !== 0) return this.fail(CloseCode.protocolError, 'reserved bits set');
    const control = opcode >= 0x8;
    if (![0x0, 0x1, 0x2, 0x8, 0x9, 0xa].includes(opcode))
      return this.fail(CloseCode.protocolError, `reserved opcode ${opcode}`);
    if (!masked) return this.fail(CloseCode.protocolError, 'client frames must be masked');
    if (control && (!fin || len > 125))
      return this.fail(CloseCode.protocolError, 'control frames must be final and at most 125 bytes');
    if (len === 126) {
      if (b.length < 4) return 0;
      len = b.readUInt16BE(2);
      offset = 4;
    } else if (len === 127) {
      if (b.length < 10) return 0;
      const big = b.readBigUInt64BE(2);
      if (big >> 63n) return this.fail(CloseCode.protocolError, 'payload length has its high bit set');
      if (big > BigInt(this.maxPayload)) return this.fail(CloseCode.messageTooBig, 'message too big');
      len = Number(big);
      offset = 10;
    }
    if (!control && this.fragmentsSize + len > this.maxPayload)
      return this.fail(CloseCode.messageTooBig, 'message too big');
    if (b.length < offset + 4 + len) return 0;
    const mask = b.subarray(offset, offset + 4);
    const payload = Buffer.from(b.subarray(offset + 4, offset + 4 + len));
    for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
    const used = offset + 4 + len;

    if (control) {
      this.onControl(opcode, payload);
      return this.closed ? 0 : used;
    }
    if (opcode === Opcode.continuation) {
      if (this.fragmentOpcode === undefined)
        return this.fail(CloseCode.protocolError, 'continuation frame without a message to continue');
    } else {
      if (this.fragmentOpcode !== undefined)
        return this.fail(CloseCode.protocolError, 'new message before the fragmented one ended');
      this.fragmentOpcode = opcode;
    }
    this.fragments.push(payload);
    this.fragmentsSize += payload.length;
    if (fin) {
      const isBinary = this.fragmentOpcode === Opcode.binary;
      const data = this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments);
      this.fragments = [];
      this.fragmentsSize = 0;
      this.fragmentOpcode = undefined;
      if (!isBinary && !isUtf8(data))
        return this.fail(CloseCode.invalidPayload, 'invalid UTF-8 in a text message');
      // After our close frame, data may still arrive until the peer's close: RFC 6455 lets us drop it.
      if (!this.closeSent) this.emit('message', data, isBinary);
    }
    return used;
  }

  private onControl(opcode: number, payload: Buffer): void {
    if (opcode === Opcode.ping) {
      if (!this.closeSent) this.writeFrame(Opcode.pong, payload);
      this.emit('ping', payload);
      return;
    }
    if (opcode === Opcode.pong) {
      this.emit('pong', payload);
      return;
    }
    // close
    if (payload.length === 1) {
      this.fail(CloseCode.protocolError, 'close frame with a 1-byte payload');
      return;
    }
    let code: number = CloseCode.noStatus;
    let reason = '';
    if (payload.length >= 2) {
      code = payload.readUInt16BE(0);
      if (!validCloseCode(code)) {
        this.fail(CloseCode.protocolError, `invalid close code ${code}`);
        return;
      }
      const r = payload.subarray(2);
      if (!isUtf8(r)) {
        this.fail(CloseCode.invalidPayload, 'invalid UTF-8 in the close reason');
        return;
      }
      reason = r.toString('utf8');
    }
    this.peerClose = { code, reason };
    // Echo the code (RFC 6455 §5.5.1), then the server ends the TCP connection first (§7.1.1).
    if (!this.closeSent) this.sendClose(code === CloseCode.noStatus ? CloseCode.normal : code, '');
    this.endSocket();
    this.closed = true;
    this.emitClose();
  }

  /** Closes after a protocol violation of the peer. Returns 0 so the parser stops. */
  private fail(code: number, reason: string): number {
    if (!this.closeSent) this.sendClose(code, reason);
    this.peerClose ??= { code, reason };
    this.buffer = Buffer.alloc(0);
    this.endSocket();
    this.closed = true;
    this.emitClose();
    return 0;
  }

  /** Ends our side; a peer that keeps its side open is cut off after the close timeout. */
  private endSocket(): void {
    this.socket.end();
    if (this.closeTimer) clearTimeout(this.closeTimer);
    this.closeTimer = setTimeout(() => this.socket.destroy(), this.closeTimeoutMs);
    this.closeTimer.unref();
  }

  private emitted = false;
  private emitClose(): void {
    if (this.emitted) return;
    this.emitted = true;
    const { code, reason } = this.peerClose ?? { code: CloseCode.abnormal, reason: '' };
    this.emit('close', code, reason);
  }

  private finish(): void {
    if (this.closeTimer) clearTimeout(this.closeTimer);
    this.closed = true;
    this.emitClose();
  }
}

/** Close codes a peer may send (RFC 6455 §7.4.1 and §7.4.2). */
function validCloseCode(code: number): boolean {
  if (code >= 3000 && code <= 4999) return true;
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function isUtf8(b: Buffer): boolean {
  try {
    utf8.decode(b);
    return true;
  } catch {
    return false;
  }
}
