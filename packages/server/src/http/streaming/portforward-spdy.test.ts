import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Duplex, PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { serveSpdyPortForward } from './portforward-spdy.js';
import { forwardErrorMessage, type PortForwardTarget } from './portforward-target.js';
import { FLAG_FIN, RstStatus, SpdyDecoder, SpdyEncoder, type SpdyFrame, SpdySession } from './spdy.js';

const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u-1' }, spec: { nodeName: 'n' } };

/** An in-memory echo "process": what is written comes back; ending input ends output. */
const echoTarget: PortForwardTarget = async () => {
  const through = new PassThrough();
  return Duplex.from({ readable: through, writable: through });
};

const refusingTarget: PortForwardTarget = async ({ port }) => {
  throw new Error(`nothing listens on ${port}`);
};

type Data = Extract<SpdyFrame, { type: 'data' }>;

describe('port-forward over SPDY (the kubelet side)', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  /** A raw SPDY client against serveSpdyPortForward on a real socket. */
  async function client(target: PortForwardTarget, streamCreationTimeoutMs?: number) {
    const server: Server = createServer((sock) =>
      serveSpdyPortForward(new SpdySession(sock), pod, target, {
        ...(streamCreationTimeoutMs !== undefined && { streamCreationTimeoutMs }),
      }),
    );
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
    let wake: (() => void)[] = [];
    let chain = Promise.resolve();
    sock.on('data', (c: Buffer) => {
      chain = chain.then(async () => {
        frames.push(...(await dec.push(c)));
        for (const w of wake.splice(0)) w();
      });
    });
    return {
      frames,
      send: (f: SpdyFrame) => sock.write(enc.encode(f)),
      open: (id: number, headers: Record<string, string>) =>
        sock.write(
          enc.encode({
            type: 'syn_stream',
            streamId: id,
            associatedToStreamId: 0,
            priority: 0,
            slot: 0,
            flags: 0,
            headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
          }),
        ),
      async until(pred: () => boolean): Promise<void> {
        while (!pred()) await new Promise<void>((r) => wake.push(r));
        wake = [];
      },
    };
  }

  const dataOf = (frames: SpdyFrame[], id: number) =>
    Buffer.concat(
      frames.filter((f): f is Data => f.type === 'data' && f.streamId === id).map((f) => f.data),
    ).toString();
  const finOf = (frames: SpdyFrame[], id: number) =>
    frames.findIndex((f) => f.type === 'data' && f.streamId === id && (f.flags & FLAG_FIN) !== 0);

  it('forwards a pair both ways, then closes the data stream and the error stream', async () => {
    const c = await client(echoTarget);
    c.open(1, { streamtype: 'error', port: '80', requestid: '0' });
    c.send({ type: 'data', streamId: 1, flags: FLAG_FIN, data: Buffer.alloc(0) });
    c.open(3, { streamtype: 'data', port: '80', requestid: '0' });
    c.send({ type: 'data', streamId: 3, flags: 0, data: Buffer.from('hello') });
    await c.until(() => dataOf(c.frames, 3) === 'hello');
    c.send({ type: 'data', streamId: 3, flags: FLAG_FIN, data: Buffer.alloc(0) });
    await c.until(() => finOf(c.frames, 1) >= 0 && finOf(c.frames, 3) >= 0);
    expect(
      c.frames.filter((f) => f.type === 'syn_reply').map((f) => f.type === 'syn_reply' && f.streamId),
    ).toEqual([1, 3]);
    expect(dataOf(c.frames, 1)).toBe('');
    // containerd closes the data stream when the copy ends; the kubelet closes the error stream after.
    expect(finOf(c.frames, 3)).toBeLessThan(finOf(c.frames, 1));
  });

  it('closes a pod side that keeps its output open after the client ended its input, as containerd does', async () => {
    let destroyed = false;
    const deaf: PortForwardTarget = async () =>
      new Duplex({
        read() {},
        write(_c, _e, cb) {
          cb();
        },
        destroy(err, cb) {
          destroyed = true;
          cb(err);
        },
      });
    const c = await client(deaf);
    c.open(1, { streamtype: 'error', port: '80', requestid: '0' });
    c.open(3, { streamtype: 'data', port: '80', requestid: '0' });
    c.send({ type: 'data', streamId: 3, flags: FLAG_FIN, data: Buffer.from('bye') });
    await c.until(() => finOf(c.frames, 3) >= 0 && finOf(c.frames, 1) >= 0);
    expect(destroyed).toBe(true);
  });

  it('writes a refused connection on the error stream, then FIN on it and on the data stream', async () => {
    const c = await client(refusingTarget);
    c.open(1, { streamtype: 'error', port: '8080', requestid: '7' });
    c.open(3, { streamtype: 'data', port: '8080', requestid: '7' });
    await c.until(() => finOf(c.frames, 3) >= 0);
    expect(dataOf(c.frames, 1)).toBe(forwardErrorMessage(pod, 8080, new Error('nothing listens on 8080')));
    expect(finOf(c.frames, 1)).toBeLessThan(finOf(c.frames, 3));
  });

  it('pairs the streams of a client without request ids by their stream ids', async () => {
    const c = await client(refusingTarget);
    c.open(5, { streamtype: 'error', port: '81' });
    c.open(7, { streamtype: 'data', port: '81' });
    await c.until(() => finOf(c.frames, 7) >= 0);
    expect(dataOf(c.frames, 5)).toContain('nothing listens on 81');
  });

  it('resets streams whose headers the kubelet rejects', async () => {
    const c = await client(echoTarget);
    c.open(1, { streamtype: 'error', requestid: '0' });
    c.open(3, { streamtype: 'data', port: '0', requestid: '0' });
    c.open(5, { streamtype: 'data', port: 'http', requestid: '0' });
    c.open(7, { streamtype: 'bogus', port: '80', requestid: '0' });
    c.open(9, { port: '80', requestid: '0' });
    await c.until(() => c.frames.length === 5);
    expect(c.frames).toEqual(
      [1, 3, 5, 7, 9].map((streamId) => ({ type: 'rst_stream', streamId, status: RstStatus.CANCEL })),
    );
  });

  it('reports a second stream of the same type, and a pair left incomplete', async () => {
    const c = await client(echoTarget, 50);
    c.open(1, { streamtype: 'error', port: '80', requestid: '3' });
    c.open(3, { streamtype: 'error', port: '80', requestid: '3' });
    await c.until(() => dataOf(c.frames, 1).includes('timed out'));
    expect(dataOf(c.frames, 1)).toBe(
      'error processing stream for request 3: error stream already assigned' +
        '(conn=spdy, request=3) timed out waiting for streams',
    );
  });
});
