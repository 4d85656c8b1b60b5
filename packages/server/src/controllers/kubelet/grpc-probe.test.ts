import { createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcProbe } from './grpc-probe.js';

/**
 * A plaintext HTTP/2 server with grpc.health.v1.Health/Check written by hand: the empty service
 * and "api" serve, "db" does not, any other is unknown (NotFound, as grpc-go's health server).
 * Other paths are Unimplemented.
 */
let server: Http2Server;
let port = 0;
let userAgent = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    userAgent = String(req.headers['user-agent']);
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/grpc' });
      const trailers = (status: number, message = '') =>
        res.addTrailers({ 'grpc-status': String(status), ...(message && { 'grpc-message': message }) });
      if (req.url !== '/grpc.health.v1.Health/Check') {
        trailers(12, 'unknown service grpc.health.v1.Health');
        return res.end();
      }
      const body = Buffer.concat(chunks).subarray(5);
      const service = body.length > 2 ? body.subarray(2).toString('utf8') : '';
      const status = { '': 1, api: 1, db: 2 }[service];
      if (status === undefined) {
        trailers(5, 'unknown service');
        return res.end();
      }
      trailers(0);
      res.end(Buffer.from([0, 0, 0, 0, 2, 0x08, status]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('grpcProbe (kube 1.32 pkg/probe/grpc)', () => {
  it('succeeds when the health service answers SERVING, as kube-probe', async () => {
    expect(await grpcProbe('127.0.0.1', port, '', 1000)).toEqual({ ok: true });
    expect(await grpcProbe('127.0.0.1', port, 'api', 1000)).toEqual({ ok: true });
    expect(userAgent).toBe('kube-probe/1.32');
  });

  it('fails with kube words for NOT_SERVING and for an rpc error', async () => {
    expect(await grpcProbe('127.0.0.1', port, 'db', 1000)).toEqual({
      ok: false,
      message: 'service unhealthy (responded with "NOT_SERVING")',
    });
    expect(await grpcProbe('127.0.0.1', port, 'other', 1000)).toEqual({
      ok: false,
      message: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service',
    });
  });

  it('fails at its deadline when nothing listens, as grpc-go blocking dial', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const free = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await grpcProbe('127.0.0.1', free, '', 1000)).toEqual({
      ok: false,
      message: `timeout: failed to connect service "127.0.0.1:${free}" within 1s: context deadline exceeded`,
    });
  });
});
