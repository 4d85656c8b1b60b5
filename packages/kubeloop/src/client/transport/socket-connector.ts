/**
 * Plain HTTP/1.1 over a Unix domain socket with node:http: for a server on the same machine
 * that offers one (the local control plane's own controllers use it). No TLS — the socket's
 * file permissions guard it — and no undici: it costs a few hundred bytes per connection.
 */
import { Agent, type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Connector, ConnectorRequest, ConnectorResponse } from './connector.js';

export class SocketConnector implements Connector {
  private readonly agent: Agent;
  private readonly open = new Set<ClientRequest>();
  private readonly sockets = new Set<Socket>();
  private destroyed = false;

  constructor(
    private readonly socketPath: string,
    maxConnections?: number,
  ) {
    this.agent = new Agent({
      keepAlive: true,
      ...(maxConnections !== undefined && { maxSockets: maxConnections }),
    });
  }

  request(req: ConnectorRequest): Promise<ConnectorResponse> {
    if (this.destroyed) return Promise.reject(new Error('the client is closed'));
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | string[] | number> = { ...req.headers, host: 'localhost' };
      if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
      const r = httpRequest({
        socketPath: this.socketPath,
        agent: this.agent,
        path: req.path,
        method: req.method,
        headers,
        ...(req.signal && { signal: req.signal }),
      });
      this.open.add(r);
      r.on('close', () => this.open.delete(r));
      r.on('socket', (s: Socket) => {
        if (!this.sockets.has(s)) {
          this.sockets.add(s);
          s.once('close', () => this.sockets.delete(s));
        }
      });
      const timer =
        req.headersTimeoutMs > 0
          ? setTimeout(() => {
              const err = Object.assign(new Error(`no response headers within ${req.headersTimeoutMs} ms`), {
                code: 'ETIMEDOUT',
              });
              r.destroy(err);
            }, req.headersTimeoutMs)
          : undefined;
      r.on('response', (res: IncomingMessage) => {
        if (timer) clearTimeout(timer);
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      r.on('error', (err) => {
        if (timer) clearTimeout(timer);
        reject(err);
      });
      r.end(req.body);
    });
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    for (const r of this.open) r.destroy();
    for (const s of this.sockets) s.destroy();
    this.agent.destroy();
  }
}
