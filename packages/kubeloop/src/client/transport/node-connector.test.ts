import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../api/status.js';
import { ConfigMap } from '../builtin-kinds.js';
import { Client } from '../client.js';
import { readText } from './connector.js';
import { NetworkError } from './errors.js';
import { NodeConnector } from './node-connector.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

describe('a client on a Unix socket (plain HTTP, no undici)', () => {
  let dir: string;
  let socketPath: string;
  let server: Server;
  let handler: Handler;
  const sockets = new Set<Socket>();

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubeloop-sock-'));
    socketPath = join(dir, 's.sock');
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => handler(req, body, res));
    });
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  });

  afterEach(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const client = (extra: ConstructorParameters<typeof Client>[1] = {}) =>
    new Client({ server: 'https://127.0.0.1:6443', token: 'tok' }, { socketPath, retry: false, ...extra });

  it('sends credentials and bodies, and reads JSON answers', async () => {
    const seen: Array<{ method?: string; url?: string; auth?: string; length?: string; body: string }> = [];
    handler = (req, body, res) => {
      seen.push({
        method: req.method,
        url: req.url,
        auth: req.headers.authorization,
        length: req.headers['content-length'],
        body,
      });
      res.setHeader('content-type', 'application/json');
      res.end(
        req.method === 'POST'
          ? body
          : JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }),
      );
    };
    const c = client();
    const cms = c.api(ConfigMap, 'ns');
    const got = await cms.get('a');
    expect(got.metadata?.name).toBe('a');
    const made = await cms.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ü', namespace: 'ns' },
      data: { k: 'välue' },
    });
    expect(made.data).toEqual({ k: 'välue' });
    expect(seen[0]).toMatchObject({
      method: 'GET',
      url: '/api/v1/namespaces/ns/configmaps/a',
      auth: 'Bearer tok',
    });
    expect(seen[1]?.method).toBe('POST');
    expect(Number(seen[1]?.length)).toBe(Buffer.byteLength(seen[1]?.body ?? ''));
    await c.close();
  });

  it('turns error answers into ApiError', async () => {
    handler = (_req, _body, res) => {
      res.statusCode = 404;
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          code: 404,
          reason: 'NotFound',
          message: 'configmaps "x" not found',
        }),
      );
    };
    const c = client();
    const err = await c
      .api(ConfigMap, 'ns')
      .get('x')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe('configmaps "x" not found');
    await c.close();
  });

  it('streams a watch, and close() ends it', async () => {
    handler = (req, _body, res) => {
      expect(req.url).toContain('watch=true');
      res.setHeader('content-type', 'application/json');
      res.write(
        `${JSON.stringify({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '5' } } })}\n`,
      );
      // the stream stays open until the client goes away
    };
    const c = client();
    const cms = c.api(ConfigMap, 'ns');
    const events: string[] = [];
    const done = (async () => {
      try {
        for await (const ev of cms.watch()) {
          events.push(`${ev.type} ${'object' in ev ? ev.object.metadata?.name : ''}`);
          if (events.length === 1) void c.close();
        }
        return 'ended';
      } catch (err) {
        return err;
      }
    })();
    const outcome = await done;
    expect(events).toEqual(['ADDED a']);
    // Closing the client ends the watch: either quietly or with a NetworkError, never a hang.
    if (outcome !== 'ended') expect(outcome).toBeInstanceOf(NetworkError);
  });

  it('reports a missing socket as a connect error', async () => {
    const c = new Client(
      { server: 'https://127.0.0.1:6443', token: 'tok' },
      { socketPath: join(dir, 'nothing.sock'), retry: false },
    );
    const err = await c.version().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).kind).toBe('connect');
    await c.close();
  });

  it('times out an answer whose body stops coming, and cancels one mid-body with the signal reason', async () => {
    handler = (_req, _body, res) => {
      res.setHeader('content-type', 'application/json');
      // Headers and half a body, then nothing: only the whole-answer deadline can end it.
      res.write('{"apiVersion":"v1","kind":"ConfigMap",');
    };
    const slow = client({ timeoutMs: 80 });
    const err = await slow
      .api(ConfigMap, 'ns')
      .get('a')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).kind).toBe('timeout');
    expect((err as NetworkError).message).toContain('no complete answer within 80 ms');
    await slow.close();

    const c = client();
    const ac = new AbortController();
    const reason = new Error('stop now');
    handler = (_req, _body, res) => {
      res.setHeader('content-type', 'application/json');
      res.write('{"apiVersion":"v1",');
      ac.abort(reason);
    };
    const cancelled = await c
      .api(ConfigMap, 'ns')
      .get('a', { signal: ac.signal })
      .catch((e: unknown) => e);
    expect(cancelled).toBe(reason);
    await c.close();
  });

  it('ends a request waiting for a connection of a full pool at its deadline; a client of its own connections is not kept waiting', async () => {
    let held: ServerResponse | undefined;
    handler = (req, _body, res) => {
      res.setHeader('content-type', 'application/json');
      // The bulk request holds the only connection until the end of the test.
      if (req.url?.endsWith('/bulk')) held = res;
      else res.end('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"lease"}}');
    };
    const c = client({ maxConnections: 1 });
    const bulk = c
      .api(ConfigMap, 'ns')
      .get('bulk')
      .catch((e: unknown) => e);
    // Queued behind the bulk request: Node reports its destruction only once it gets a
    // connection, so the deadline must end the wait itself.
    const queued = await c
      .api(ConfigMap, 'ns')
      .get('lease', { timeoutMs: 50 })
      .catch((e: unknown) => e);
    expect(queued).toBeInstanceOf(NetworkError);
    expect((queued as NetworkError).kind).toBe('timeout');
    expect(held).toBeDefined();
    const own = c.withOwnConnections();
    expect((await own.api(ConfigMap, 'ns').get('lease')).metadata?.name).toBe('lease');
    held?.end('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bulk"}}');
    expect(((await bulk) as ConfigMap).metadata?.name).toBe('bulk');
    await own.close();
    await c.close();
  });

  it('leaves no listener on a caller signal once its answers are read', async () => {
    handler = (_req, _body, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }));
    };
    const c = client();
    const ac = new AbortController();
    let added = 0;
    let removed = 0;
    const add = ac.signal.addEventListener.bind(ac.signal);
    const remove = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.addEventListener = (...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    };
    ac.signal.removeEventListener = (...args: Parameters<typeof remove>) => {
      removed++;
      remove(...args);
    };
    for (let i = 0; i < 5; i++) {
      expect((await c.api(ConfigMap, 'ns').get('a', { signal: ac.signal })).metadata?.name).toBe('a');
    }
    expect(added).toBeGreaterThan(0);
    expect(removed).toBe(added);
    await c.close();
  });

  it('bounds the wait for a watch to answer', async () => {
    handler = () => {
      // never answers
    };
    const c = client({ timeoutMs: 50 });
    const cms = c.api(ConfigMap, 'ns');
    const err = await (async () => {
      try {
        for await (const _ of cms.watch()) {
          // no events expected
        }
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).kind).toBe('timeout');
    await c.close();
  });

  it('keeps answers in flight when the identity changes (a rotated client certificate)', async () => {
    let slow: ServerResponse | undefined;
    let started: () => void = () => undefined;
    const slowStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    handler = (req, _body, res) => {
      if (req.url === '/slow') {
        res.write('first,');
        slow = res;
        started();
        return;
      }
      res.end('ok');
    };
    const connector = new NodeConnector({
      origin: 'https://127.0.0.1:6443',
      config: { server: 'https://127.0.0.1:6443' },
      http2: false,
      socketPath,
    });
    const base = { method: 'GET', headers: {}, headersTimeoutMs: 0 };
    const inFlight = connector.request({ ...base, path: '/slow', creds: { cert: 'A' } });
    await slowStarted;
    // A request with a new certificate gets a new connection pool...
    const other = await connector.request({ ...base, path: '/other', creds: { cert: 'B' } });
    expect(await readText(other.body)).toBe('ok');
    // ...and the answer still coming on the old one goes on to its end.
    slow?.end('last');
    expect(await readText((await inFlight).body)).toBe('first,last');
    await connector.destroy();
  });
});
