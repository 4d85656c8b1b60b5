import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { createDeflate, inflateSync, constants as zconst } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  adler32,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  HeaderCompressor,
  RstStatus,
  SPDY_DICTIONARY,
  SpdyDecoder,
  SpdyEncoder,
  type SpdyFrame,
  SpdySession,
  type SpdyStream,
} from './spdy.js';

describe('SPDY/3 header compression', () => {
  it('builds the 1423-byte dictionary of the spec (its zlib id is 0xe3c6a7c2)', () => {
    expect(SPDY_DICTIONARY.length).toBe(1423);
    expect(adler32(SPDY_DICTIONARY).toString(16)).toBe('e3c6a7c2');
    expect(adler32(Buffer.from('Wikipedia'))).toBe(0x11e60398);
  });

  it('round-trips header blocks, several values joined by NUL', () => {
    const h = { streamtype: ['data'], port: ['80'], multi: ['a', 'b'] };
    expect(decodeHeaderBlock(encodeHeaderBlock(h))).toEqual(h);
    expect(() => decodeHeaderBlock(encodeHeaderBlock({ Port: ['1'] }).fill(0x50, 8, 9))).toThrow(
      /invalid header name/,
    );
  });

  it('writes one zlib stream across blocks that zlib inflates with the dictionary', () => {
    const c = new HeaderCompressor();
    const a = encodeHeaderBlock({ streamtype: ['error'], port: ['80'] });
    const b = encodeHeaderBlock({ streamtype: ['data'], port: ['80'], requestid: ['0'] });
    const first = c.compress(a);
    const second = c.compress(b);
    // Each block ends at a sync-flush point (an empty stored block), where Go's inflater stops.
    for (const block of [first, second]) expect([...block.subarray(-5)]).toEqual([0, 0, 0, 0xff, 0xff]);
    const stream = Buffer.concat([first, second]);
    const out = inflateSync(stream, { dictionary: SPDY_DICTIONARY, finishFlush: zconst.Z_SYNC_FLUSH });
    expect(out).toEqual(Buffer.concat([a, b]));
  });

  it('reads header blocks compressed by a real deflater, flushed per block as Go writes them', async () => {
    const deflate = createDeflate({ dictionary: SPDY_DICTIONARY });
    const chunks: Buffer[] = [];
    deflate.on('data', (b: Buffer) => chunks.push(b));
    const block = async (headers: Record<string, string[]>): Promise<Buffer> => {
      deflate.write(encodeHeaderBlock(headers));
      await new Promise<void>((r) => deflate.flush(zconst.Z_SYNC_FLUSH, () => r()));
      return Buffer.concat(chunks.splice(0));
    };
    const frame = (type: number, streamId: number, compressed: Buffer): Buffer => {
      const fixed = Buffer.alloc(type === 1 ? 10 : 4);
      fixed.writeUInt32BE(streamId);
      const payload = Buffer.concat([fixed, compressed]);
      const head = Buffer.alloc(8);
      head.writeUInt16BE(0x8003, 0);
      head.writeUInt16BE(type, 2);
      head.writeUInt32BE(payload.length, 4);
      return Buffer.concat([head, payload]);
    };
    const bytes = Buffer.concat([
      frame(1, 1, await block({ streamtype: ['error'], port: ['80'], requestid: ['0'] })),
      frame(1, 3, await block({ streamtype: ['data'], port: ['80'], requestid: ['0'] })),
    ]);
    deflate.close();
    const d = new SpdyDecoder();
    const frames: SpdyFrame[] = [];
    // One byte at a time: frames and header blocks must survive any split of the input.
    for (const byte of bytes) frames.push(...(await d.push(Buffer.from([byte]))));
    d.close();
    expect(frames).toMatchObject([
      { type: 'syn_stream', streamId: 1, headers: { streamtype: ['error'], port: ['80'], requestid: ['0'] } },
      { type: 'syn_stream', streamId: 3, headers: { streamtype: ['data'], port: ['80'], requestid: ['0'] } },
    ]);
  });
});

describe('SPDY/3 frames', () => {
  it('encodes and decodes every frame type', async () => {
    const frames: SpdyFrame[] = [
      {
        type: 'syn_stream',
        streamId: 1,
        associatedToStreamId: 0,
        priority: 2,
        slot: 0,
        flags: 0,
        headers: { streamtype: ['error'] },
      },
      { type: 'syn_reply', streamId: 1, flags: 0, headers: {} },
      { type: 'headers', streamId: 1, flags: FLAG_FIN, headers: { x: ['y'] } },
      { type: 'data', streamId: 1, flags: FLAG_FIN, data: Buffer.from('hello') },
      { type: 'rst_stream', streamId: 3, status: RstStatus.CANCEL },
      { type: 'settings', flags: 0, entries: [{ flags: 0, id: 7, value: 65536 }] },
      { type: 'ping', id: 1 },
      { type: 'goaway', lastGoodStreamId: 5, status: 0 },
      { type: 'window_update', streamId: 1, delta: 1024 },
      { type: 'unknown', frameType: 0x77, flags: 0, payload: Buffer.from([1, 2]) },
    ];
    const enc = new SpdyEncoder();
    const bytes = Buffer.concat(frames.map((f) => enc.encode(f)));
    const dec = new SpdyDecoder();
    const out = [...(await dec.push(bytes.subarray(0, 13))), ...(await dec.push(bytes.subarray(13)))];
    dec.close();
    expect(out).toEqual(frames);
  });

  it('lays out a control frame header as the spec does', () => {
    const b = new SpdyEncoder().encode({ type: 'ping', id: 7 });
    expect([...b]).toEqual([0x80, 0x03, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 7]);
    const d = new SpdyEncoder().encode({
      type: 'data',
      streamId: 3,
      flags: FLAG_FIN,
      data: Buffer.from('x'),
    });
    expect([...d]).toEqual([0, 0, 0, 3, 0x01, 0, 0, 1, 0x78]);
  });
});

