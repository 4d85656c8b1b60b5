/**
 * The manager's HTTP endpoints: `/healthz`, `/readyz` (probes) and `/metrics` (Prometheus).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What one endpoint server answers. @internal */
export interface Endpoints {
  healthz?: () => boolean;
  readyz?: () => boolean;
  metrics?: () => Promise<string>;
}

/** Splits `host:port` (`:8080` = every interface). */
export function parseAddress(address: string): { host: string | undefined; port: number } {
  const colon = address.lastIndexOf(':');
  const host = colon < 0 ? '' : address.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(colon < 0 ? address : address.slice(colon + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`invalid address ${JSON.stringify(address)}`);
  return { host: host === '' ? undefined : host, port };
}

/** Starts a server of `endpoints` on `address`; resolves with it and its URL. */
export async function serveEndpoints(
  address: string,
  endpoints: Endpoints,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const reply = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'content-type': type, 'x-content-type-options': 'nosniff' });
      res.end(body);
    };
    const probe = path === '/healthz' ? endpoints.healthz : path === '/readyz' ? endpoints.readyz : undefined;
    if (probe) {
      const ok = probe();
      reply(ok ? 200 : 500, ok ? 'ok' : `${path.slice(1)} check failed`);
      return;
    }
    if (path === '/metrics' && endpoints.metrics) {
      endpoints.metrics().then(
        (text) => reply(200, text, 'text/plain; version=0.0.4; charset=utf-8'),
        (err: unknown) => reply(500, String(err)),
      );
      return;
    }
    reply(404, '404 page not found');
  });
  const { host, port } = parseAddress(address);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { server, url: `http://${h}:${addr.port}` };
}

/** Closes a server, ending idle keep-alive connections. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
