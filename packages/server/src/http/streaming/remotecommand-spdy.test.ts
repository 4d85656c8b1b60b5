import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../testing/wait.js';
import type { RemoteCommandSession, StreamOptions } from './remotecommand.js';
import { acceptSpdyRemoteCommand } from './remotecommand-spdy.js';
import { FLAG_FIN, SpdyDecoder, SpdyEncoder, type SpdyFrame } from './spdy.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/**
 * A raw SPDY client against acceptSpdyRemoteCommand on a real socket: `session` settles with
 * what it resolves to.
 */
async function client(protocol: string, options: StreamOptions, timeoutMs?: number) {
  let session!: Promise<RemoteCommandSession | undefined>;
  const server: Server = createServer((sock) => {
    session = acceptSpdyRemoteCommand({ socket: sock, head: Buffer.alloc(0) }, protocol, options, timeoutMs);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const sock: Socket = connect((server.address() as { port: number }).port, '127.0.0.1');
  await once(sock, 'connect');
  cleanups.push(() => {
    sock.destroy();
    server.close();
  });
  const enc = new SpdyEncoder();
  const dec = new SpdyDecoder();
  const frames: SpdyFrame[] = [];
  let buffered = Buffer.alloc(0);
  let upgraded = false;
  let chain = Promise.resolve();
  sock.on('data', (c: Buffer) => {
    chain = chain.then(async () => {
      if (!upgraded) {
        // The 101 answer comes first; SPDY frames after its blank line.
        buffered = Buffer.concat([buffered, c]);
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        upgraded = true;
        c = buffered.subarray(end + 4);
      }
      frames.push(...(await dec.push(c)));
    });
  });
  // Closed, and every frame before the close decoded.
  const closed = once(sock, 'close').then(() => chain);
  let id = 1;
  return {
    frames,
    closed,
    get session() {
      return session;
    },
    open(type: string): number {
      const streamId = id;
      id += 2;
      sock.write(
        enc.encode({
          type: 'syn_stream',
          streamId,
          associatedToStreamId: 0,
          priority: 0,
          slot: 0,
          flags: 0,
          headers: { streamtype: [type] },
        }),
      );
      return streamId;
    },
    send(streamId: number, data: string, fin = false) {
      sock.write(enc.encode({ type: 'data', streamId, flags: fin ? FLAG_FIN : 0, data: Buffer.from(data) }));
    },
  };
}

const TTY: StreamOptions = { stdin: true, stdout: true, stderr: false, tty: true };

describe('exec and attach over SPDY (the kubelet side)', () => {
  it('gives up on a client that does not open every stream in time, and drops the connection', async () => {
    const c = await client('v4.channel.k8s.io', { stdin: false, stdout: true, stderr: true, tty: false }, 50);
    c.open('error');
    c.open('stdout');
    await c.closed;
    expect(await c.session).toBeUndefined();
    expect(c.frames.map((f) => f.type)).toEqual(['syn_reply', 'syn_reply', 'goaway']);
  });

  it('starts once every stream is there (resize for a TTY), ignoring unknown stream types', async () => {
    const c = await client('v4.channel.k8s.io', TTY);
    c.open('error');
    c.open('bogus');
    c.open('stdin');
    c.open('stdout');
    const resize = c.open('resize');
    const session = await c.session;
    expect(session?.protocol).toBe('v4.channel.k8s.io');
    // Sizes are a JSON stream: one may be split across frames, several may share one.
    c.send(resize, '{"Width":80,');
    c.send(resize, '"Height":24}{"Width":120,"Height":40}');
    await eventually(() => session?.terminalSize?.width === 120);
    expect(session?.terminalSize).toEqual({ width: 120, height: 40 });
  });

  it('hands stdin to the session until the client half-closes it', async () => {
    const c = await client('v4.channel.k8s.io', TTY);
    c.open('error');
    const stdin = c.open('stdin');
    c.open('stdout');
    c.open('resize');
    const session = await c.session;
    c.send(stdin, 'abc');
    c.send(stdin, 'def', true);
    expect((await session?.stdin.readAll())?.toString()).toBe('abcdef');
  });

  it('a v2 TTY session expects no resize stream', async () => {
    const c = await client('v2.channel.k8s.io', TTY);
    c.open('error');
    c.open('stdin');
    c.open('stdout');
    expect((await c.session)?.protocol).toBe('v2.channel.k8s.io');
  });
});