describe('SpdySession', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  /** A session on a real socket, and a raw client on the other end that speaks frames. */
  async function pair(onStream: (s: SpdyStream) => void) {
    const server = createServer((sock) => {
      const session = new SpdySession(sock);
      session.on('stream', onStream);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const sock: Socket = connect(port, '127.0.0.1');
    await once(sock, 'connect');
    cleanups.push(() => {
      sock.destroy();
      server.close();
    });
    const enc = new SpdyEncoder();
    const dec = new SpdyDecoder();
    const received: SpdyFrame[] = [];
    let waiters: (() => void)[] = [];
    let chain = Promise.resolve();
    sock.on('data', (c: Buffer) => {
      chain = chain.then(async () => {
        received.push(...(await dec.push(c)));
        for (const w of waiters.splice(0)) w();
      });
    });
    let ended = false;
    sock.on('end', () => {
      ended = true;
      for (const w of waiters.splice(0)) w();
    });
    return {
      send: (f: SpdyFrame) => sock.write(enc.encode(f)),
      /** Waits until the received frames satisfy `pred` (or the server ends the connection). */
      async until(pred: (frames: SpdyFrame[]) => boolean): Promise<SpdyFrame[]> {
        while (!pred(received) && !ended) await new Promise<void>((r) => waiters.push(r));
        waiters = [];
        return received;
      },
      ended: () => ended,
    };
  }

  const syn = (streamId: number, headers: Record<string, string[]>): SpdyFrame => ({
    type: 'syn_stream',
    streamId,
    associatedToStreamId: 0,
    priority: 0,
    slot: 0,
    flags: 0,
    headers,
  });

  it('replies to streams, carries data both ways with FIN, and echoes pings', async () => {
    const c = await pair((s) => {
      s.reply();
      s.pipe(s); // echo until the peer's FIN, then FIN back
    });
    c.send(syn(1, { streamtype: ['data'] }));
    c.send({ type: 'ping', id: 1 });
    c.send({ type: 'data', streamId: 1, flags: 0, data: Buffer.from('hel') });
    c.send({ type: 'data', streamId: 1, flags: FLAG_FIN, data: Buffer.from('lo') });
    const frames = await c.until((fs) => fs.some((f) => f.type === 'data' && (f.flags & FLAG_FIN) !== 0));
    expect(frames[0]).toEqual({ type: 'syn_reply', streamId: 1, flags: 0, headers: {} });
    expect(frames).toContainEqual({ type: 'ping', id: 1 });
    const data = frames.filter((f): f is Extract<SpdyFrame, { type: 'data' }> => f.type === 'data');
    expect(Buffer.concat(data.map((f) => f.data)).toString()).toBe('hello');
  });

  it('resets a refused stream and one whose id does not grow', async () => {
    const c = await pair((s) => {
      if (s.header('port') === '0') s.reset();
      else s.reply();
    });
    c.send(syn(3, { port: ['80'] }));
    c.send(syn(5, { port: ['0'] }));
    c.send(syn(1, { port: ['80'] }));
    const frames = await c.until((fs) => fs.filter((f) => f.type === 'rst_stream').length === 2);
    expect(frames).toContainEqual({ type: 'syn_reply', streamId: 3, flags: 0, headers: {} });
    expect(frames).toContainEqual({ type: 'rst_stream', streamId: 5, status: RstStatus.CANCEL });
    expect(frames).toContainEqual({ type: 'rst_stream', streamId: 1, status: RstStatus.PROTOCOL_ERROR });
  });

  it('aborts its streams when the peer sends GOAWAY', async () => {
    let stream: SpdyStream | undefined;
    const closed = new Promise<void>((resolve) => {
      void pair((s) => {
        stream = s;
        s.reply();
        s.on('close', () => resolve());
      }).then((c) => {
        c.send(syn(1, {}));
        void c
          .until((fs) => fs.length > 0)
          .then(() => c.send({ type: 'goaway', lastGoodStreamId: 0, status: 0 }));
      });
    });
    await closed;
    expect(stream?.destroyed).toBe(true);
  });

  it('answers a malformed frame with GOAWAY PROTOCOL_ERROR', async () => {
    const c = await pair(() => {});
    // A SYN_STREAM whose header block is not zlib.
    c.send({ type: 'unknown', frameType: 1, flags: 0, payload: Buffer.from('0123456789garbage') });
    const frames = await c.until((fs) => fs.some((f) => f.type === 'goaway'));
    expect(frames).toContainEqual({ type: 'goaway', lastGoodStreamId: 0, status: 1 });
  });
});
