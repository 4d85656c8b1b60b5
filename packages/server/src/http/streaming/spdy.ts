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
import { createInflate, type Inflate, constants as zconst } from 'node:zlib';

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

/** Header names (lower case, as SPDY requires) to their values; several values travel NUL-joined. */
export type SpdyHeaders = Record<string, string[]>;

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

/** A malformed frame or header block: the session answers it with GOAWAY PROTOCOL_ERROR. */
export class SpdyProtocolError extends Error {
  override readonly name = 'SpdyProtocolError';
}

// The SPDY/3 header compression dictionary (§2.6.10.1): 65 length-prefixed words, then text.
// biome-ignore format: a word list reads best packed
const DICTIONARY_WORDS = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset',
  'accept-encoding', 'accept-language', 'accept-ranges', 'age', 'allow', 'authorization',
  'cache-control', 'connection', 'content-base', 'content-encoding', 'content-language',
  'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date',
  'etag', 'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match',
  'if-range', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'pragma',
  'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after', 'server', 'te',
  'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
  'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public',
  'set-cookie', 'keep-alive', 'origin',
];
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request' +
  '401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented' +
  '503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ' +
  'Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,' +
  'application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=' +
  'gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The 1423-byte zlib dictionary of SPDY/3 header blocks. */
export const SPDY_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_WORDS.flatMap((w) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length);
    return [len, Buffer.from(w, 'latin1')];
  }),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
]);

/** Adler-32 (RFC 1950), the id by which a zlib stream names its preset dictionary. */
export function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length; ) {
    // 5552 bytes is the most that can be summed before the 32-bit sums must be reduced.
    const end = Math.min(i + 5552, data.length);
    for (; i < end; i++) {
      a += data[i] as number;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Serialises a header block (before compression): count, then length-prefixed names and values. */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [u32(entries.length)];
  for (const [name, values] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(values.join('\0'), 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

/** Parses an uncompressed header block; names must be lower case and unique (SPDY/3 §2.6.10). */
export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = {};
  let off = 0;
  const need = (n: number) => {
    if (off + n > block.length) throw new SpdyProtocolError('truncated header block');
  };
  need(4);
  const count = block.readUInt32BE(off);
  off += 4;
  for (let i = 0; i < count; i++) {
    need(4);
    const nl = block.readUInt32BE(off);
    off += 4;
    need(nl);
    const name = block.toString('utf8', off, off + nl);
    off += nl;
    need(4);
    const vl = block.readUInt32BE(off);
    off += 4;
    need(vl);
    const value = block.toString('utf8', off, off + vl);
    off += vl;
    if (name.length === 0 || name !== name.toLowerCase())
      throw new SpdyProtocolError(`invalid header name ${JSON.stringify(name)}`);
    if (Object.hasOwn(headers, name)) throw new SpdyProtocolError(`duplicate header ${name}`);
    headers[name] = value.split('\0');
  }
  if (off !== block.length) throw new SpdyProtocolError('trailing bytes after header block');
  return headers;
}

/**
 * The sending half of header compression: one zlib stream for the whole connection, its first
 * block carrying the zlib header with the dictionary's id, every block ending byte-aligned so the
 * peer's inflater can hand it over at once. Stored (uncompressed) deflate blocks keep it synchronous.
 */
export class HeaderCompressor {
  private started = false;

  compress(block: Buffer): Buffer {
    const parts: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      // CMF 0x78 (deflate, 32 KiB window), FLG 0xBB (FDICT set, check bits), then DICTID.
      parts.push(Buffer.from([0x78, 0xbb]), u32(adler32(SPDY_DICTIONARY)));
    }
    for (let off = 0; off < block.length; off += 0xffff) {
      const chunk = block.subarray(off, off + 0xffff);
      parts.push(storedBlockHeader(chunk.length), chunk);
    }
    // An empty stored block ends the block as zlib's Z_SYNC_FLUSH does. Go's inflater hands data
    // over only at such a flush point; without it, it reads on for the next deflate block, past
    // this frame's payload, and spdystream fails the frame ("compressed payload size was incorrect").
    parts.push(storedBlockHeader(0));
    return Buffer.concat(parts);
  }
}

/** The receiving half of header compression: one inflater for the connection, flushed per block. */
export class HeaderDecompressor {
  private readonly z: Inflate;
  private out: Buffer[] = [];
  private size = 0;
  private error: Error | undefined;

  /** @param maxBlockBytes the largest inflated header block accepted (a guard against zip bombs). */
  constructor(private readonly maxBlockBytes = 1 << 20) {
    this.z = createInflate({ dictionary: SPDY_DICTIONARY, flush: zconst.Z_SYNC_FLUSH });
    this.z.on('data', (b: Buffer) => this.collect(b));
    this.z.on('error', (err) => {
      this.error = err;
    });
  }

  private collect(b: Buffer): void {
    this.out.push(b);
    this.size += b.length;
  }

  /** Inflates one compressed header block. Calls must not overlap. */
  decompress(block: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const fail = (err: Error) => {
        this.error = err;
        reject(new SpdyProtocolError(`header decompression failed: ${err.message}`));
      };
      if (this.error) {
        fail(this.error);
        return;
      }
      // A corrupt stream errors (and destroys the inflater) without calling the write callback.
      this.z.once('error', fail);
      this.z.write(block, (err) => {
        this.z.off('error', fail);
        if (err) {
          fail(err);
          return;
        }
        // Output produced by this write is pushed before its callback; read() takes any that a
        // paused stream kept buffered.
        for (let b = this.z.read() as Buffer | null; b !== null; b = this.z.read() as Buffer | null)
          this.collect(b);
        const out = Buffer.concat(this.out);
        const size = this.size;
        this.out = [];
        this.size = 0;
        if (size > this.maxBlockBytes) reject(new SpdyProtocolError('header block too large'));
        else resolve(out);
      });
    });
  }

  close(): void {
    this.z.destroy();
  }
}

/** A stored deflate block's header: BFINAL 0, BTYPE 00, padding to the byte, LEN and NLEN. */
function storedBlockHeader(len: number): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt16LE(len, 1);
  head.writeUInt16LE(~len & 0xffff, 3);
  return head;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

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
