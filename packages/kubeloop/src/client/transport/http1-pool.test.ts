import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Http1Pool, type PoolRequest } from './http1-pool.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

describe('the kept-alive connection pool', () => {
  let server: Server;
  let port: number;
  let handler: Handler;
  /** Connections the server accepted, in order. */
  let accepted: Socket[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => handler(req, body, res));
    });
    server.on('connection', (s: Socket) => accepted.push(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    for (const s of accepted) s.destroy();
    accepted = [];
  });

  /** The pool's sockets, in order. */
  let mine: Socket[] = [];
  const pool = (maxConnections?: number) => {
    mine = [];
    return new Http1Pool({ hostname: '127.0.0.1', port }, maxConnections, (s) => mine.push(s));
  };
  const get = (path: string, extra: Partial<PoolRequest> = {}): PoolRequest => ({
    method: 'GET',
    path,
    headers: { accept: 'application/json' },
    headersTimeoutMs: 0,
    deadlineMs: 5000,
    ...extra,
  });

  it('reuses one connection for request after request, reading sized and chunked answers in pieces', async () => {
    const seen: { url?: string; host?: string; connection?: string; length?: string; body: string }[] = [];
    handler = (req, body, res) => {
      seen.push({
        url: req.url,
        host: req.headers.host,
        connection: req.headers.connection,
        length: req.headers['content-length'],
        body,
      });
      if (req.url === '/sized') {
        res.setHeader('content-length', Buffer.byteLength('{"a":"ä"}'));
        res.write('{"a":');
        setImmediate(() => res.end('"ä"}'));
      } else {
        // No length: node:http sends it chunked, each write a chunk.
        res.write('{"b":');
        res.write('[1,');
        setImmediate(() => res.end('2]}'));
      }
    };
    const p = pool();
    const sized = await p.request(get('/sized'));
    expect(sized).toMatchObject({ statusCode: 200, text: '{"a":"ä"}' });
    const chunked = await p.request({ ...get('/chunked'), method: 'POST', body: '{"ü":1}' });
    expect(chunked.text).toBe('{"b":[1,2]}');
    expect(chunked.headers['transfer-encoding']).toBe('chunked');
    expect(seen).toEqual([
      { url: '/sized', host: `127.0.0.1:${port}`, connection: 'keep-alive', length: undefined, body: '' },
      {
        url: '/chunked',
        host: `127.0.0.1:${port}`,
        connection: 'keep-alive',
        length: String(Buffer.byteLength('{"ü":1}')),
        body: '{"ü":1}',
      },
    ]);
    expect(accepted).toHaveLength(1);
    p.close();
  });

  it('decodes a body read in one piece, and one whose pieces split a character, alike', async () => {
    const text = '{"note":"größer ✓ — ünter"}';
    const bytes = Buffer.from(text);
    handler = (req, _body, res) => {
      res.setHeader('content-length', bytes.length);
      if (req.url === '/whole') res.end(bytes);
      else {
        // 'ö' is two bytes: the first piece ends between them.
        const cut = bytes.indexOf(Buffer.from('ö')) + 1;
        res.write(bytes.subarray(0, cut));
        setImmediate(() => res.end(bytes.subarray(cut)));
      }
    };
    const p = pool();
    // Alternated on one connection: a body decoded from the read buffer is not spoiled by the
    // next answer read into the same buffer.
    const texts = [];
    for (const path of ['/whole', '/split', '/whole', '/split'])
      texts.push((await p.request(get(path))).text);
    expect(texts).toEqual([text, text, text, text]);
    expect(accepted).toHaveLength(1);
    p.close();
  });

  it('opens a new connection when the server closed the idle one or asked to close', async () => {
    handler = (req, _body, res) => {
      if (req.url === '/close') res.setHeader('connection', 'close');
      res.end(req.url);
    };
    const p = pool();
    expect((await p.request(get('/a'))).text).toBe('/a');
    // Once the pool has seen it close (a request sent before then fails, as with node:http).
    const gone = new Promise((resolve) => mine[0]!.once('close', resolve));
    accepted[0]!.destroy();
    await gone;
    expect((await p.request(get('/close'))).text).toBe('/close');
    expect((await p.request(get('/c'))).text).toBe('/c');
    expect(accepted).toHaveLength(3);
    p.close();
  });

  it('queues requests beyond maxConnections, and serves them on the connection freed', async () => {
    const waiting: ServerResponse[] = [];
    handler = (req, _body, res) => {
      if (req.url === '/held') waiting.push(res);
      else res.end(req.url);
    };
    const p = pool(1);
    const held = p.request(get('/held'));
    const next = [p.request(get('/x')), p.request(get('/y'))];
    await new Promise<void>((resolve) => {
      const poll = () => (waiting.length > 0 ? resolve() : setImmediate(poll));
      poll();
    });
    waiting[0]!.end('held');
    expect((await held).text).toBe('held');
    expect((await Promise.all(next)).map((r) => r.text)).toEqual(['/x', '/y']);
    expect(accepted).toHaveLength(1);
    p.close();
  });

  it('sends a body of bytes as it is, bounds the answer, and marks a failure on a reused connection', async () => {
    handler = (req, body, res) => {
      if (req.url === '/drop') return void req.socket.destroy();
      res.end(req.url === '/big' ? 'x'.repeat(100) : body);
    };
    const p = pool();
    const bytes = Buffer.from('{"é":"😀"}');
    expect((await p.request({ ...get('/echo'), method: 'POST', body: bytes })).text).toBe('{"é":"😀"}');
    await expect(p.request(get('/big', { maxBodyBytes: 99 }))).rejects.toMatchObject({
      code: 'ERR_BODY_TOO_LARGE',
    });
    expect((await p.request(get('/big', { maxBodyBytes: 100 }))).text).toHaveLength(100);
    // Dropped unanswered on the kept-alive connection: a caller may try again on a new one.
    await expect(p.request(get('/drop'))).rejects.toMatchObject({
      code: 'ECONNRESET',
      reusedConnection: true,
    });
    // On a new connection the same failure is not marked.
    const fresh = await p.request(get('/drop')).catch((err: unknown) => err);
    expect(fresh).toMatchObject({ code: 'ECONNRESET' });
    expect((fresh as { reusedConnection?: boolean }).reusedConnection).toBeUndefined();
    p.close();
  });

  it('refuses what node:http refuses, before sending anything', async () => {
    const p = pool();
    await expect(p.request(get('/a', { headers: { 'x-bad': 'a\r\nx-smuggled: 1' } }))).rejects.toMatchObject({
      code: 'ERR_INVALID_CHAR',
    });
    await expect(p.request(get('/a b'))).rejects.toMatchObject({ code: 'ERR_UNESCAPED_CHARACTERS' });
    await expect(p.request(get('/a', { method: 'G T' }))).rejects.toMatchObject({
      code: 'ERR_INVALID_HTTP_TOKEN',
    });
    expect(accepted).toHaveLength(0);
    p.close();
  });
});

