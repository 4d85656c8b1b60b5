/**
 * A real HTTPS conversion webhook for tests (self-signed CA made here): converts `Foo` objects
 * between `v1` (`spec.hostPort: "host:port"`, `spec.replicas`) and `v2` (`spec.host`,
 * `spec.port`, `spec.size`), and can be told to answer in hostile ways.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, issueServingCertificate } from '../../src/auth/pki.js';

type Json = any;

/** How the webhook answers: correctly, or in one of the ways kube refuses. */
export type WebhookMode =
  | 'ok'
  | 'wrong-uid'
  | 'missing-object'
  | 'renamed'
  | 'garbage'
  | 'failure'
  | 'wrong-version'
  | 'labels'
  | 'v1beta1-answer';

/** Converts one object's spec to `desired` (`<group>/v1` or `<group>/v2`). */
export function convertFoo(obj: Json, desired: string): Json {
  const out = structuredClone(obj);
  const to = desired.slice(desired.indexOf('/') + 1);
  const spec = out.spec ?? {};
  if (to === 'v2' && 'hostPort' in spec) {
    const [host, port] = String(spec.hostPort).split(':');
    delete spec.hostPort;
    spec.host = host;
    spec.port = Number(port);
  }
  if (to === 'v1' && ('host' in spec || 'port' in spec)) {
    spec.hostPort = `${spec.host ?? ''}:${spec.port ?? ''}`;
    delete spec.host;
    delete spec.port;
  }
  if (to === 'v2' && 'replicas' in spec) {
    spec.size = spec.replicas;
    delete spec.replicas;
  }
  if (to === 'v1' && 'size' in spec) {
    spec.replicas = spec.size;
    delete spec.size;
  }
  out.apiVersion = desired;
  return out;
}

export interface ConversionWebhookServer {
  url: string;
  port: number;
  /** base64 PEM of the CA that signed the server's certificate. */
  caBundle: string;
  /** Every review received, in order. */
  reviews: Json[];
  mode: WebhookMode;
  close(): Promise<void>;
}

export async function startConversionWebhook(): Promise<ConversionWebhookServer> {
  const ca = await createCertificateAuthority('conversion-webhook-test-ca');
  // Also the name a Service `conv-hook` in `default` is called by.
  const serving = await issueServingCertificate(
    ca,
    ['127.0.0.1', 'localhost', 'conv-hook.default.svc'],
    'conversion-webhook',
  );
  const state = { mode: 'ok' as WebhookMode };
  const reviews: Json[] = [];
  const server: Server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      reviews.push(review);
      const { uid, desiredAPIVersion, objects } = review.request;
      let converted = (objects as Json[]).map((o) => convertFoo(o, desiredAPIVersion));
      let answerUid = uid;
      let result: Json = { status: 'Success' };
      let apiVersion = review.apiVersion;
      switch (state.mode) {
        case 'garbage':
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end('this is not json');
          return;
        case 'wrong-uid':
          answerUid = 'not-the-uid';
          break;
        case 'missing-object':
          converted = converted.slice(1);
          break;
        case 'renamed':
          converted = converted.map((o) => ({ ...o, metadata: { ...o.metadata, name: 'other' } }));
          break;
        case 'failure':
          result = { status: 'Failure', message: 'cannot convert this one' };
          converted = [];
          break;
        case 'wrong-version':
          converted = (objects as Json[]).map((o) => structuredClone(o));
          break;
        case 'labels':
          converted = converted.map((o) => ({
            ...o,
            metadata: {
              ...o.metadata,
              labels: { ...o.metadata.labels, 'converted-to': desiredAPIVersion.split('/')[1] },
              // Changes to other metadata are dropped: the original's metadata is kept.
              generation: 42,
            },
          }));
          break;
        case 'v1beta1-answer':
          apiVersion = 'apiextensions.k8s.io/v1beta1';
          break;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion,
          kind: 'ConversionReview',
          response: { uid: answerUid, convertedObjects: converted, result },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}/convert`,
    port,
    caBundle: Buffer.from(ca.cert).toString('base64'),
    reviews,
    get mode() {
      return state.mode;
    },
    set mode(m: WebhookMode) {
      state.mode = m;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
