/**
 * dev's webhook registration against the local control plane, with a stand-in for the operator
 * (a TLS server with dev's certificate): registered with a URL and the CA once it serves,
 * registered again after a restart, deleted on exit; the certificates are kept and reused.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestEnv, type TestEnv } from '@kubeloop/server/testing';
import { Client, isNotFound, ValidatingWebhookConfiguration } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_CERT_DIR, ensureDevCertificates, prepareDevWebhooks } from './dev-webhooks.js';
import type { OperatorProcess } from './project.js';
import { runWebhooks } from './run-webhooks.js';

let env: TestEnv;
let client: Client;
let dir: string;

const configuration = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, path: /validate-example-com-v1-bar}
  failurePolicy: Fail
  name: vbar-v1.kb.io
  rules:
  - {apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [bars]}
  sideEffects: None
`;

beforeAll(async () => {
  env = await startTestEnv();
  client = new Client(env.clientConfig);
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-dev-webhooks-'));
  await mkdir(join(dir, 'config/webhook'), { recursive: true });
  await mkdir(join(dir, 'config/default'), { recursive: true });
  await writeFile(join(dir, 'config/webhook/manifests.yaml'), configuration);
  await writeFile(join(dir, 'config/default/kustomization.yaml'), 'namePrefix: bar-operator-\n');
});

afterAll(async () => {
  await client?.close();
  await env?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The operator as dev sees it: an HTTPS server on the port, with the certificate dev made. */
async function standIn(port: number): Promise<{ op: OperatorProcess; server: Server }> {
  const certDir = join(dir, DEV_CERT_DIR);
  const server = createServer({
    cert: await readFile(join(certDir, 'tls.crt')),
    key: await readFile(join(certDir, 'tls.key')),
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  let exit: (code: number) => void = () => undefined;
  const exited = new Promise<number>((resolve) => {
    exit = resolve;
  });
  const op = {
    child: undefined as never,
    exited,
    async stop() {
      await new Promise((r) => server.close(r));
      exit(0);
    },
  };
  return { op, server };
}

describe('kubeloop dev’s webhooks', () => {
  it('registers them with a URL and the CA once the operator serves, again after a restart, and deletes them on exit', async () => {
    const hooks = await prepareDevWebhooks(dir, []);
    expect(hooks?.summary).toBe('1 admission webhook(s)');
    const port = Number(new URL(hooks!.url).port);
    expect(hooks!.args).toEqual([
      `--webhook-port=${port}`,
      '--webhook-host=127.0.0.1',
      `--webhook-cert-path=${join(dir, DEV_CERT_DIR)}`,
    ]);
    const ca = await readFile(join(dir, DEV_CERT_DIR, 'ca.crt'), 'utf8');

    for (const round of [1, 2]) {
      const { op } = await standIn(port);
      expect(await hooks!.register(client, op)).toBe(true);
      const live = await client.get(
        ValidatingWebhookConfiguration,
        'bar-operator-validating-webhook-configuration',
      );
      expect(live.webhooks?.[0]?.clientConfig).toEqual({
        url: `https://127.0.0.1:${port}/validate-example-com-v1-bar`,
        caBundle: Buffer.from(ca).toString('base64'),
      });
      await op.stop();
      if (round === 1) continue;
      // An operator that exits without serving: nothing is registered, and dev is told so.
      const gone = { child: undefined as never, exited: Promise.resolve(1), stop: async () => undefined };
      expect(await hooks!.register(client, gone)).toBe(false);
    }
    await hooks!.unregister(client);
    const err = await client
      .get(ValidatingWebhookConfiguration, 'bar-operator-validating-webhook-configuration')
      .catch((e: unknown) => e);
    expect(isNotFound(err)).toBe(true);
  });

  it('keeps the certificates while they cover the hosts, and makes new ones for a new host', async () => {
    const certDir = join(dir, 'certs');
    const first = await ensureDevCertificates(certDir);
    expect(first.created).toBe(true);
    const again = await ensureDevCertificates(certDir);
    expect(again).toEqual({ ca: first.ca, created: false });
    const tunnel = await ensureDevCertificates(certDir, ['127.0.0.1', 'localhost', 'hooks.example.com']);
    expect(tunnel.created).toBe(true);
    const cert = new X509Certificate(await readFile(join(certDir, 'tls.crt')));
    expect(cert.checkHost('hooks.example.com')).toBe('hooks.example.com');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
  });
});

describe('kubeloop run’s webhooks', () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'bars.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Bar', plural: 'bars' },
      scope: 'Namespaced',
      versions: [],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { service: { name: 'webhook-service', namespace: 'system', path: '/convert' } },
          conversionReviewVersions: ['v1'],
        },
      },
    },
  } as never;

  it('are off against a cluster, with the reason, and the CRDs convert with None', async () => {
    const lines: string[] = [];
    const saved = process.env.ENABLE_WEBHOOKS;
    delete process.env.ENABLE_WEBHOOKS;
    try {
      const hooks = await runWebhooks(dir, [crd], { args: [], out: (l) => lines.push(l) });
      expect(hooks.env).toEqual({ ENABLE_WEBHOOKS: 'false' });
      expect(hooks.args).toEqual([]);
      expect(hooks.crds([crd])[0]?.spec.conversion).toEqual({ strategy: 'None' });
    } finally {
      if (saved !== undefined) process.env.ENABLE_WEBHOOKS = saved;
    }
    expect(lines[0]).toMatch(/^webhooks: off \(ENABLE_WEBHOOKS=false\)\. A cluster's API server cannot call/);
  });

  it('with --webhook-url, serve on this machine and register that URL, its host in the certificate', async () => {
    const lines: string[] = [];
    await expect(
      runWebhooks(dir, [crd], { url: 'http://x', args: [], out: () => undefined }),
    ).rejects.toThrow(/--webhook-url must be an https URL/);
    const hooks = await runWebhooks(dir, [crd], {
      url: 'https://hooks.example.com/',
      args: ['--webhook-port=9555'],
      out: (l) => lines.push(l),
    });
    expect(hooks.env).toEqual({ ENABLE_WEBHOOKS: 'true' });
    expect(hooks.args).toEqual(['--webhook-host=0.0.0.0', `--webhook-cert-path=${join(dir, DEV_CERT_DIR)}`]);
    expect(hooks.crds([crd])[0]?.spec.conversion?.webhook?.clientConfig?.url).toBe(
      'https://hooks.example.com/convert',
    );
    const cert = new X509Certificate(await readFile(join(dir, DEV_CERT_DIR, 'tls.crt')));
    expect(cert.checkHost('hooks.example.com')).toBe('hooks.example.com');
    expect(lines[0]).toContain(
      "served on this machine's port 9555 and registered with https://hooks.example.com",
    );
  });
});
