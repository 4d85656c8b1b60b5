/**
 * Webhooks in `kubeloop dev`, with no certificate step for the user: a local CA and a serving
 * certificate for 127.0.0.1 kept in the project's `.kubeloop/webhook-certs/` (git-ignored), the
 * operator started with `--webhook-port/--webhook-host/--webhook-cert-path` pointing at them, and
 * the project's configurations (config/webhook/manifests.yaml) and CRD conversions registered on
 * the local control plane with a URL client config and that CA — again after every restart,
 * and deleted on exit.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, isIP } from 'node:net';
import { dirname, join } from 'node:path';
import {
  type Client,
  type CustomResourceDefinition,
  isNotFound,
  type KubeObject,
  MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration,
} from 'kubeloop/client';
import { createCertificateAuthority, issueServingCertificate } from 'kubeloop/pki';
import { parse, parseAllDocuments } from 'yaml';
import { FIELD_MANAGER, type OperatorProcess } from './project.js';

/** Where dev keeps the CA and serving certificate, relative to the project. */
export const DEV_CERT_DIR = '.kubeloop/webhook-certs';

const CONFIGURATION_KINDS = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);

type Configuration = KubeObject & {
  webhooks?: Array<{ clientConfig?: { url?: string; service?: { path?: string }; caBundle?: string } }>;
};

/** Whether a CRD asks for a conversion webhook. */
const convertsByWebhook = (crd: CustomResourceDefinition) => crd.spec.conversion?.strategy === 'Webhook';

/** The CRDs with a webhook conversion set to `None` (`ENABLE_WEBHOOKS=false`: nothing would answer it). */
export function withoutWebhookConversion(
  crds: readonly CustomResourceDefinition[],
): CustomResourceDefinition[] {
  return crds.map((crd) =>
    convertsByWebhook(crd) ? { ...crd, spec: { ...crd.spec, conversion: { strategy: 'None' } } } : crd,
  );
}

/** The admission configurations of config/webhook/manifests.yaml, if the project has any. */
async function readConfigurations(dir: string): Promise<Configuration[]> {
  const file = join(dir, 'config/webhook/manifests.yaml');
  if (!existsSync(file)) return [];
  return parseAllDocuments(await readFile(file, 'utf8'))
    .map((d) => d.toJS() as Configuration | null)
    .filter((o): o is Configuration => !!o && CONFIGURATION_KINDS.has(o.kind ?? ''));
}

/** config/default's `namePrefix`, so the registered names are the ones a cluster install has. */
async function namePrefix(dir: string): Promise<string> {
  const file = join(dir, 'config/default/kustomization.yaml');
  if (!existsSync(file)) return '';
  const k = parse(await readFile(file, 'utf8')) as { namePrefix?: unknown } | null;
  return typeof k?.namePrefix === 'string' ? k.namePrefix : '';
}

/**
 * The CA and serving certificate in `certDir`: reused while they are valid for another day (so
 * what is registered stays valid across restarts), made anew otherwise.
 */
export async function ensureDevCertificates(
  certDir: string,
  hosts: readonly string[] = ['127.0.0.1', 'localhost'],
  retried = false,
): Promise<{ ca: string; created: boolean }> {
  const files = {
    ca: join(certDir, 'ca.crt'),
    cert: join(certDir, 'tls.crt'),
    key: join(certDir, 'tls.key'),
  };
  const stale = existsSync(certDir);
  if (existsSync(files.ca) && existsSync(files.cert) && existsSync(files.key)) {
    try {
      const [ca, cert] = await Promise.all([readFile(files.ca, 'utf8'), readFile(files.cert, 'utf8')]);
      const x = new X509Certificate(cert);
      const covers = hosts.every((h) => (isIP(h) ? x.checkIP(h) : x.checkHost(h)) !== undefined);
      const fresh = new Date(x.validTo).getTime() > Date.now() + 86_400_000;
      if (covers && fresh && x.verify(new X509Certificate(ca).publicKey)) return { ca, created: false };
    } catch {
      // Unreadable or mismatched: made anew below.
    }
  }
  const ca = createCertificateAuthority('kubeloop-dev-webhook-ca');
  const serving = issueServingCertificate(ca, hosts, 'kubeloop-dev-webhook');
  // Written aside and renamed into place: two devs of one project never mix two CAs' files.
  await mkdir(dirname(certDir), { recursive: true });
  const staged = await mkdtemp(join(dirname(certDir), '.webhook-certs-'));
  await writeFile(join(staged, 'ca.crt'), ca.cert, { mode: 0o644 });
  await writeFile(join(staged, 'tls.crt'), serving.cert, { mode: 0o644 });
  await writeFile(join(staged, 'tls.key'), serving.key, { mode: 0o600 });
  // Only a set found stale is removed; a folder that appeared meanwhile is another dev's.
  if (stale) await rm(certDir, { recursive: true, force: true });
  try {
    await rename(staged, certDir);
  } catch (err) {
    // Another dev put its set in place first: that one is used.
    await rm(staged, { recursive: true, force: true });
    if (!retried && existsSync(files.key)) return ensureDevCertificates(certDir, hosts, true);
    throw err;
  }
  return { ca: ca.cert, created: true };
}

