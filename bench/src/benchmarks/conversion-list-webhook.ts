/**
 * The conversion webhook of the conversion-list benchmark: the SDK's WebhookServer in a process of
 * its own (as an operator's webhook is), or a minimal node:https handler in the bench's process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, issueServingCertificate } from '@kubeloop/server/testing';
import type { KubeObject } from 'kubeloop/client';
import { type ConversionWebhook, ensureCertificates, WebhookServer } from 'kubeloop/webhook';
import { cpuMs } from '../lib/proc.js';

/** The benchmark's API group. */
export const GROUP = 'conversion.bench.kubeloop.dev';

// biome-ignore lint/suspicious/noExplicitAny: JSON objects of the API and the webhook, read field by field.
type Json = Record<string, any>;

/** The webhook's conversion: v1 `spec.endpoint: "host:port"` ⇄ v2 `spec.host` + `spec.port`. */
function convert(obj: Json, desired: string): Json {
  const spec = obj.spec;
  if (desired.endsWith('/v2') && typeof spec?.endpoint === 'string') {
    const at = spec.endpoint.lastIndexOf(':');
    spec.host = spec.endpoint.slice(0, at);
    spec.port = Number(spec.endpoint.slice(at + 1));
    delete spec.endpoint;
  } else if (desired.endsWith('/v1') && spec && 'host' in spec) {
    spec.endpoint = `${spec.host}:${spec.port}`;
    delete spec.host;
    delete spec.port;
  }
  obj.apiVersion = desired;
  return obj;
}

/** A running conversion webhook: its URL and CA, and what it spent on the reviews so far. */
export interface Webhook {
  url: string;
  caBundle: string;
  /** Reviews answered so far. */
  reviews(): number;
  /** Its CPU so far, in ms: the whole child process, or the review handler's time in this one. */
  cpuMs(): number;
  close(): Promise<void>;
}

/** The operator's side: the SDK's webhook server with this conversion, as a user's operator runs it. */
const benchConversion: ConversionWebhook = {
  group: GROUP,
  kind: 'Service',
  hub: 'v1',
  versions: ['v1', 'v2'],
  convert: (obj, desired) => convert(obj as Json, desired) as KubeObject,
};

/** The child of `--webhook=process`: the SDK's WebhookServer on `certDir`, its port written to stdout. */
export async function serveWebhook(certDir: string): Promise<void> {
  const server = new WebhookServer({ port: 0, certDir }).register(benchConversion);
  await server.listen();
  // An orderly exit on SIGTERM, so that --cpu-prof writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
}

/**
 * Starts the conversion webhook in its own process (the SDK's WebhookServer, as an operator is its
 * own process), whose CPU is read from /proc: `script` is run with `--serve-webhook --cert-dir=DIR`
 * and calls {@link serveWebhook}.
 */
export async function startWebhookProcess(script: string, cpuProf: string | undefined): Promise<Webhook> {
  const certDir = mkdtempSync(join(tmpdir(), 'kubeloop-conversion-hook-'));
  const { caBundle } = await ensureCertificates({ dir: certDir }, ['127.0.0.1']);
  const child = spawn(
    process.execPath,
    [
      ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : []),
      script,
      '--serve-webhook',
      `--cert-dir=${certDir}`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (c: Buffer) => {
      text += c.toString();
      const nl = text.indexOf('\n');
      if (nl >= 0) resolve((JSON.parse(text.slice(0, nl)) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`the webhook process exited with ${code}`)));
  });
  const pid = child.pid!;
  return {
    url: `https://127.0.0.1:${port}/convert`,
    caBundle: Buffer.from(caBundle).toString('base64'),
    // Not counted by the child; the cold runs count reviews by the objects converted.
    reviews: () => Number.NaN,
    cpuMs: () => cpuMs(pid),
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(certDir, { recursive: true, force: true });
    },
  };
}

/** Starts the conversion webhook in this process (`--webhook=in-process`), a minimal node:https handler. */
export async function startWebhookInProcess(): Promise<Webhook> {
  const ca = await createCertificateAuthority('conversion-bench-ca');
  const cert = await issueServingCertificate(ca, ['127.0.0.1'], 'conversion-bench-webhook');
  let spent = 0;
  let reviews = 0;
  const server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const t0 = process.hrtime.bigint();
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const { uid, desiredAPIVersion, objects } = review.request;
      const body = JSON.stringify({
        apiVersion: review.apiVersion,
        kind: 'ConversionReview',
        response: {
          uid,
          convertedObjects: (objects as Json[]).map((o) => convert(o, desiredAPIVersion)),
          result: { status: 'Success' },
        },
      });
      spent += Number(process.hrtime.bigint() - t0) / 1e6;
      reviews++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/convert`,
    caBundle: Buffer.from(ca.cert).toString('base64'),
    reviews: () => reviews,
    cpuMs: () => spent,
    close: async () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
