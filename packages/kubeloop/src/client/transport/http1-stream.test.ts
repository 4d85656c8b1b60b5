import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ByteQueue, isByteSource, MAX_QUEUED_BYTES } from './byte-queue.js';
import { readText } from './connector.js';
import { openStream, ResponseReader } from './http1-stream.js';

/** Feeds `text` to a reader in pieces of `size` bytes; returns what the reader found. */
function read(text: string | Buffer, size: number) {
  const got = { status: 0, headers: {} as Record<string, unknown>, body: '', ended: false };
  const reader = new ResponseReader({
    head: (status, headers) => {
      got.status = status;
      got.headers = headers;
    },
    body: (buf, from, to) => {
      got.body += buf.toString('latin1', from, to);
    },
    end: () => {
      got.ended = true;
    },
  });
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1');
  // A reused read buffer, as the socket's: bytes of one feed are gone at the next.
  const buf = Buffer.alloc(size);
  for (let at = 0; at < bytes.length; at += size) {
    const n = bytes.copy(buf, 0, at, Math.min(at + size, bytes.length));
    reader.feed(buf, n);
    buf.fill(0x7e);
  }
  return { ...got, reader };
}

const CHUNKED =
  'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n' +
  'Warning: 299 - "a"\r\nWarning: 299 - "b"\r\nSet-Cookie: x=1\r\nSet-Cookie: y=2\r\n' +
  'Content-Type: text/plain\r\n\r\n' +
  '7\r\n{"a":1}\r\n' +
  '1A;name=value\r\n' +
  `${'b'.repeat(26)}\r\n` +
  '3\r\n\n\r\n\r\n' +
  '0\r\nX-Trailer: t\r\n\r\n';

describe('ResponseReader', () => {
  it('reads a chunked answer whatever the pieces it arrives in', () => {
    for (const size of [1, 2, 3, 5, 7, 16, 64, 4096]) {
      const got = read(CHUNKED, size);
      expect(got.status, `pieces of ${size}`).toBe(200);
      expect(got.body, `pieces of ${size}`).toBe(`{"a":1}${'b'.repeat(26)}\n\r\n`);
      expect(got.ended, `pieces of ${size}`).toBe(true);
      // Node's rules: set-cookie a list, the first of single-valued headers, others joined.
      expect(got.headers).toEqual({
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
        warning: '299 - "a", 299 - "b"',
        'set-cookie': ['x=1', 'y=2'],
      });
    }
  });

  it('reads a Content-Length body, skips interim answers, and ends a close-delimited body at EOF', () => {
    const sized = read(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nhello',
      3,
    );
    expect([sized.status, sized.body, sized.ended]).toEqual([404, 'hello', true]);
    const empty = read('HTTP/1.1 204 No Content\r\n\r\n', 4);
    expect([empty.status, empty.body, empty.ended]).toEqual([204, '', true]);
    const open = read('HTTP/1.0 200 OK\r\n\r\nuntil the end', 4);
    expect([open.body, open.ended]).toEqual(['until the end', false]);
    expect(open.reader.eof()).toBe(true);
    // A chunked body cut short is not complete.
    const cut = read(CHUNKED.slice(0, -10), 64);
    expect([cut.ended, cut.reader.eof()]).toEqual([false, false]);
  });

  it('trims header values as String#trim does, whatever the whitespace around them', () => {
    const values = ['v', ' v', '  v', '\tv', 'v ', ' v\t', ' v\xa0', ' \xa0v', ' a b ', ' ', '', ' x'];
    const head = values.map((v, i) => `X-H${i}:${v}\r\n`).join('');
    // Read twice: the second answer finds the names already known.
    for (const pass of [1, 2]) {
      const got = read(`HTTP/1.1 200 OK\r\n${head}Content-Length: 0\r\n\r\n`, 4096);
      values.forEach((v, i) => {
        expect(got.headers[`x-h${i}`], `pass ${pass}, ${JSON.stringify(v)}`).toBe(v.trim());
      });
    }
  });

  it('rejects what HTTP/1.1 forbids, with the codes of Node’s parser', () => {
    const code = (text: string) => {
      try {
        read(text, 8);
        return 'accepted';
      } catch (err) {
        return (err as { code?: string }).code;
      }
    };
    expect(code('HTTP/2 200 OK\r\n\r\n')).toBe('HPE_INVALID_CONSTANT');
    expect(code('HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n')).toBe('HPE_INVALID_HEADER_TOKEN');
    // Checked every time, not only the first time a name is seen.
    expect(code('HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n')).toBe('HPE_INVALID_HEADER_TOKEN');
    expect(code('HTTP/1.1 200 OK\r\n: x\r\n\r\n')).toBe('HPE_INVALID_HEADER_TOKEN');
    expect(code('HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n')).toBe('HPE_INVALID_CONTENT_LENGTH');
    const chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
    expect(code(`${chunked}z\r\n`)).toBe('HPE_INVALID_CHUNK_SIZE');
    expect(code(`${chunked}\r\n`)).toBe('HPE_INVALID_CHUNK_SIZE');
    expect(code(`${chunked}1234567890abc\r\n`)).toBe('HPE_INVALID_CHUNK_SIZE');
    expect(code(`${chunked}2\r\nabX\n`)).toBe('HPE_STRICT');
    expect(code(`HTTP/1.1 200 OK\r\nX: ${'y'.repeat(20_000)}\r\n\r\n`)).toBe('HPE_HEADER_OVERFLOW');
  });
});

