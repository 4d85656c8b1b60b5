/**
 * SPDY/3.1 framing and a server-side session, as kubectl speaks it for `port-forward` (and for
 * exec/attach when WebSockets are off): client-go's `httpstream/spdy` upgrades an HTTP/1.1
 * connection with `Upgrade: SPDY/3.1` (or tunnels the same bytes inside WebSocket binary
 * messages) and then runs moby/spdystream over it.
 *
 * What the peers of this session need, and therefore what is implemented:
 * - every frame type of SPDY/3 is parsed (SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING,
 *   GOAWAY, HEADERS, WINDOW_UPDATE, DATA); unknown control frames are skipped, as the spec says;
 * - header blocks are one zlib stream per direction, primed with the SPDY/3 dictionary and
 *   flushed after every block. Incoming blocks are inflated by node:zlib. Outgoing blocks are
 *   written as deflate *stored* blocks: valid zlib that every inflater reads, and writing them is
 *   synchronous, so frames leave in the order they were written without a compression queue;
 * - flow control is not enforced in either direction: spdystream (both ends of every real
 *   Kubernetes SPDY connection) neither sends WINDOW_UPDATE nor waits for one, so a window here
 *   would only stall a peer that never opens it. WINDOW_UPDATE frames are read and ignored.
 */
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import {
  decodeHeaderBlock,
  encodeHeaderBlock,
  HeaderCompressor,
  HeaderDecompressor,
  type SpdyHeaders,
  SpdyProtocolError,
  u32,
} from './spdy-headers.js';

export {
  adler32,
  decodeHeaderBlock,
  encodeHeaderBlock,
  HeaderCompressor,
  HeaderDecompressor,
  SPDY_DICTIONARY,
  type SpdyHeaders,
  SpdyProtocolError,
} from './spdy-headers.js';

/** SPDY version this module speaks. */
export const SPDY_VERSION = 3;

/** The `Upgrade` token of a SPDY/3.1 connection. */
export const SPDY_UPGRADE = 'SPDY/3.1';

/** Control frame types (SPDY/3 §2.6). */
export const FrameType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;

/** Flag bits. FIN ends the sender's half of a stream; UNIDIRECTIONAL only on SYN_STREAM. */
export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** RST_STREAM status codes (SPDY/3 §2.6.3). */
export const RstStatus = {
  PROTOCOL_ERROR: 1,
  INVALID_STREAM: 2,
  REFUSED_STREAM: 3,
  UNSUPPORTED_VERSION: 4,
  CANCEL: 5,
  INTERNAL_ERROR: 6,
  FLOW_CONTROL_ERROR: 7,
  STREAM_IN_USE: 8,
  STREAM_ALREADY_CLOSED: 9,
  FRAME_TOO_LARGE: 11,
} as const;

/** GOAWAY status codes. */
export const GoAwayStatus = { OK: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2 } as const;

/** One SPDY frame, decoded. */
export type SpdyFrame =
  | { type: 'data'; streamId: number; flags: number; data: Buffer }
  | {
      type: 'syn_stream';
      streamId: number;
      associatedToStreamId: number;
      priority: number;
      slot: number;
      flags: number;
      headers: SpdyHeaders;
    }
  | { type: 'syn_reply'; streamId: number; flags: number; headers: SpdyHeaders }
  | { type: 'rst_stream'; streamId: number; status: number }
  | { type: 'settings'; flags: number; entries: { flags: number; id: number; value: number }[] }
  | { type: 'ping'; id: number }
  | { type: 'goaway'; lastGoodStreamId: number; status: number }
  | { type: 'headers'; streamId: number; flags: number; headers: SpdyHeaders }
  | { type: 'window_update'; streamId: number; delta: number }
  | { type: 'unknown'; frameType: number; flags: number; payload: Buffer };

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > 0xffffff) throw new RangeError('SPDY frame payload larger than 16 MiB');
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

/**
 * Encodes frames; owns the outgoing header compression context, so one encoder per connection
 * and frames encoded in the order they are sent.
 */
export class SpdyEncoder {
  private readonly headers = new HeaderCompressor();