/** A free TCP port on 127.0.0.1 (the operator binds it right after). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Resolves true once something accepts connections on the port, false if `exited` settles first. */
async function waitListening(port: number, exited: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (!gone && Date.now() < deadline) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** The project's webhooks as `kubeloop dev` runs them; see the module docs. */
export interface DevWebhooks {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  /** The operator's webhook flags. */
  readonly args: readonly string[];
  /** What was found, for the start-up lines. */
  readonly summary: string;
  /** The CRDs with their conversion webhook pointed at the operator (others unchanged). */
  crds(crds: readonly CustomResourceDefinition[]): CustomResourceDefinition[];
  /**
   * Waits for the operator's webhook server to listen, then applies the configurations pointed at
   * it. Resolves false (nothing registered) when the operator exits or never listens.
   */
  register(client: Client, operator: OperatorProcess): Promise<boolean>;
  /** Deletes the configurations registered. */
  unregister(client: Client): Promise<void>;
}

/** Whether the project has webhooks: config/webhook/manifests.yaml, or a CRD converted by a webhook. */
export async function projectHasWebhooks(
  dir: string,
  crds: readonly CustomResourceDefinition[],
): Promise<boolean> {
  return crds.some(convertsByWebhook) || (await readConfigurations(dir)).length > 0;
}

/** Where the API server reaches the operator's webhook server (`kubeloop run --webhook-url`). */
export interface PublicWebhookUrl {
  /** `https://host[:port]` the API server calls (a tunnel to this machine's `port`). */
  readonly url: string;
  /** The local port the operator serves on (default 9443). */
  readonly port?: number;
}

/**
 * The project's webhooks for dev, or undefined when it has none (no config/webhook/manifests.yaml
 * and no CRD with `conversion.strategy: Webhook`). Makes the certificates and picks the port; with
 * `publicUrl`, the configurations name that URL instead of 127.0.0.1 (its host is in the certificate).
 */
export async function prepareDevWebhooks(
  dir: string,
  crds: readonly CustomResourceDefinition[],
  publicUrl?: PublicWebhookUrl,
): Promise<DevWebhooks | undefined> {
  const converted = crds.filter(convertsByWebhook);
  if (!(await projectHasWebhooks(dir, crds))) return undefined;
  const certDir = join(dir, DEV_CERT_DIR);
  const publicHost = publicUrl ? new URL(publicUrl.url).hostname.replace(/^\[|\]$/g, '') : undefined;
  const hosts = [...new Set(['127.0.0.1', 'localhost', ...(publicHost ? [publicHost] : [])])];
  const { ca } = await ensureDevCertificates(certDir, hosts);
  const caBundle = Buffer.from(ca).toString('base64');
  const port = publicUrl ? (publicUrl.port ?? 9443) : await freePort();
  const url = publicUrl ? publicUrl.url.replace(/\/$/, '') : `https://127.0.0.1:${port}`;
  const prefix = await namePrefix(dir);
  let registered: Configuration[] = [];
  const configurations = async () =>
    (await readConfigurations(dir)).map(
      (c): Configuration => ({
        ...c,
        metadata: { ...c.metadata, name: `${prefix}${c.metadata?.name ?? ''}` },
        webhooks: (c.webhooks ?? []).map((w) => ({
          ...w,
          clientConfig: { url: `${url}${w.clientConfig?.service?.path ?? '/'}`, caBundle },
        })),
      }),
    );
  const count = (await configurations()).reduce((n, c) => n + (c.webhooks?.length ?? 0), 0);
  return {
    url,
    args: [
      `--webhook-port=${port}`,
      `--webhook-host=${publicUrl ? '0.0.0.0' : '127.0.0.1'}`,
      `--webhook-cert-path=${certDir}`,
    ],
    summary: [
      ...(count > 0 ? [`${count} admission webhook(s)`] : []),
      ...(converted.length > 0
        ? [`the conversion of ${converted.map((c) => c.metadata?.name).join(', ')}`]
        : []),
    ].join(' and '),
    crds: (list) =>
      list.map((crd) => {
        if (!convertsByWebhook(crd)) return crd;
        const webhook = crd.spec.conversion?.webhook;
        const path = webhook?.clientConfig?.service?.path ?? '/convert';
        return {
          ...crd,
          spec: {
            ...crd.spec,
            conversion: {
              strategy: 'Webhook',
              webhook: {
                conversionReviewVersions: webhook?.conversionReviewVersions ?? ['v1'],
                clientConfig: { url: `${url}${path}`, caBundle },
              },
            },
          },
        };
      }),
    async register(client, operator) {
      if (!(await waitListening(port, operator.exited, 60_000))) return false;
      const next = await configurations();
      for (const c of next) await client.apply(c, { fieldManager: FIELD_MANAGER, force: true });
      // A configuration gone from the regenerated manifests is not left behind.
      const names = new Set(next.map((c) => `${c.kind}/${c.metadata?.name}`));
      for (const c of registered)
        if (!names.has(`${c.kind}/${c.metadata?.name}`)) await deleteConfiguration(client, c);
      registered = next;
      return true;
    },
    async unregister(client) {
      for (const c of registered) await deleteConfiguration(client, c);
      registered = [];
    },
  };
}

async function deleteConfiguration(client: Client, c: Configuration): Promise<void> {
  const name = c.metadata?.name ?? '';
  const deleted =
    c.kind === 'MutatingWebhookConfiguration'
      ? client.api(MutatingWebhookConfiguration).delete(name)
      : client.api(ValidatingWebhookConfiguration).delete(name);
  await deleted.catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
}
