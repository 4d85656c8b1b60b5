/**
 * A real HTTPS admission webhook server for tests: a self-signed CA made in the test, a serving
 * certificate for 127.0.0.1 and `hook.webhooks.svc`, and per-path handlers that see each
 * AdmissionReview and answer it (or answer garbage, or never).
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, issueServingCertificate } from '../src/auth/pki.js';

/** What a handler answers: a review response's fields, or a raw body / status, or nothing at all. */
export type HookAnswer =
  | { response: Record<string, unknown>; apiVersion?: string; kind?: string }
  | { raw: string; status?: number }
  | { never: true };

export type HookHandler = (review: any) => HookAnswer;

export interface WebhookServer {
  port: number;
  /** Base64 PEM of the CA, for `caBundle`. */
  caBundle: string;
  /** `https://127.0.0.1:<port><path>` */
  url(path: string): string;
  /** The reviews received on `path`, in order. */
  received(path: string): any[];
  handle(path: string, handler: HookHandler): void;
  close(): Promise<void>;
}

/** Allows, with a response's extra fields (patch, warnings, …). */
export const allow =
  (extra: Record<string, unknown> = {}): HookHandler =>
  (review) => ({ response: { uid: review.request.uid, allowed: true, ...extra } });

/** A JSONPatch answer. */
export const patch =
  (ops: unknown[] | ((review: any) => unknown[]), extra: Record<string, unknown> = {}): HookHandler =>
  (review) => ({
    response: {
      uid: review.request.uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(typeof ops === 'function' ? ops(review) : ops)).toString('base64'),
      ...extra,
    },
  });

/** Denies with `status`. */
export const deny =
  (status: Record<string, unknown>): HookHandler =>
  (review) => ({ response: { uid: review.request.uid, allowed: false, status } });

export async function startWebhookServer(): Promise<WebhookServer> {
  const ca = await createCertificateAuthority('webhook-test-ca');
  const cert = await issueServingCertificate(ca, ['127.0.0.1', 'hook.webhooks.svc']);
  const handlers = new Map<string, HookHandler>();
  const seen = new Map<string, any[]>();
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      seen.set(path, [...(seen.get(path) ?? []), { ...review, query: (req.url ?? '').split('?')[1] }]);
      const handler = handlers.get(path) ?? allow();
      const answer = handler(review);
      if ('never' in answer) return;
      res.setHeader('Content-Type', 'application/json');
      if ('raw' in answer) {
        res.statusCode = answer.status ?? 200;
        res.end(answer.raw);
        return;
      }
      res.end(
        JSON.stringify({
          apiVersion: answer.apiVersion ?? 'admission.k8s.io/v1',
          kind: answer.kind ?? 'AdmissionReview',
          response: answer.response,
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    caBundle: Buffer.from(ca.cert).toString('base64'),
    url: (path) => `https://127.0.0.1:${port}${path}`,
    received: (path) => seen.get(path) ?? [],
    handle: (path, handler) => handlers.set(path, handler),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