  encode(frame: SpdyFrame): Buffer {
    switch (frame.type) {
      case 'data': {
        if (frame.data.length > 0xffffff) throw new RangeError('SPDY data frame larger than 16 MiB');
        const head = Buffer.alloc(8);
        head.writeUInt32BE(frame.streamId & 0x7fffffff, 0);
        head.writeUInt32BE(((frame.flags & 0xff) << 24) | frame.data.length, 4);
        return Buffer.concat([head, frame.data]);
      }
      case 'syn_stream': {
        const fixed = Buffer.alloc(10);
        fixed.writeUInt32BE(frame.streamId & 0x7fffffff, 0);
        fixed.writeUInt32BE(frame.associatedToStreamId & 0x7fffffff, 4);
        fixed[8] = (frame.priority & 0x07) << 5;
        fixed[9] = frame.slot & 0xff;
        const block = this.headers.compress(encodeHeaderBlock(frame.headers));
        return controlFrame(FrameType.SYN_STREAM, frame.flags, Buffer.concat([fixed, block]));
      }
      case 'syn_reply':
      case 'headers': {
        const block = this.headers.compress(encodeHeaderBlock(frame.headers));
        return controlFrame(
          frame.type === 'syn_reply' ? FrameType.SYN_REPLY : FrameType.HEADERS,
          frame.flags,
          Buffer.concat([u32(frame.streamId & 0x7fffffff), block]),
        );
      }
      case 'rst_stream':
        return controlFrame(
          FrameType.RST_STREAM,
          0,
          Buffer.concat([u32(frame.streamId & 0x7fffffff), u32(frame.status)]),
        );
      case 'settings': {
        const parts = [u32(frame.entries.length)];
        for (const e of frame.entries)
          parts.push(u32(((e.flags & 0xff) << 24) | (e.id & 0xffffff)), u32(e.value));
        return controlFrame(FrameType.SETTINGS, frame.flags, Buffer.concat(parts));
      }
      case 'ping':
        return controlFrame(FrameType.PING, 0, u32(frame.id));
      case 'goaway':
        return controlFrame(
          FrameType.GOAWAY,
          0,
          Buffer.concat([u32(frame.lastGoodStreamId & 0x7fffffff), u32(frame.status)]),
        );
      case 'window_update':
        return controlFrame(
          FrameType.WINDOW_UPDATE,
          0,
          Buffer.concat([u32(frame.streamId & 0x7fffffff), u32(frame.delta & 0x7fffffff)]),
        );
      case 'unknown':
        return controlFrame(frame.frameType, frame.flags, frame.payload);
    }
  }
}

/**
 * Decodes a byte stream into frames; owns the incoming header decompression context. `push`
 * must be awaited before the next call (header blocks share one zlib stream, in order).
 */
export class SpdyDecoder {
  private buf: Buffer = Buffer.alloc(0);
  private readonly headers = new HeaderDecompressor();

  /** Appends bytes and returns the frames they complete, in order. */
  async push(chunk: Buffer): Promise<SpdyFrame[]> {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const frames: SpdyFrame[] = [];
    while (this.buf.length >= 8) {
      const len = this.buf.readUInt32BE(4) & 0xffffff;
      if (this.buf.length < 8 + len) break;
      const head = this.buf.subarray(0, 8);
      const payload = this.buf.subarray(8, 8 + len);
      this.buf = this.buf.subarray(8 + len);
      frames.push(await this.frame(head, payload));
    }
    return frames;
  }

  close(): void {
    this.headers.close();
  }

