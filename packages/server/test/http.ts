import { Agent, request as httpsRequest } from 'node:https';
import type { ControlPlane } from '../src/index.js';

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body (undefined when it is not JSON). */
  json: any;
}

export interface HttpOptions {
  body?: unknown;
  /** Raw body bytes/string (sent as-is). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  token?: string | null;
}

/** A minimal HTTPS client for white-box tests of the API server (trusts the cluster CA). */
export function httpClient(cp: ControlPlane) {
  const agent = new Agent({ ca: cp.clientConfig.caData, keepAlive: true, maxSockets: 32 });
  const url = new URL(cp.url);
  const send = (method: string, path: string, opts: HttpOptions = {}): Promise<HttpResult> =>
    new Promise((resolve, reject) => {
      const payload = opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined);
      const headers: Record<string, string> = {
        Accept: 'application/json',
        ...(payload !== undefined && { 'Content-Type': 'application/json' }),
        ...opts.headers,
      };
      // Without a length node sends the body of a DELETE unframed, and the server misreads it.
      if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload));
      const token = opts.token === undefined ? cp.clientConfig.token : opts.token;
      if (token) headers.Authorization = `Bearer ${token}`;
      const req = httpsRequest(
        { host: url.hostname, port: url.port, path, method, headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return {
    send,
    get: (path: string, opts?: HttpOptions) => send('GET', path, opts),
    post: (path: string, body: unknown, opts?: HttpOptions) => send('POST', path, { ...opts, body }),
    put: (path: string, body: unknown, opts?: HttpOptions) => send('PUT', path, { ...opts, body }),
    patch: (path: string, body: unknown, type: string, opts?: HttpOptions) =>
      send('PATCH', path, { ...opts, body, headers: { 'Content-Type': type, ...opts?.headers } }),
    delete: (path: string, opts?: HttpOptions) => send('DELETE', path, opts),
    /**
     * Opens a watch and collects its events until `close()`. With `paused`, nothing is read
     * until `resume()` (the server's output backs up, as with a slow client).
     */
    watch(path: string, headers: Record<string, string> = {}, options: { paused?: boolean } = {}) {
      const events: any[] = [];
      let response: import('node:http').IncomingMessage | undefined;
      let buffer = '';
      let ended = false;
      let status = 0;
      const req = httpsRequest(
        {
          host: url.hostname,
          port: url.port,
          path,
          method: 'GET',
          headers: {
            Accept: 'application/json',
            Authorization: `Bearer ${cp.clientConfig.token}`,
            ...headers,
          },
          agent: new Agent({ ca: cp.clientConfig.caData }),
        },
        (res) => {
          status = res.statusCode ?? 0;
          response = res;
          if (options.paused) res.pause();
          res.on('data', (c: Buffer) => {
            buffer += c.toString('utf8');
            let nl = buffer.indexOf('\n');
            while (nl >= 0) {
              const line = buffer.slice(0, nl).trim();
              buffer = buffer.slice(nl + 1);
              if (line) events.push(JSON.parse(line));
              nl = buffer.indexOf('\n');
            }
          });
          res.on('end', () => {
            ended = true;
          });
          res.on('error', () => {
            ended = true;
          });
        },
      );
      req.on('error', () => {
        ended = true;
      });
      req.end();
      return {
        events,
        get status() {
          return status;
        },
        get ended() {
          return ended;
        },
        resume: () => response?.resume(),
        close: () => req.destroy(),
      };
    },
    close: () => agent.destroy(),
  };
}
