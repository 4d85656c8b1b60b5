/**
 * The control plane's loopback for its own controllers: the same request listener as the HTTPS
 * server, served as plain HTTP on a Unix socket in a private directory. kube-apiserver gives its
 * in-process clients a loopback connection for the same reason: the built-in controllers still
 * go through authentication, admission and everything else a request meets, but skip TLS — and
 * their client skips undici, which keeps the control plane's idle memory small.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiResponse } from './http/api-response.js';

/** A listening loopback socket. */
export interface Loopback {
  socketPath: string;
  close(): Promise<void>;
}

/** Longest Unix socket path every platform accepts (sun_path is 104–108 bytes). */
const MAX_SOCKET_PATH = 100;

/**
 * Serves `listener` on a Unix socket in a new directory only this user can enter, or returns
 * undefined where that is impossible (Windows, or a temporary directory whose path is too long),
 * in which case the controllers use HTTPS like any other client.
 */
export async function startLoopback(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Loopback | undefined> {
  if (process.platform === 'win32') return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-'));
  const socketPath = join(dir, 'apiserver.sock');
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  // Writes each response's Audit-Id with its first headers (a cheaper writeHead).
  const server = createServer({ ServerResponse: ApiResponse }, listener);
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  server.requestTimeout = 0; // watches are long-lived
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return {
    socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        for (const s of sockets) s.destroy();
      }),
  };
}
