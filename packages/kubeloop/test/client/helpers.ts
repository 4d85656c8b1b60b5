/**
 * Helpers of the kubeloop/client suite: temporary directories and a server that records what
 * the client sends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The control plane and its clients come from the test environment, as an operator's tests get them.
export { type ClientEnv, rejection, startClientEnv } from '@kubeloop/server/testing';

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