describe('ByteQueue', () => {
  const flow = () => {
    const calls: string[] = [];
    return {
      calls,
      flow: {
        pause: () => calls.push('pause'),
        resume: () => calls.push('resume'),
        destroy: () => calls.push('destroy'),
      },
    };
  };

  it('keeps bytes contiguous across pushes, grows for a burst and shrinks back once consumed', async () => {
    const { flow: f } = flow();
    const q = new ByteQueue(f);
    const big = Buffer.alloc(200_000, 0x61);
    q.push(Buffer.from('xyz'), 1, 3);
    q.push(big);
    expect(await q.next()).toBe(true);
    expect(q.bytes().length).toBe(200_002);
    expect(q.bytes().subarray(0, 3).toString()).toBe('yza');
    q.consume(2);
    q.push(Buffer.from('end'));
    expect(q.bytes().toString('latin1', 199_997)).toBe('aaaend');
    expect(await q.next()).toBe(true); // the bytes pushed since the last look
    q.consume(q.bytes().length);
    expect(q.bytes().length).toBe(0);
    const size = () => (q as unknown as { buf: Buffer }).buf.length;
    // Kept while more comes at once (a burst)…
    expect(size()).toBeGreaterThan(200_000);
    // …and let go when the consumer waits on an empty queue.
    const waiting = q.next();
    await new Promise((r) => setImmediate(r));
    expect(size()).toBe(64 * 1024);
    q.finish();
    expect(await waiting).toBe(false);
  });

  it('pauses its sender above MAX_QUEUED_BYTES, resumes it when consumed, or when the consumer waits', async () => {
    const { calls, flow: f } = flow();
    const q = new ByteQueue(f);
    q.push(Buffer.alloc(MAX_QUEUED_BYTES + 1, 0x61));
    expect(calls).toEqual(['pause']);
    await q.next();
    q.consume(MAX_QUEUED_BYTES / 2 + 2);
    expect(calls).toEqual(['pause', 'resume']);
    // A line longer than the limit: the consumer cannot take part of it, and waits for more.
    q.push(Buffer.alloc(MAX_QUEUED_BYTES, 0x62));
    expect(calls).toEqual(['pause', 'resume', 'pause']);
    await q.next();
    const waiting = q.next();
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['pause', 'resume', 'pause', 'resume']);
    q.finish();
    expect(await waiting).toBe(false);
  });

  it('hands over what arrived before a failure, then the failure', async () => {
    const { flow: f } = flow();
    const q = new ByteQueue(f);
    q.push(Buffer.from('before'));
    q.finish(new Error('broken'));
    expect(await q.next()).toBe(true);
    expect(q.bytes().toString()).toBe('before');
    await expect(q.next()).rejects.toThrow('broken');
  });
});