  private async frame(head: Buffer, payload: Buffer): Promise<SpdyFrame> {
    const first = head.readUInt32BE(0);
    const flags = head[4] as number;
    if ((first & 0x80000000) === 0) {
      const streamId = first & 0x7fffffff;
      if (streamId === 0) throw new SpdyProtocolError('data frame on stream 0');
      return { type: 'data', streamId, flags, data: Buffer.from(payload) };
    }
    const version = (first >>> 16) & 0x7fff;
    if (version !== SPDY_VERSION) throw new SpdyProtocolError(`unsupported SPDY version ${version}`);
    const type = first & 0xffff;
    const need = (n: number) => {
      if (payload.length < n) throw new SpdyProtocolError(`control frame ${type} too short`);
    };
    const id31 = (off: number) => payload.readUInt32BE(off) & 0x7fffffff;
    switch (type) {
      case FrameType.SYN_STREAM: {
        need(10);
        const headers = decodeHeaderBlock(await this.headers.decompress(payload.subarray(10)));
        const streamId = id31(0);
        if (streamId === 0) throw new SpdyProtocolError('SYN_STREAM on stream 0');
        return {
          type: 'syn_stream',
          streamId,
          associatedToStreamId: id31(4),
          priority: (payload[8] as number) >> 5,
          slot: payload[9] as number,
          flags,
          headers,
        };
      }
      case FrameType.SYN_REPLY:
      case FrameType.HEADERS: {
        need(4);
        const headers = decodeHeaderBlock(await this.headers.decompress(payload.subarray(4)));
        return {
          type: type === FrameType.SYN_REPLY ? 'syn_reply' : 'headers',
          streamId: id31(0),
          flags,
          headers,
        };
      }
      case FrameType.RST_STREAM:
        need(8);
        return { type: 'rst_stream', streamId: id31(0), status: payload.readUInt32BE(4) };
      case FrameType.SETTINGS: {
        need(4);
        const count = payload.readUInt32BE(0);
        need(4 + count * 8);
        const entries = [];
        for (let i = 0; i < count; i++) {
          const w = payload.readUInt32BE(4 + i * 8);
          entries.push({ flags: w >>> 24, id: w & 0xffffff, value: payload.readUInt32BE(8 + i * 8) });
        }
        return { type: 'settings', flags, entries };
      }
      case FrameType.PING:
        need(4);
        return { type: 'ping', id: payload.readUInt32BE(0) };
      case FrameType.GOAWAY:
        need(8);
        return { type: 'goaway', lastGoodStreamId: id31(0), status: payload.readUInt32BE(4) };
      case FrameType.WINDOW_UPDATE:
        need(8);
        return { type: 'window_update', streamId: id31(0), delta: id31(4) };
      default:
        return { type: 'unknown', frameType: type, flags, payload: Buffer.from(payload) };
    }
  }
}

/** A stream the peer opened: a Duplex of its DATA frames, with the headers of its SYN_STREAM. */
export class SpdyStream extends Duplex {
  private replied = false;
  private remoteDone = false;

  constructor(
    private readonly session: SpdySession,
    readonly id: number,
    readonly headers: SpdyHeaders,
    remoteFin: boolean,
  ) {
    super({ allowHalfOpen: true });
    this.on('finish', () => this.maybeForget());
    if (remoteFin) this.finishRemote();
  }

  /** The first value of a header, as Go's `http.Header.Get` reads it. */
  header(name: string): string {
    return this.headers[name.toLowerCase()]?.[0] ?? '';
  }

  /** Accepts the stream: SYN_REPLY with empty headers, as spdystream's server does. */
  reply(): void {
    if (this.replied) return;
    this.replied = true;
    this.session.send({ type: 'syn_reply', streamId: this.id, flags: 0, headers: {} });
  }

  /** Refuses or aborts the stream with RST_STREAM (default CANCEL, as spdystream's `Reset`). */
  reset(status: number = RstStatus.CANCEL): void {
    this.replied = true;
    this.session.send({ type: 'rst_stream', streamId: this.id, status });
    this.session.forget(this.id);
    this.destroy();
  }

  /** @internal DATA from the peer. */
  receive(data: Buffer, fin: boolean): void {
    if (this.remoteDone) return;
    if (data.length > 0) this.push(data);
    if (fin) this.finishRemote();
  }

  /** @internal RST_STREAM from the peer, or the connection went away. */
  abort(): void {
    this.session.forget(this.id);
    if (!this.remoteDone) {
      this.remoteDone = true;
      this.push(null);
    }
    this.destroy();
  }

  private finishRemote(): void {
    this.remoteDone = true;
    this.push(null);
    this.maybeForget();
  }

  private maybeForget(): void {
    if (this.remoteDone && this.writableFinished) this.session.forget(this.id);
  }

  override _read(): void {
    // DATA is pushed as it arrives: the peer does not do flow control (see the module comment).
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.reply();
    let flowing = true;
    for (let off = 0; off < chunk.length; off += 0xffff)
      flowing = this.session.send({
        type: 'data',
        streamId: this.id,
        flags: 0,
        data: chunk.subarray(off, off + 0xffff),
      });
    // The connection's socket is this stream's only back-pressure (no SPDY windows, see above).
    if (flowing) cb();
    else this.session.whenDrained(() => cb());
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.reply();
    // spdystream's Close: an empty DATA frame with FIN.
    this.session.send({ type: 'data', streamId: this.id, flags: FLAG_FIN, data: Buffer.alloc(0) });
    cb();
  }
}

