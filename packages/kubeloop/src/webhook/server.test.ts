import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueServingCertificate } from '../pki/index.js';
import { defineResource } from '../schema/define/resource.js';
import { defaulter, validator } from './admission.js';
import { conversion } from './conversion.js';
import { WebhookServer } from './server.js';

const Foo = defineResource({
  group: 'samplecontroller.example.com',
  kind: 'Foo',
  versions: {
    v1alpha1: { spec: Type.Object({ size: Type.Integer() }) },
    v1: { spec: Type.Object({ replicas: Type.Integer() }), storage: true },
  },
});

function post(
  server: WebhookServer,
  path: string,
  body: unknown,
  ca = server.caBundle,
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${server.url}${path}`,
      { method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const review = (object: unknown, uid = 'u1') => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid,
    kind: { group: 'samplecontroller.example.com', version: 'v1', kind: 'Foo' },
    resource: { group: 'samplecontroller.example.com', version: 'v1', resource: 'foos' },
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    name: 'f',
    namespace: 'default',
    object,
  },
});

const fooV1 = (replicas?: number) => ({
  apiVersion: 'samplecontroller.example.com/v1',
  kind: 'Foo',
  metadata: { name: 'f', namespace: 'default' },
  spec: replicas === undefined ? {} : { replicas },
});

/** Foo's v1alpha1 `spec.size` ⇄ hub v1 `spec.replicas`. */
const fooConversion = () =>
  conversion(Foo, {
    hub: 'v1',
    spokes: {
      v1alpha1: {
        toHub: (o) => ({ metadata: o.metadata, spec: { replicas: o.spec.size } }),
        fromHub: (h) => ({ metadata: h.metadata, spec: { size: h.spec.replicas } }),
      },
    },
  });

let dir: string;
let server: WebhookServer;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-webhook-'));
});
afterEach(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('WebhookServer', () => {
  it('serves admission reviews over HTTPS with a CA it made, and counts them in controller-runtime’s metrics', async () => {
    server = new WebhookServer({ port: 0, certDir: dir }).register(
      defaulter(Foo, (f) => {
        (f.spec as { replicas?: number }).replicas ??= 1;
      }),
      validator(Foo, {}),
    );
    await server.listen();
    expect(server.caBundle).toContain('BEGIN CERTIFICATE');
    const r = await post(server, '/mutate-samplecontroller-example-com-v1-foo?timeout=10s', review(fooV1()));
    expect(r.status).toBe(200);
    expect(r.json.response).toMatchObject({ uid: 'u1', allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(r.json.response.patch, 'base64').toString())).toEqual([
      { op: 'add', path: '/spec/replicas', value: 1 },
    ]);
    const missing = await post(server, '/mutate-nothing', review(fooV1()));
    expect(missing.status).toBe(404);

    const text = await server.metricsRegistry.metrics();
    const path = '/mutate-samplecontroller-example-com-v1-foo';
    expect(text).toContain(`controller_runtime_webhook_requests_total{webhook="${path}",code="200"} 1`);
    expect(text).toContain(`controller_runtime_webhook_requests_total{webhook="${path}",code="500"} 0`);
    expect(text).toContain(`controller_runtime_webhook_requests_in_flight{webhook="${path}"} 0`);
    expect(text).toContain(`controller_runtime_webhook_latency_seconds_count{webhook="${path}"} 1`);
    expect(text).toContain(
      `controller_runtime_webhook_requests_in_flight{webhook="/validate-samplecontroller-example-com-v1-foo"} 0`,
    );
  });

  it('reuses the CA it wrote on a restart, so registered configurations stay valid', async () => {
    server = new WebhookServer({ port: 0, certDir: dir });
    await server.listen();
    const first = server.caBundle;
    await server.close();
    server = new WebhookServer({ port: 0, certDir: dir });
    await server.listen();
    expect(server.caBundle).toBe(first);
  });

  it('picks up a rotated certificate while serving; connections then verify with the new CA', async () => {
    server = new WebhookServer({ port: 0, certDir: dir, certPollIntervalMs: 60_000 }).register(
      validator(Foo, {}),
    );
    await server.listen();
    const oldCa = server.caBundle;
    const path = '/validate-samplecontroller-example-com-v1-foo';
    expect((await post(server, path, review(fooV1(1)))).json.response.allowed).toBe(true);

    const ca = createCertificateAuthority('rotated-ca');
    const pair = issueServingCertificate(ca, ['127.0.0.1', 'localhost']);
    await writeFile(join(dir, 'tls.key'), pair.key);
    await writeFile(join(dir, 'tls.crt'), pair.cert);
    await server.reloadCertificates();

    expect((await post(server, path, review(fooV1(1)), ca.cert)).json.response.allowed).toBe(true);
    await expect(post(server, path, review(fooV1(1)), oldCa)).rejects.toThrow(/certificate/);
  });

  it('sees a rotation through file events alone (no explicit reload, no poll)', async () => {
    server = new WebhookServer({ port: 0, certDir: dir, certPollIntervalMs: 3_600_000 }).register(
      validator(Foo, {}),
    );
    await server.listen();
    const ca = createCertificateAuthority('rotated-ca');
    const pair = issueServingCertificate(ca, ['127.0.0.1']);
    await writeFile(join(dir, 'tls.key'), pair.key);
    await writeFile(join(dir, 'tls.crt'), pair.cert);
    const path = '/validate-samplecontroller-example-com-v1-foo';
    // Retried until the watcher swapped the context: each attempt is a new TLS handshake.
    let last: unknown;
    for (let i = 0; i < 200; i++) {
      try {
        const r = await post(server, path, review(fooV1(1)), ca.cert);
        if (r.json.response.allowed) return;
      } catch (err) {
        last = err;
        await new Promise((r) => setImmediate(r));
      }
    }
    throw last;
  });

  it('drains in-flight reviews on close: the answer still arrives, then it stops', async () => {
    let release!: () => void;
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => {
      entered = r;
    });
    server = new WebhookServer({ port: 0, certDir: dir }).register(
      validator(Foo, {
        create: async () => {
          entered();
          await new Promise<void>((r) => {
            release = r;
          });
          return { warnings: ['slow'] };
        },
      }),
    );
    await server.listen();
    const answer = post(server, '/validate-samplecontroller-example-com-v1-foo', review(fooV1(1)));
    await inHandler;
    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    expect(server.started).toBe(false);
    release();
    expect((await answer).json.response).toMatchObject({ allowed: true, warnings: ['slow'] });
    await closing;
    expect(closed).toBe(true);
  });

  it('answers ConversionReviews at /convert via the hub', async () => {
    server = new WebhookServer({ port: 0, certDir: dir }).register(fooConversion());
    await server.listen();
    const r = await post(server, '/convert', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid: 'c1',
        desiredAPIVersion: 'samplecontroller.example.com/v1alpha1',
        objects: [fooV1(3), fooV1(4)],
      },
    });
    expect(r.json).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'c1',
        result: { status: 'Success' },
        convertedObjects: [
          {
            apiVersion: 'samplecontroller.example.com/v1alpha1',
            kind: 'Foo',
            metadata: fooV1().metadata,
            spec: { size: 3 },
          },
          {
            apiVersion: 'samplecontroller.example.com/v1alpha1',
            kind: 'Foo',
            metadata: fooV1().metadata,
            spec: { size: 4 },
          },
        ],
      },
    });
    const bad = await post(server, '/convert', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
    });
    expect(bad.status).toBe(400);
  });

  it('answers a large ConversionReview whole, non-ASCII included (its length in UTF-8 bytes)', async () => {
    server = new WebhookServer({ port: 0, certDir: dir }).register(fooConversion());
    await server.listen();
    // Well over the size from which the answer is encoded before it is sent.
    const objects = Array.from({ length: 2000 }, (_, n) => ({
      ...fooV1(n),
      metadata: { name: `f${n}`, namespace: 'default', annotations: { note: 'größe 😀 '.repeat(4) } },
    }));
    const r = await post(server, '/convert', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'big', desiredAPIVersion: 'samplecontroller.example.com/v1alpha1', objects },
    });
    expect(r.status).toBe(200);
    expect(r.json.response.convertedObjects).toHaveLength(2000);
    expect(r.json.response.convertedObjects[1999]).toEqual({
      apiVersion: 'samplecontroller.example.com/v1alpha1',
      kind: 'Foo',
      metadata: objects[1999]!.metadata,
      spec: { size: 1999 },
    });
  });

  it('answers a body that is not JSON with the AdmissionReview error, and one over the limit with 413', async () => {
    server = new WebhookServer({ port: 0, certDir: dir, maxRequestBytes: 4096 }).register(validator(Foo, {}));
    await server.listen();
    const path = '/validate-samplecontroller-example-com-v1-foo';
    const broken = await postRaw(server, path, '{"apiVersion": "admission.k8s.io/v1", "request": {');
    expect(broken.status).toBe(200);
    expect(broken.json).toMatchObject({
      kind: 'AdmissionReview',
      response: { uid: '', allowed: false, status: { code: 400 } },
    });
    const huge = await postRaw(server, path, JSON.stringify(review({ ...fooV1(1), pad: 'x'.repeat(5000) })));
    expect(huge.status).toBe(413);
    // The server still answers on new connections.
    expect((await post(server, path, review(fooV1(1)))).json.response.allowed).toBe(true);
  });
});

/** POSTs `text` as it is (not necessarily JSON), as application/json. */
function postRaw(server: WebhookServer, path: string, text: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${server.url}${path}`,
      { method: 'POST', ca: server.caBundle, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, json: body.startsWith('{') ? JSON.parse(body) : body });
        });
      },
    );
    // A 413 may close the connection while the body is still going out.
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' ? undefined : reject(err)));
    req.end(text);
  });
}
