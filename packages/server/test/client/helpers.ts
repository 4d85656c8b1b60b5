import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type ClientOptions } from 'kubeloop/client';
import { type ControlPlane, startTestEnv, type TestEnvOptions } from '../../src/index.js';

/** A control plane and a client of it, for one test file. */
export interface ClientEnv {
  env: ControlPlane;
  client: Client;
  /** Another client of the same control plane with other options (closed by stop()). */
  newClient(options?: ClientOptions): Client;
  stop(): Promise<void>;
}

export async function startClientEnv(
  options: ClientOptions = {},
  envOptions: TestEnvOptions = {},
): Promise<ClientEnv> {
  const env = await startTestEnv(envOptions);
  const clients: Client[] = [];
  const newClient = (o: ClientOptions = {}) => {
    const c = new Client(env.clientConfig, { retry: { baseDelayMs: 1 }, ...o });
    clients.push(c);
    return c;
  };
  const client = newClient(options);
  return {
    env,
    client,
    newClient,
    async stop() {
      await Promise.all(clients.map((c) => c.close()));
      await env.stop();
    },
  };
}

/** A temporary directory, removed by the returned function. */
export function tempDir(prefix = 'kubeloop-client-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One request seen by a {@link captureServer}. */
export interface Captured {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  httpVersion: string;
}

/**
 * A plain-HTTP server that records requests and answers with `respond` (default: 200 `{}`),
 * to check the exact shape of what the client sends, or to send what a real server would not.
 */
export async function captureServer(
  respond: (req: Captured, res: ServerResponse) => void = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  },
): Promise<{ url: string; requests: Captured[]; close: () => Promise<void> }> {
  const requests: Captured[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const captured: Captured = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        httpVersion: req.httpVersion,
      };
      requests.push(captured);
      respond(captured, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The error a promise rejects with; fails when it resolves. */
export async function rejection<E = Error>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (err) {
    return err as E;
  }
  throw new Error('expected the promise to reject');
}
