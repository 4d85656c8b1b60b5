/**
 * A watch over a WebSocket, as kube-apiserver serves it through golang.org/x/net/websocket: one
 * text message per event (its JSON and a newline), any single subprotocol echoed and none
 * negotiated, the Origin header required, errors before the watch as `Status` answers.
 */
import { once } from 'node:events';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { httpClient } from '../http.js';
import { eventually } from '../kubectl.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;
const CM = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
  expect(
    (await http.post(CM, { metadata: { name: 'before', labels: { t: 'ws' } }, data: { a: '1' } })).status,
  ).toBe(201);
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

interface Watch {
  ws: WebSocket;
  messages: { text: string; binary: boolean }[];
  closed: Promise<[number, string]>;
}

async function wsWatch(
  query: string,
  protocols: string[] = [],
  origin = 'https://example.com',
): Promise<Watch> {
  const { server, token, caData } = cp.clientConfig;
  const ws = new WebSocket(`${server.replace('https:', 'wss:')}${CM}?watch=true&${query}`, protocols, {
    ca: caData,
    headers: { Authorization: `Bearer ${token}` },
    origin,
  });
  const messages: Watch['messages'] = [];
  ws.on('message', (d: Buffer, binary: boolean) => messages.push({ text: d.toString(), binary }));
  const closed = once(ws, 'close').then(
    ([code, reason]) => [code as number, String(reason)] as [number, string],
  );
  await once(ws, 'open');
  return { ws, messages, closed };
}

/** The raw answer to a handshake, read until the server closes the connection. */
function rawHandshake(headers: Record<string, string>): Promise<string> {
  const url = new URL(cp.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), ca: cp.clientConfig.caData });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', reject);
    const lines = [
      `GET ${CM}?watch=true HTTP/1.1`,
      `Host: ${url.host}`,
      `Authorization: Bearer ${cp.clientConfig.token}`,
      'Connection: Upgrade',
      'Upgrade: websocket',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

const handshake = { 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' };

describe('watch over a WebSocket', () => {
  it('sends the initial state, then each change, one text message per event ending in a newline', async () => {
    const w = await wsWatch('labelSelector=t%3Dws');
    try {
      expect(w.ws.protocol).toBe('');
      await eventually(() => w.messages.length >= 1);
      expect((await http.post(CM, { metadata: { name: 'during', labels: { t: 'ws' } } })).status).toBe(201);
      expect((await http.delete(`${CM}/during`)).status).toBe(200);
      await eventually(() => w.messages.length >= 3);
      expect(w.messages.every((m) => !m.binary && m.text.endsWith('}\n'))).toBe(true);
      const events = w.messages.map((m) => JSON.parse(m.text));
      expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', 'before'],
        ['ADDED', 'during'],
        ['DELETED', 'during'],
      ]);
      expect(events[0].object.kind).toBe('ConfigMap');
    } finally {
      w.ws.close();
    }
  });

  it.each(['base64.binary.k8s.io', 'binary.k8s.io', 'anything'])(
    'echoes the one subprotocol offered (%s) and frames events the same',
    async (protocol) => {
      const rv = (await http.get(CM)).json.metadata.resourceVersion;
      const w = await wsWatch(`resourceVersion=${rv}`, [protocol]);
      try {
        expect(w.ws.protocol).toBe(protocol);
        expect(
          (await http.post(CM, { metadata: { name: `p-${protocol.replace(/\./g, '-')}` } })).status,
        ).toBe(201);
        await eventually(() => w.messages.length >= 1);
        expect(w.messages[0]!.binary).toBe(false);
        expect(JSON.parse(w.messages[0]!.text).type).toBe('ADDED');
      } finally {
        w.ws.close();
      }
    },
  );

  it('closes with 1000 when the watch times out, after a bookmark-free stream', async () => {
    const rv = (await http.get(CM)).json.metadata.resourceVersion;
    const w = await wsWatch(`resourceVersion=${rv}&timeoutSeconds=1`);
    expect((await w.closed)[0]).toBe(1000);
    expect(w.messages).toEqual([]);
  });

  it('refuses a handshake without Origin (403), with two subprotocols (400), of another version (400)', async () => {
    expect(await rawHandshake(handshake)).toBe('HTTP/1.1 403 Forbidden\r\n\r\n');
    expect(await rawHandshake({ ...handshake, Origin: 'null' })).toBe('HTTP/1.1 403 Forbidden\r\n\r\n');
    expect(await rawHandshake({ ...handshake, Origin: 'http://o', 'Sec-WebSocket-Protocol': 'a, b' })).toBe(
      'HTTP/1.1 400 Bad Request\r\n\r\n',
    );
    expect(await rawHandshake({ ...handshake, Origin: 'http://o', 'Sec-WebSocket-Version': '8' })).toBe(
      'HTTP/1.1 400 Bad Request\r\nSec-WebSocket-Version: 13\r\n\r\nmissing or bad WebSocket Version',
    );
    const ok = await new Promise<string>((resolve, reject) => {
      const url = new URL(cp.url);
      const socket = connect({ host: url.hostname, port: Number(url.port), ca: cp.clientConfig.caData });
      socket.once('data', (c: Buffer) => {
        resolve(c.toString());
        socket.destroy();
      });
      socket.on('error', reject);
      socket.write(
        `GET ${CM}?watch=true&timeoutSeconds=5 HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${cp.clientConfig.token}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nOrigin: /\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
    });
    expect(ok.split('\r\n\r\n')[0]).toBe(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=',
    );
  });

  it('answers errors found before the watch starts as a Status, not a WebSocket', async () => {
    const { server, token, caData } = cp.clientConfig;
    const ws = new WebSocket(
      `${server.replace('https:', 'wss:')}${CM}?watch=true&resourceVersionMatch=NotOlderThan`,
      [],
      {
        ca: caData,
        headers: { Authorization: `Bearer ${token}` },
        origin: 'https://example.com',
      },
    );
    ws.on('error', () => undefined);
    const [, res] = (await once(ws, 'unexpected-response')) as [unknown, import('node:http').IncomingMessage];
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toMatchObject({
      kind: 'Status',
      reason: 'Invalid',
      message:
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    });
  });
});
