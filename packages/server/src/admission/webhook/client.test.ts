import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueServingCertificate } from '../../auth/pki.js';
import { Store } from '../../storage/store.js';
import type { KubeObject } from '../../storage/types.js';
import { createWebhookCaller, EncodedJson, WebhookCallError } from './client.js';

describe('webhook client', () => {
  let server: Server;
  let port: number;
  let caBundle: string;
  let otherCa: string;
  const seen: { url: string; body: unknown }[] = [];

  beforeAll(async () => {
    const ca = await createCertificateAuthority('webhook-ca');
    caBundle = Buffer.from(ca.cert).toString('base64');
    otherCa = Buffer.from((await createCertificateAuthority('other')).cert).toString('base64');
    const cert = await issueServingCertificate(ca, ['127.0.0.1', 'hook.system.svc', 'localhost']);
    server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        // Decoded whole: a character may be split between two chunks.
        const text = Buffer.concat(chunks).toString();
        seen.push({ url: req.url ?? '', body: JSON.parse(text) });
        if (req.url?.startsWith('/slow')) return; // never answers
        if (req.url?.startsWith('/garbage')) return void res.end('garbage');
        if (req.url?.startsWith('/boom')) {
          res.statusCode = 500;
          return void res.end('boom');
        }
        if (req.url?.startsWith('/status')) {
          res.statusCode = 403;
          res.setHeader('Content-Type', 'application/json');
          return void res.end(
            JSON.stringify({ kind: 'Status', apiVersion: 'v1', message: 'no way', code: 403 }),
          );
        }
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ echo: JSON.parse(text) }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  const caller = createWebhookCaller(Store.open());
  const failure = async (p: Promise<unknown>): Promise<WebhookCallError> => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WebhookCallError);
    return err as WebhookCallError;
  };

  it('posts JSON to a URL with ?timeout and verifies the server with the caBundle', async () => {
    const out = await caller.post(
      { url: `https://127.0.0.1:${port}/mutate`, caBundle },
      { a: 1 },
      { timeoutSeconds: 10 },
    );
    expect(out).toEqual({ echo: { a: 1 } });
    expect(seen.at(-1)?.url).toBe('/mutate?timeout=10s');
  });

  it('sends non-ASCII bodies whole: objects and pre-encoded reviews (Content-Length in UTF-8 bytes)', async () => {
    const url = `https://127.0.0.1:${port}/mutate`;
    const object = { metadata: { name: 'ü' }, data: { note: 'naïve € 😀', long: 'é'.repeat(40_000) } };
    expect(await caller.post({ url, caBundle }, object, { timeoutSeconds: 10 })).toEqual({ echo: object });
    const items = [JSON.stringify(object), '{}', JSON.stringify({ k: '日本' })];
    const encoded = new EncodedJson('{"objects":[', items, '],"end":"ß"}');
    expect(encoded.bytes().equals(Buffer.from(encoded.text))).toBe(true);
    expect(await caller.post({ url, caBundle }, encoded, { timeoutSeconds: 10 })).toEqual({
      echo: { objects: [object, {}, { k: '日本' }], end: 'ß' },
    });
    expect(new EncodedJson('[', [], ']').bytes().toString()).toBe('[]');
  });

  it('words failures as kube-apiserver does after "failed to call webhook: "', async () => {
    const url = `https://127.0.0.1:${port}/mutate`;
    const untrusted = await failure(caller.post({ url, caBundle: otherCa }, {}, { timeoutSeconds: 5 }));
    expect(untrusted.message).toBe(
      `Post "${url}?timeout=5s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
    );
    expect(untrusted.failure).toBe('connection');

    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = await failure(
      caller.post({ url: `https://127.0.0.1:${deadPort}/x`, caBundle }, {}, { timeoutSeconds: 10 }),
    );
    expect(refused.message).toBe(
      `Post "https://127.0.0.1:${deadPort}/x?timeout=10s": dial tcp 127.0.0.1:${deadPort}: connect: connection refused`,
    );

    const slow = await failure(
      caller.post({ url: `https://127.0.0.1:${port}/slow`, caBundle }, {}, { timeoutSeconds: 1 }),
    );
    expect(slow.message).toBe(`Post "https://127.0.0.1:${port}/slow?timeout=1s": context deadline exceeded`);
    expect(slow.failure).toBe('timeout');

    const garbage = await failure(
      caller.post({ url: `https://127.0.0.1:${port}/garbage`, caBundle }, {}, { timeoutSeconds: 10 }),
    );
    expect(garbage.message).toBe(
      "couldn't get version/kind; json parse error: invalid character 'g' looking for beginning of value",
    );
    expect(garbage.failure).toBe('body');

    const boom = await failure(
      caller.post({ url: `https://127.0.0.1:${port}/boom`, caBundle }, {}, { timeoutSeconds: 10 }),
    );
    expect(boom.message).toBe('an error on the server ("boom") has prevented the request from succeeding');
    expect(boom.statusCode).toBe(500);

    const status = await failure(
      caller.post({ url: `https://127.0.0.1:${port}/status`, caBundle }, {}, { timeoutSeconds: 10 }),
    );
    expect(status.message).toBe('no way');
    expect(status.status?.code).toBe(403);
  });

  it('reaches a Service through its ready EndpointSlice, verifying <name>.<namespace>.svc', async () => {
    const store = Store.open();
    const svcCaller = createWebhookCaller(store);
    const service = { service: { namespace: 'system', name: 'hook', path: '/validate' }, caBundle };
    const missing = await failure(svcCaller.post(service, {}, { timeoutSeconds: 10 }));
    expect(missing.message).toBe(
      'Post "https://hook.system.svc:443/validate?timeout=10s": service "hook" not found',
    );
    await store.create('/core/services/system/hook', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'hook', namespace: 'system' },
      spec: { clusterIP: '10.96.0.10', ports: [{ name: 'https', port: 443, targetPort: 9443 }] },
    } as KubeObject);
    const none = await failure(svcCaller.post(service, {}, { timeoutSeconds: 10 }));
    expect(none.message).toBe(
      'Post "https://hook.system.svc:443/validate?timeout=10s": no endpoints available for service "hook"',
    );
    await store.create('/discovery.k8s.io/endpointslices/system/hook-1', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'hook-1', namespace: 'system', labels: { 'kubernetes.io/service-name': 'hook' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port }],
      endpoints: [
        { addresses: ['127.0.0.2'], conditions: { ready: false } },
        { addresses: ['127.0.0.1'], conditions: { ready: true } },
      ],
    } as KubeObject);
    expect(await svcCaller.post(service, { b: 2 }, { timeoutSeconds: 10 })).toEqual({ echo: { b: 2 } });
    expect(seen.at(-1)?.url).toBe('/validate?timeout=10s');
  });

  it('sends a request again on a new connection when the webhook closed the kept-alive one it reused', async () => {
    // Every connection answers its first request and drops the next one unanswered, as a webhook
    // that closed an idle connection (or restarted) does to the request already on its way.
    const ca = await createCertificateAuthority('reuse-ca');
    const cert = await issueServingCertificate(ca, ['127.0.0.1']);
    const served = new WeakMap<object, number>();
    let connections = 0;
    const flaky = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      req.resume();
      req.on('end', () => {
        if (n > 1) return void req.socket.destroy();
        res.setHeader('Content-Type', 'application/json');
        res.end('{"ok":true}');
      });
    });
    flaky.on('secureConnection', () => connections++);
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(flaky.address() as AddressInfo).port}/hook`;
    const config = { url, caBundle: Buffer.from(ca.cert).toString('base64') };
    const reusing = createWebhookCaller(Store.open());
    try {
      for (let i = 0; i < 3; i++) {
        await expect(reusing.post(config, { i }, { timeoutSeconds: 5 })).resolves.toEqual({ ok: true });
      }
      // Each call after the first reused the connection, was dropped, and went again on a new one.
      expect(connections).toBe(3);
    } finally {
      reusing.close?.();
      flaky.closeAllConnections();
      flaky.close();
    }
  });
});
