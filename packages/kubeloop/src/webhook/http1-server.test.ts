import { type ConnectionOptions, connect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueServingCertificate } from '../pki/index.js';
import { type Http1Handler, type Http1Limits, Http1Server } from './http1-server.js';

const ca = createCertificateAuthority('http1-test-ca');
const serving = issueServingCertificate(ca, ['127.0.0.1']);

/** Echoes what it parsed: method, target, content type and body. */
const echo: Http1Handler = (req, respond) =>
  respond({
    status: 200,
    contentType: 'text/plain',
    body: `${req.method} ${req.target} ${req.contentType ?? '-'} [${req.body.toString('utf8')}]`,
  });

let server: Http1Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (!s) return;
  const closed = new Promise<void>((resolve) => s.close(resolve));
  s.closeAll();
  await closed;
});

async function start(handler: Http1Handler = echo, limits: Http1Limits = {}): Promise<number> {
  server = new Http1Server({ cert: serving.cert, key: serving.key }, handler, limits);
  await server.listen(0, '127.0.0.1');
  return (server.tls.address() as { port: number }).port;
}

/**
 * Sends `pieces` on one TLS connection, one write each (a setImmediate apart), and returns all
 * the server wrote until it closed the connection.
 */
function exchange(port: number, pieces: readonly (string | Buffer)[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port, ca: ca.cert, ALPNProtocols: ['http/1.1'] },
      async () => {
        for (const p of pieces) {
          if (socket.destroyed) break;
          socket.write(p);
          await new Promise((r) => setImmediate(r));
        }
      },
    );
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const post = (body: string, extra = '') =>
  `POST /mutate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

describe('Http1Server', () => {
  it('answers requests on a kept-alive connection in turn, with their lengths, and closes on Connection: close', async () => {
    const port = await start();
    const out = await exchange(port, [post('{"a":1}'), post('{"b":2}', 'Connection: close\r\n')]);
    expect(out).toBe(
      'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 51\r\n\r\n' +
        'POST /mutate?timeout=10s application/json [{"a":1}]' +
        'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 51\r\nConnection: close\r\n\r\n' +
        'POST /mutate?timeout=10s application/json [{"b":2}]',
    );
  });

  it('answers pipelined requests in order, even when a later one is quicker', async () => {
    const delays = [30, 0, 10];
    let n = 0;
    const port = await start((req, respond) => {
      const body = req.body.toString();
      setTimeout(() => respond({ status: 200, contentType: 'text/plain', body }), delays[n++]);
    });
    const out = await exchange(port, [post('one') + post('two') + post('three', 'Connection: close\r\n')]);
    expect([...out.matchAll(/\r\n\r\n(one|two|three)/g)].map((m) => m[1])).toEqual(['one', 'two', 'three']);
  });

  it('reads chunked bodies (chunk extensions and trailers included) and bodies split across writes', async () => {
    const port = await start();
    const head = 'POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n';
    const out = await exchange(port, [
      head,
      '3;ext=1\r\nabc\r',
      '\n4\r\nde',
      'fg\r\n0\r\nX-Trailer: t\r\n\r\n',
    ]);
    expect(out).toContain('POST /c - [abcdefg]');
    const split = await exchange(port, [post('0123456789', 'Connection: close\r\n').slice(0, -6), '456789']);
    expect(split).toContain('[0123456789]');
  });

  it('passes non-ASCII bodies as their bytes and allows obs-text in header values', async () => {
    const port = await start();
    const body = '{"name":"ĉu ŝi?"}';
    const out = await exchange(port, [post(body, 'X-Note: caf\xe9\r\nConnection: close\r\n')]);
    expect(out).toContain(`[${body}]`);
  });

  it.each([
    ['a request line with two spaces', 'GET  / HTTP/1.1\r\n\r\n', 400],
    ['an unknown version', 'GET / HTTP/2.0\r\n\r\n', 400],
    ['an absolute-form target', 'GET http://x/ HTTP/1.1\r\n\r\n', 400],
    ['a non-ASCII target', 'GET /caf\u00e9 HTTP/1.1\r\n\r\n', 400],
    ['binary garbage', '\x16\x03\x01\x00\xff\r\n\r\n', 400],
    ['a header without a colon', 'GET / HTTP/1.1\r\nHost x\r\n\r\n', 400],
    ['an obs-folded header', 'GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n', 400],
    ['a bare LF in a header', 'GET / HTTP/1.1\r\nX-A: a\nX-B: b\r\n\r\n', 400],
    ['a control character in a value', 'GET / HTTP/1.1\r\nX-A: a\x01b\r\n\r\n', 400],
    [
      'Content-Length and Transfer-Encoding',
      'POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n',
      400,
    ],
    [
      'two different Content-Lengths',
      'POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
      400,
    ],
    ['a signed Content-Length', 'POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc', 400],
    ['an unknown transfer coding', 'POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', 501],
    ['a bad chunk size', 'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n', 400],
    [
      'a chunk without its CRLF',
      'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n',
      400,
    ],
    ['an unknown expectation', 'POST / HTTP/1.1\r\nExpect: magic\r\nContent-Length: 1\r\n\r\na', 417],
  ])('refuses %s with its status and closes the connection', async (_name, request, status) => {
    const port = await start();
    // A valid request after the bad one is never answered: the connection closed.
    const out = await exchange(port, [Buffer.from(request, 'latin1'), post('{}')]);
    expect(statuses(out)).toEqual([status]);
    expect(out).toContain('Connection: close\r\n');
  });

  it('refuses headers over the limit with 431, whole or still arriving', async () => {
    const port = await start(echo, { maxHeaderBytes: 1024 });
    const big = `GET / HTTP/1.1\r\nX-Big: ${'a'.repeat(2000)}\r\n\r\n`;
    expect(statuses(await exchange(port, [big]))).toEqual([431]);
    // No end of headers yet: refused as soon as the limit is passed, without waiting for the rest.
    expect(statuses(await exchange(port, [`GET / HTTP/1.1\r\nX-Big: ${'a'.repeat(2000)}`]))).toEqual([431]);
  });

  it('refuses bodies over the limit with 413, by Content-Length before reading it, or as chunks arrive', async () => {
    let called = 0;
    const port = await start(
      (req, respond) => {
        called++;
        echo(req, respond);
      },
      { maxBodyBytes: 100 },
    );
    const declared = await exchange(port, ['POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n']);
    expect(statuses(declared)).toEqual([413]);
    const chunked = 'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n';
    const out = await exchange(port, [
      chunked,
      '40\r\n',
      `${'a'.repeat(64)}\r\n`,
      '40\r\n',
      `${'b'.repeat(64)}\r\n0\r\n\r\n`,
    ]);
    expect(statuses(out)).toEqual([413]);
    expect(called).toBe(0);
    // At the limit exactly: answered.
    expect(statuses(await exchange(port, [post('x'.repeat(100), 'Connection: close\r\n')]))).toEqual([200]);
  });

  it('answers a client that closed its sending side after the request, then closes', async () => {
    let respondLater!: () => void;
    const port = await start((req, respond) => {
      respondLater = () => echo(req, respond);
    });
    // Answered only once the server has seen the end of the client's side (this listener runs
    // after the server's own).
    server?.tls.on('secureConnection', (s) => s.on('end', () => respondLater()));
    const out = await new Promise<string>((resolve, reject) => {
      // `allowHalfOpen` reaches the socket (net's option), though tls' types leave it out.
      const options: ConnectionOptions & { allowHalfOpen: boolean } = {
        host: '127.0.0.1',
        port,
        ca: ca.cert,
        allowHalfOpen: true,
      };
      const socket = connect(options, () => {
        socket.end(post('{}'));
      });
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
      socket.on('error', reject);
    });
    expect(statuses(out)).toEqual([200]);
    expect(out).toContain('Connection: close\r\n');
  });

  it('answers 500 and closes when the handler throws, and goes on serving', async () => {
    const port = await start((req, respond) => {
      if (req.target === '/throw') throw new Error('boom');
      echo(req, respond);
    });
    const out = await exchange(port, ['GET /throw HTTP/1.1\r\n\r\n', 'GET /after HTTP/1.1\r\n\r\n']);
    expect(statuses(out)).toEqual([500]);
    expect(await exchange(port, ['GET /after HTTP/1.1\r\nConnection: close\r\n\r\n'])).toContain(
      'GET /after',
    );
  });

  it('answers Expect: 100-continue before the body is sent', async () => {
    const port = await start();
    const out = await exchange(port, [
      'POST /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n',
      'hi',
    ]);
    expect(out.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n')).toBe(true);
    expect(out).toContain('[hi]');
  });

  it('closes HTTP/1.0 connections after the answer unless asked to keep them', async () => {
    const port = await start();
    const out = await exchange(port, ['GET /a HTTP/1.0\r\n\r\n', 'GET /b HTTP/1.0\r\n\r\n']);
    expect(statuses(out)).toEqual([200]);
    expect(out).toContain('Connection: close\r\n');
  });

  it('answers 408 to a client too slow with its headers, and closes idle connections', async () => {
    const port = await start(echo, { headersTimeoutMs: 40, idleTimeoutMs: 40 });
    // The head never ends: the sweep answers 408 and closes.
    expect(statuses(await exchange(port, ['GET / HTTP/1.1\r\nX-Slow: 1\r\n']))).toEqual([408]);
    // One request answered, then nothing: the idle connection is closed without a word.
    const out = await exchange(port, ['GET / HTTP/1.1\r\n\r\n']);
    expect(statuses(out)).toEqual([200]);
    expect(out).not.toContain('Connection: close');
  });

  it('on close, ends idle connections at once and in-flight ones after their answer', async () => {
    let respondLater!: () => void;
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => {
      entered = r;
    });
    const port = await start((req, respond) => {
      respondLater = () => echo(req, respond);
      entered();
    });
    const answer = exchange(port, [post('{}')]);
    await inHandler;
    const closed = new Promise<void>((resolve) => server?.close(resolve));
    respondLater();
    const out = await answer;
    expect(statuses(out)).toEqual([200]);
    expect(out).toContain('Connection: close\r\n');
    await closed;
  });
});
