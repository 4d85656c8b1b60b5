import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type AcceptWebSocketOptions, acceptWebSocket, type WebSocketConnection } from './websocket.js';

/** A plain HTTP server whose upgrades are accepted with `options`; connections are handed to `onConn`. */
async function serve(
  onConn: (ws: WebSocketConnection) => void,
  options: AcceptWebSocketOptions = {},
): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => res.end('plain'));
  server.on('upgrade', (req, socket, head) => {
    const ws = acceptWebSocket(req, socket, head, options);
    if (ws) onConn(ws);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return { server, port: (server.address() as AddressInfo).port };
}
const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** A client frame (masked unless told otherwise). */
function frame(
  opcode: number,
  payload: Buffer,
  o: { fin?: boolean; mask?: boolean; rsv?: number; lengthBytes?: 2 | 8 } = {},
): Buffer {
  const fin = o.fin ?? true;
  const mask = o.mask ?? true;
  const len = payload.length;
  let header: Buffer;
  if (len < 126 && !o.lengthBytes) {
    header = Buffer.from([0, len]);
  } else if ((len < 0x10000 && o.lengthBytes !== 8) || o.lengthBytes === 2) {
    header = Buffer.alloc(4);
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header = Buffer.alloc(10);
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  header[0] = (fin ? 0x80 : 0) | ((o.rsv ?? 0) << 4) | opcode;
  if (!mask) return Buffer.concat([header, payload]);
  header[1]! |= 0x80;
  const key = randomBytes(4);
  const masked = Buffer.from(payload);
  for (let i = 0; i < masked.length; i++) masked[i]! ^= key[i & 3]!;
  return Buffer.concat([header, key, masked]);
}

/** Server frames read back from a raw socket. */
interface ServerFrame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
}

/** A raw TCP client that did the handshake: write frames, read the server's frames. */
async function rawClient(
  port: number,
  protocols?: string,
): Promise<{
  socket: Socket;
  response: string;
  next(): Promise<ServerFrame>;
  ended: Promise<void>;
}> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(
    [
      'GET /x HTTP/1.1',
      'Host: localhost',
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      ...(protocols ? [`Sec-WebSocket-Protocol: ${protocols}`] : []),
      '',
      '',
    ].join('\r\n'),
  );
  let buf = Buffer.alloc(0);
  let response = '';
  const frames: ServerFrame[] = [];
  const waiters: Array<(f: ServerFrame) => void> = [];
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  let headerDone: () => void = () => undefined;
  const gotHeader = new Promise<void>((r) => {
    headerDone = r;
  });
  socket.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    if (!response) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      response = buf.subarray(0, end).toString();
      buf = buf.subarray(end + 4);
      headerDone();
    }
    for (;;) {
      if (buf.length < 2) break;
      let len = buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) break;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) break;
        len = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      if (buf.length < off + len) break;
      const f = {
        fin: (buf[0]! & 0x80) !== 0,
        opcode: buf[0]! & 0x0f,
        payload: buf.subarray(off, off + len),
      };
      buf = buf.subarray(off + len);
      const w = waiters.shift();
      if (w) w(f);
      else frames.push(f);
    }
  });
  await Promise.race([gotHeader, ended]);
  return {
    socket,
    response,
    ended,
    next: () => {
      const f = frames.shift();
      if (f) return Promise.resolve(f);
      return new Promise((r) => waiters.push(r));
    },
  };
}

const closeCodeOf = (f: ServerFrame) => (f.payload.length >= 2 ? f.payload.readUInt16BE(0) : undefined);

