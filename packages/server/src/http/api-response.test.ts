import { createServer, type IncomingMessage, type Server, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiResponse, JSON_HEADERS } from './api-response.js';

/** The ways handlers write a response after the Audit-Id was given. */
const WRITERS: Record<string, (res: ServerResponse) => void> = {
  writeHead: (res) => {
    res.writeHead(201, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.end('{}\n');
  },
  'writeHead with JSON_HEADERS': (res) => {
    res.writeHead(201, JSON_HEADERS);
    res.end('{}\n');
  },
  'writeHead with a reason': (res) => {
    res.writeHead(200, 'Fine', { 'Content-Type': 'text/plain' });
    res.end('ok');
  },
  'writeHead with an array': (res) => {
    res.writeHead(200, ['Content-Type', 'text/plain', 'Warning', 'a', 'Warning', 'b']);
    res.end('ok');
  },
  'a header set first': (res) => {
    res.appendHeader('Warning', '299 - "w"');
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('ok');
  },
  'implicit head': (res) => {
    res.statusCode = 404;
    res.end('gone');
  },
  'headers naming the Audit-Id': (res) => {
    res.writeHead(200, { 'audit-id': 'theirs', 'Content-Type': 'text/plain' });
    res.end('ok');
  },
  'read back before the head': (res) => {
    res.setHeader('Content-Type', String(res.getHeader('audit-id')));
    res.end();
  },
};

const AUDIT_ID = '0b0e5d2c-4b1e-4f0a-9c55-5a9c3a7de001';

/** A server whose responses get the Audit-Id as `auditInit` gives it to either class. */
async function serve(Response: typeof ServerResponse): Promise<Server> {
  const server = createServer({ ServerResponse: Response }, (req: IncomingMessage, res: ServerResponse) => {
    if (res instanceof ApiResponse) res.setAuditId(AUDIT_ID);
    else res.setHeader('Audit-Id', AUDIT_ID);
    WRITERS[decodeURIComponent(req.url!.slice(1))]!(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** The raw bytes of a response, but for its Date header. */
function raw(server: Server, writer: string): Promise<string> {
  const { port } = server.address() as { port: number };
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.end(`GET /${encodeURIComponent(writer)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () =>
      resolve(
        Buffer.concat(chunks)
          .toString('latin1')
          .replace(/^Date: .*\r\n/m, ''),
      ),
    );
    socket.on('error', reject);
  });
}

describe('ApiResponse', () => {
  let plain: Server;
  let api: Server;
  beforeAll(async () => {
    [plain, api] = await Promise.all([serve(ServerResponse), serve(ApiResponse)]);
  });
  afterAll(() => {
    plain.close();
    api.close();
  });

  it.each(Object.keys(WRITERS))('answers %s byte for byte as a header set ahead would', async (writer) => {
    const expected = await raw(plain, writer);
    expect(expected.toLowerCase()).toContain('audit-id');
    expect(await raw(api, writer)).toBe(expected);
  });
});