describe('connections the server does not keep', () => {
  let raw: ReturnType<typeof createNetServer>;
  let port: number;
  let connections = 0;
  let answer = '';

  beforeAll(async () => {
    raw = createNetServer((s) => {
      connections++;
      s.on('data', () => {
        s.write(answer);
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    port = (raw.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => raw.close(() => resolve()));
  });

  const twice = async () => {
    connections = 0;
    const p = new Http1Pool({ hostname: '127.0.0.1', port }, undefined, (s) => s.unref());
    const req: PoolRequest = { method: 'GET', path: '/', headers: {}, headersTimeoutMs: 0, deadlineMs: 5000 };
    expect((await p.request(req)).text).toBe('ok');
    expect((await p.request(req)).text).toBe('ok');
    p.close();
    return connections;
  };

  it('are not used again: bytes after an answer, or an idle timeout of a second (as Node’s agent)', async () => {
    answer = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n';
    expect(await twice()).toBe(2);
    answer = 'HTTP/1.1 200 OK\r\nkeep-alive: timeout=1\r\ncontent-length: 2\r\n\r\nok';
    expect(await twice()).toBe(2);
    // The control: a longer idle timeout keeps it.
    answer = 'HTTP/1.1 200 OK\r\nkeep-alive: timeout=5\r\ncontent-length: 2\r\n\r\nok';
    expect(await twice()).toBe(1);
  });
});