describe('openStream', () => {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  afterEach(async () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** A TCP server that answers every request with `answer` (written in `pieces`). */
  async function serve(answer: (socket: Socket, request: string) => void): Promise<number> {
    server = createServer((socket) => {
      sockets.add(socket);
      let request = '';
      socket.on('data', (d) => {
        request += d.toString('latin1');
        if (request.includes('\r\n\r\n')) answer(socket, request);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  }

  const target = (port: number) => ({ hostname: '127.0.0.1', port });
  const request = (extra: Partial<Parameters<typeof openStream>[1]> = {}) => ({
    method: 'GET',
    path: '/apis/x/v1/things?watch=true',
    headers: { authorization: 'Bearer t', accept: 'application/json' },
    headersTimeoutMs: 0,
    ...extra,
  });

  it('writes the request, streams the body as a ByteSource, and asks for the connection to close', async () => {
    let seen = '';
    const port = await serve((socket, req) => {
      seen = req;
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab\nc\r\n');
      setTimeout(() => socket.end('2\r\nd\n\r\n0\r\n\r\n'), 20);
    });
    const res = await openStream(target(port), request(), () => undefined);
    expect(seen).toBe(
      'GET /apis/x/v1/things?watch=true HTTP/1.1\r\nauthorization: Bearer t\r\naccept: application/json\r\n' +
        `Host: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
    );
    expect(res.statusCode).toBe(200);
    expect(isByteSource(res.body)).toBe(true);
    expect(await readText(res.body)).toBe('ab\ncd\n');
  });

  it('keeps each stream’s bytes its own when streams read in turns (they share one read buffer)', async () => {
    const answers: Socket[] = [];
    const port = await serve((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      answers.push(socket);
    });
    const streams = await Promise.all(
      ['a', 'b', 'c'].map(() => openStream(target(port), request(), () => undefined)),
    );
    const texts = streams.map((s) => readText(s.body));
    // Pieces of different lengths, written in turns, so that every read lands where another
    // stream's read was before it.
    for (let round = 0; round < 20; round++) {
      for (const [i, socket] of answers.entries()) {
        const piece = `${String.fromCharCode(97 + i).repeat(1 + ((round * 7 + i * 13) % 5_000))}\n`;
        socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
        await new Promise((r) => setImmediate(r));
      }
    }
    for (const socket of answers) socket.end('0\r\n\r\n');
    for (const [i, text] of (await Promise.all(texts)).entries()) {
      const letter = String.fromCharCode(97 + i);
      expect(text.replaceAll('\n', '')).toBe(letter.repeat(text.length - 20));
      expect(text.split('\n')).toHaveLength(21);
    }
  });

  it('fails the body when the connection breaks in the middle of the answer', async () => {
    const port = await serve((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab\nc');
      setTimeout(() => socket.destroy(), 20);
    });
    const res = await openStream(target(port), request(), () => undefined);
    await expect(readText(res.body)).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('is cut by its signal after the headers as before them, and bounds the wait for headers', async () => {
    const port = await serve((socket, req) => {
      if (req.includes('silent')) return;
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
    });
    const ac = new AbortController();
    const res = await openStream(target(port), request({ signal: ac.signal }), () => undefined);
    const body = readText(res.body);
    ac.abort(new Error('stop'));
    await expect(body).rejects.toMatchObject({ name: 'AbortError' });

    const early = new AbortController();
    const pending = openStream(
      target(port),
      request({ path: '/silent', signal: early.signal }),
      () => undefined,
    );
    early.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });

    await expect(
      openStream(target(port), request({ path: '/silent', headersTimeoutMs: 50 }), () => undefined),
    ).rejects.toMatchObject({ code: 'ETIMEDOUT' });
  });

  it('reports a connection closed before any answer, and refuses headers that would smuggle a line', async () => {
    const port = await serve((socket) => socket.destroy());
    await expect(openStream(target(port), request(), () => undefined)).rejects.toMatchObject({
      code: 'ECONNRESET',
      message: 'socket hang up',
    });
    await expect(
      openStream(
        target(port),
        request({ headers: { authorization: 'Bearer t\r\nX-Evil: 1' } }),
        () => undefined,
      ),
    ).rejects.toThrow(TypeError);
  });
});