/** Events of a {@link SpdySession}. */
export interface SpdySessionEvents {
  /** A SYN_STREAM arrived; call `reply()` (or write) to accept it, `reset()` to refuse it. */
  stream: [SpdyStream];
  /** The connection ended (peer GOAWAY, transport closed, protocol error, or `close()`). */
  close: [];
}

/**
 * The server side of a SPDY/3.1 connection over any byte Duplex (an upgraded socket, or a
 * WebSocket tunnel). It answers PINGs, accepts peer streams (odd ids, increasing), and ends with
 * GOAWAY.
 *
 * @example
 * ```ts
 * const session = new SpdySession(socket);
 * session.on('stream', (s) => { s.reply(); s.end('hello'); });
 * ```
 */
export class SpdySession extends EventEmitter<SpdySessionEvents> {
  private readonly encoder = new SpdyEncoder();
  private readonly decoder = new SpdyDecoder();
  private readonly streams = new Map<number, SpdyStream>();
  private lastPeerStreamId = 0;
  private input: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly transport: Duplex) {
    super();
    transport.on('data', (chunk: Buffer) => {
      this.input = this.input.then(() => this.consume(chunk));
    });
    transport.on('end', () => {
      this.input = this.input.then(() => this.shutdown());
    });
    transport.on('close', () => {
      this.input = this.input.then(() => this.shutdown());
    });
    transport.on('error', () => {
      // The transport's 'close' follows; there is nobody to report a dropped peer to.
    });
  }

  /** Streams currently open (for tests and idle checks). */
  get openStreams(): number {
    return this.streams.size;
  }

  /** @internal Writes a frame; false when the transport's buffer is full. */
  send(frame: SpdyFrame): boolean {
    if (this.closed || this.transport.destroyed || this.transport.writableEnded) return true;
    return this.transport.write(this.encoder.encode(frame));
  }

  /** @internal Calls `fn` once the transport drains, or at once when it is gone. */
  whenDrained(fn: () => void): void {
    if (this.closed || this.transport.destroyed) {
      fn();
      return;
    }
    const done = () => {
      this.transport.off('drain', done);
      this.off('close', done);
      fn();
    };
    this.transport.on('drain', done);
    this.on('close', done);
  }

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id);
  }

  /** Sends GOAWAY, closes every stream and ends the transport. */
  close(status: number = GoAwayStatus.OK): void {
    if (this.closed) return;
    this.send({ type: 'goaway', lastGoodStreamId: this.lastPeerStreamId, status });
    this.transport.end();
    void this.shutdown();
  }

  private async consume(chunk: Buffer): Promise<void> {
    if (this.closed) return;
    try {
      for (const f of await this.decoder.push(chunk)) this.handle(f);
    } catch {
      // A malformed frame (SpdyProtocolError) or a handler's failure: the connection cannot go on.
      this.close(GoAwayStatus.PROTOCOL_ERROR);
    }
  }

  private handle(f: SpdyFrame): void {
    if (this.closed) return;
    switch (f.type) {
      case 'syn_stream': {
        // Peer streams have odd ids that only grow (SPDY/3 §2.3.2).
        if (f.streamId % 2 === 0 || f.streamId <= this.lastPeerStreamId) {
          this.send({ type: 'rst_stream', streamId: f.streamId, status: RstStatus.PROTOCOL_ERROR });
          return;
        }
        this.lastPeerStreamId = f.streamId;
        const stream = new SpdyStream(this, f.streamId, f.headers, (f.flags & FLAG_FIN) !== 0);
        this.streams.set(f.streamId, stream);
        this.emit('stream', stream);
        return;
      }
      case 'data':
        this.streams.get(f.streamId)?.receive(f.data, (f.flags & FLAG_FIN) !== 0);
        return;
      case 'rst_stream':
        this.streams.get(f.streamId)?.abort();
        return;
      case 'headers':
        if ((f.flags & FLAG_FIN) !== 0) this.streams.get(f.streamId)?.receive(Buffer.alloc(0), true);
        return;
      case 'ping':
        // Echo the peer's pings (odd ids from a client); ours would be even, and we send none.
        if (f.id % 2 === 1) this.send(f);
        return;
      case 'goaway':
        this.transport.end();
        void this.shutdown();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, SYN_REPLY (we open no streams) and unknown types: nothing to do.
        return;
    }
  }

  private async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.transport.writableEnded) this.transport.end();
    for (const s of [...this.streams.values()]) s.abort();
    this.streams.clear();
    this.decoder.close();
    this.emit('close');
  }
}
