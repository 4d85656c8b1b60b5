import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Where and how to reach a server: its base URL and, for HTTPS, the CA and bearer token. */
export interface Endpoint {
  /** `https://127.0.0.1:6443` or `http://127.0.0.1:2379` */
  base: string;
  /** PEM of the CA that signed the serving certificate (HTTPS only). */
  ca?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
}

/** A complete response, with the client-side timings of its request. */
export interface Response {
  status: number;
  body: Buffer;
  /** From handing the request to the socket until the response headers arrived. */
  headersMs: number;
  /** From handing the request to the socket until the last byte of the body arrived. */
  totalMs: number;
}

/** An open streaming response (a watch); `close()` ends it. */
export interface Stream {
  close(): void;
  /** Resolves when the server ends the stream or it is closed. */
  readonly ended: Promise<void>;
}

/**
 * A keep-alive HTTP(S) client over node:http(s) with a fixed pool of sockets, so that N concurrent
 * callers reuse N connections and the figures measure requests, not TLS handshakes.
 */
export class HttpClient {
  private readonly url: URL;
  private readonly tls: boolean;
  private readonly agent: HttpAgent;
  private readonly auth: Record<string, string>;

  constructor(
    private readonly endpoint: Endpoint,
    sockets = 16,
  ) {
    this.url = new URL(endpoint.base);
    this.tls = this.url.protocol === 'https:';
    const opts = {
      keepAlive: true,
      maxSockets: sockets,
      maxFreeSockets: sockets,
      scheduling: 'lifo' as const,
    };
    this.agent = this.tls
      ? new HttpsAgent({ ...opts, ...(endpoint.ca && { ca: endpoint.ca }) })
      : new HttpAgent(opts);
    this.auth = endpoint.token ? { authorization: `Bearer ${endpoint.token}` } : {};
  }

  /** Sends one request and reads the whole response. Rejects on network errors only, not on HTTP status. */
  request(
    method: string,
    path: string,
    body?: string | Buffer,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      const send = this.tls ? httpsRequest : httpRequest;
      const req = send(
        {
          host: this.url.hostname,
          port: this.url.port,
          method,
          path,
          agent: this.agent,
          headers: {
            ...this.auth,
            accept: 'application/json',
            ...(body !== undefined && {
              'content-type': 'application/json',
              'content-length': String(Buffer.byteLength(body)),
            }),
            ...headers,
          },
        },
        (res) => {
          const headersMs = Number(process.hrtime.bigint() - start) / 1e6;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
              headersMs,
              totalMs: Number(process.hrtime.bigint() - start) / 1e6,
            }),
          );
        },
      );
      req.on('error', reject);
      const start = process.hrtime.bigint();
      req.end(body);
    });
  }

  /**
   * Opens a long-lived streaming request on its own connection and calls `onLine` with every
   * newline-delimited line and the time its chunk arrived. Resolves once the response headers
   * arrived (the stream is established); rejects when the status is not 200.
   */
  stream(
    method: string,
    path: string,
    body: string | undefined,
    onLine: (line: string, arrivedAt: bigint) => void,
  ): Promise<Stream> {
    return new Promise<Stream>((resolve, reject) => {
      const send = this.tls ? httpsRequest : httpRequest;
      let res: IncomingMessage | undefined;
      let endedResolve!: () => void;
      const ended = new Promise<void>((r) => {
        endedResolve = r;
      });
      const req = send(
        {
          host: this.url.hostname,
          port: this.url.port,
          method,
          path,
          // A dedicated connection: a watch must not hold one of the pooled request sockets.
          agent: false,
          ...(this.tls && this.endpoint.ca && { ca: this.endpoint.ca }),
          headers: {
            ...this.auth,
            accept: 'application/json',
            ...(body !== undefined && { 'content-type': 'application/json' }),
          },
        },
        (r) => {
          res = r;
          if (r.statusCode !== 200) {
            r.resume();
            reject(new Error(`${method} ${path}: HTTP ${r.statusCode}`));
            return;
          }
          r.setEncoding('utf8');
          let pending = '';
          r.on('data', (chunk: string) => {
            const at = process.hrtime.bigint();
            pending += chunk;
            let nl = pending.indexOf('\n');
            while (nl >= 0) {
              const line = pending.slice(0, nl);
              pending = pending.slice(nl + 1);
              if (line.length > 0) onLine(line, at);
              nl = pending.indexOf('\n');
            }
          });
          r.on('end', endedResolve);
          r.on('close', endedResolve);
          r.on('error', endedResolve);
          resolve({
            close: () => {
              req.destroy();
              res?.destroy();
              endedResolve();
            },
            ended,
          });
        },
      );
      req.on('error', (err) => {
        endedResolve();
        reject(err);
      });
      req.end(body);
    });
  }

  /** Closes the pooled sockets. */
  close(): void {
    this.agent.destroy();
  }
}