describe('acceptWebSocket', () => {
  it('completes the handshake with the accept key and the chosen subprotocol, for a real client', async () => {
    const { port } = await serve(
      (ws) => {
        ws.on('message', (data, isBinary) =>
          ws.send(Buffer.concat([Buffer.from(`${ws.protocol}:`), data]), isBinary),
        );
      },
      { protocols: ['v5.channel.k8s.io', 'v4.channel.k8s.io'] },
    );
    const client = new WebSocket(`ws://127.0.0.1:${port}/`, ['v4.channel.k8s.io', 'v5.channel.k8s.io']);
    await once(client, 'open');
    expect(client.protocol).toBe('v4.channel.k8s.io');
    client.send(Buffer.from([1, 2, 3]));
    const [data, isBinary] = (await once(client, 'message')) as [Buffer, boolean];
    expect(isBinary).toBe(true);
    expect(data.toString('latin1')).toBe('v4.channel.k8s.io:\x01\x02\x03');
    client.send('héllo');
    const [text, binary2] = (await once(client, 'message')) as [Buffer, boolean];
    expect(binary2).toBe(false);
    expect(text.toString()).toBe('v4.channel.k8s.io:héllo');
    client.close(1000, 'bye');
    const [code] = (await once(client, 'close')) as [number];
    expect(code).toBe(1000);
  });

  it('refuses a protocol it does not speak with 400, and a wrong version with 426', async () => {
    const { port } = await serve(() => undefined, { protocols: ['v5.channel.k8s.io'] });
    const c = await rawClient(port, 'foo');
    expect(c.response).toMatch(/^HTTP\/1.1 400 /);
    const client = new WebSocket(`ws://127.0.0.1:${port}/`, { protocolVersion: 8 });
    const [, res] = (await once(client, 'unexpected-response')) as [
      unknown,
      { statusCode: number; headers: Record<string, string> },
    ];
    expect(res.statusCode).toBe(426);
    expect(res.headers['sec-websocket-version']).toBe('13');
  });

  it("accepts a client that offers no protocol only when '' is supported", async () => {
    const { port } = await serve((ws) => ws.send(`[${ws.protocol}]`), { protocols: ['', 'x'] });
    const c = await rawClient(port);
    expect(c.response).toMatch(/^HTTP\/1.1 101 /);
    expect(c.response).not.toMatch(/Sec-WebSocket-Protocol/i);
    expect((await c.next()).payload.toString()).toBe('[]');
  });

  it('unmasks frames, reassembles fragments with interleaved pings, and answers pings with pongs', async () => {
    const got: Array<[string, boolean]> = [];
    const { port } = await serve((ws) => ws.on('message', (d, b) => got.push([d.toString(), b])));
    const c = await rawClient(port);
    c.socket.write(frame(0x1, Buffer.from('hel'), { fin: false }));
    c.socket.write(frame(0x9, Buffer.from('p1')));
    c.socket.write(frame(0x0, Buffer.from('lo '), { fin: false }));
    // A frame split across writes is still parsed.
    const last = frame(0x0, Buffer.from('world'));
    c.socket.write(last.subarray(0, 3));
    const pong = await c.next();
    expect(pong.opcode).toBe(0xa);
    expect(pong.payload.toString()).toBe('p1');
    c.socket.write(last.subarray(3));
    c.socket.write(frame(0x2, Buffer.from([0xff, 0x00])));
    c.socket.write(frame(0x8, Buffer.from([0x03, 0xe8])));
    const close = await c.next();
    expect(close.opcode).toBe(0x8);
    expect(closeCodeOf(close)).toBe(1000);
    await c.ended;
    expect(got).toEqual([
      ['hello world', false],
      ['\ufffd\u0000', true],
    ]);
  });

  it('sends and receives large messages (16-bit and 64-bit lengths)', async () => {
    const { port } = await serve((ws) => ws.on('message', (d) => ws.send(d)));
    const client = new WebSocket(`ws://127.0.0.1:${port}/`);
    await once(client, 'open');
    for (const size of [125, 126, 65535, 65536, 3 * 1024 * 1024 + 7]) {
      const data = randomBytes(size);
      client.send(data);
      const [echo] = (await once(client, 'message')) as [Buffer];
      expect(echo.length).toBe(size);
      expect(echo.equals(data)).toBe(true);
    }
    client.close();
    await once(client, 'close');
  });

  it('reports the peer close code and reason once, and echoes the code', async () => {
    const closes: Array<[number, string]> = [];
    const { port } = await serve((ws) => ws.on('close', (code, reason) => closes.push([code, reason])));
    const c = await rawClient(port);
    const payload = Buffer.concat([Buffer.from([0x0f, 0xa0]), Buffer.from('done')]); // 4000
    c.socket.write(frame(0x8, payload));
    const echo = await c.next();
    expect(closeCodeOf(echo)).toBe(4000);
    await c.ended;
    expect(closes).toEqual([[4000, 'done']]);

    const c2 = await rawClient(port);
    c2.socket.write(frame(0x8, Buffer.alloc(0)));
    expect(closeCodeOf(await c2.next())).toBe(1000);
    await c2.ended;
    c2.socket.destroy();
    expect(closes[1]).toEqual([1005, '']);

    const c3 = await rawClient(port);
    c3.socket.destroy();
    await new Promise<void>((resolve) => {
      const check = () => (closes.length === 3 ? resolve() : setImmediate(check));
      check();
    });
    expect(closes[2]).toEqual([1006, '']);
  });

  it('closes with the code of its own close(), and the client sees it', async () => {
    const { port } = await serve((ws) => {
      ws.send('last words');
      ws.close(4001, 'policy');
      // Nothing goes out after the close frame.
      expect(ws.send('ignored')).toBe(false);
    });
    const client = new WebSocket(`ws://127.0.0.1:${port}/`);
    const messages: string[] = [];
    client.on('message', (d: Buffer) => messages.push(d.toString()));
    const [code, reason] = (await once(client, 'close')) as [number, Buffer];
    expect([code, reason.toString()]).toEqual([4001, 'policy']);
    expect(messages).toEqual(['last words']);
  });

  const malformed: Array<[string, () => Buffer, number]> = [
    ['an unmasked frame', () => frame(0x2, Buffer.from('x'), { mask: false }), 1002],
    ['reserved bits', () => frame(0x2, Buffer.from('x'), { rsv: 4 }), 1002],
    ['a reserved opcode', () => frame(0x3, Buffer.from('x')), 1002],
    ['a reserved control opcode', () => frame(0xb, Buffer.alloc(0)), 1002],
    ['a fragmented ping', () => frame(0x9, Buffer.from('x'), { fin: false }), 1002],
    ['a ping over 125 bytes', () => frame(0x9, Buffer.alloc(126)), 1002],
    ['a continuation without a message', () => frame(0x0, Buffer.from('x')), 1002],
    [
      'a new message inside a fragmented one',
      () => Buffer.concat([frame(0x1, Buffer.from('a'), { fin: false }), frame(0x1, Buffer.from('b'))]),
      1002,
    ],
    ['invalid UTF-8 text', () => frame(0x1, Buffer.from([0xc3, 0x28])), 1007],
    ['a 1-byte close payload', () => frame(0x8, Buffer.from([3])), 1002],
    ['an invalid close code', () => frame(0x8, Buffer.from([0x03, 0xed])), 1002], // 1005
    ['a close code below 1000', () => frame(0x8, Buffer.from([0x00, 0x10])), 1002],
    ['a close reason in invalid UTF-8', () => frame(0x8, Buffer.from([0x03, 0xe8, 0xff])), 1007],
    ['a message over maxPayload', () => frame(0x2, Buffer.alloc(2000)), 1009],
    [
      'fragments adding up over maxPayload',
      () => Buffer.concat([frame(0x2, Buffer.alloc(800), { fin: false }), frame(0x0, Buffer.alloc(800))]),
      1009,
    ],
  ];
  it.each(malformed)('closes on %s with %i', async (_what, bytes, code) => {
    const reported: number[] = [];
    const messages: Buffer[] = [];
    const { port } = await serve(
      (ws) => {
        ws.on('close', (c) => reported.push(c));
        ws.on('message', (d) => messages.push(d));
      },
      { maxPayload: 1024 },
    );
    const c = await rawClient(port);
    c.socket.write(bytes());
    const f = await c.next();
    expect(f.opcode).toBe(0x8);
    expect(closeCodeOf(f)).toBe(code);
    await c.ended;
    expect(reported).toEqual([code]);
    expect(messages).toEqual([]);
  });

  it('rejects a 64-bit length with the high bit set', async () => {
    const { port } = await serve(() => undefined);
    const c = await rawClient(port);
    const header = Buffer.alloc(14);
    header[0] = 0x82;
    header[1] = 0xff;
    header.writeBigUInt64BE(1n << 63n, 2);
    c.socket.write(header);
    expect(closeCodeOf(await c.next())).toBe(1002);
  });
});
