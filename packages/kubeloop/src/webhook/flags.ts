/**
 * The webhook server's command-line flags, as a kubebuilder `main.go` declares them
 * (`--webhook-cert-path`, `--webhook-cert-name`, `--webhook-cert-key`) plus the port and the
 * address to bind, and `ENABLE_WEBHOOKS=false` to run without webhooks.
 */
import { isAbsolute, join } from 'node:path';
import { CONTAINER_ROOT_ENV } from '../client/config/in-cluster.js';
import { DEFAULT_CERT_DIR } from './defaults.js';
import type { WebhookServerOptions } from './server.js';

/** What {@link webhookFlags} read, and the arguments it left for `managerFlags`. */
export interface WebhookFlags {
  /** False when `ENABLE_WEBHOOKS=false` (kubebuilder's switch for running without webhooks). */
  readonly enabled: boolean;
  readonly options: WebhookServerOptions;
  /** Every other argument, in order (hand them to `managerFlags`). */
  readonly rest: string[];
}

const NAMES = new Set([
  'webhook-port',
  'webhook-host',
  'webhook-cert-path',
  'webhook-cert-name',
  'webhook-cert-key',
]);

/**
 * Reads `--webhook-port` (default 9443), `--webhook-host` (default 127.0.0.1),
 * `--webhook-cert-path` (default `/tmp/k8s-webhook-server/serving-certs`), `--webhook-cert-name`
 * (`tls.crt`) and `--webhook-cert-key` (`tls.key`), as `--name=value` or `--name value`. In a
 * process-backed pod of kubeloop's local control plane (`$KUBELOOP_ROOT` set) an absolute
 * certificate directory is read under that root, where the pod's volumes are mounted.
 *
 * @throws TypeError for a flag without a value or a port that is not one.
 * @example
 * ```ts
 * const webhooks = webhookFlags(process.argv.slice(2));
 * const manager = new Manager({ ...managerFlags(webhooks.rest, { leaderElectionId: 'foo' }) });
 * if (webhooks.enabled) new WebhookServer(webhooks.options).register(fooDefaulter).setupWithManager(manager);
 * ```
 */
export function webhookFlags(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): WebhookFlags {
  const o: { -readonly [K in keyof WebhookServerOptions]: WebhookServerOptions[K] } = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = (eq < 0 ? arg : arg.slice(0, eq)).replace(/^--?/, '');
    if (!arg.startsWith('-') || !NAMES.has(name)) {
      rest.push(arg);
      continue;
    }
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new TypeError(`flag needs an argument: ${arg}`);
      value = next;
      i++;
    }
    switch (name) {
      case 'webhook-port': {
        const port = Number(value);
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw new TypeError(`--webhook-port must be a port number, got ${JSON.stringify(value)}`);
        o.port = port;
        break;
      }
      case 'webhook-host':
        o.host = value;
        break;
      case 'webhook-cert-path':
        o.certDir = value;
        break;
      case 'webhook-cert-name':
        o.certName = value;
        break;
      default:
        o.keyName = value;
    }
  }
  // In a process-backed pod of the local control plane the container's paths live under
  // $KUBELOOP_ROOT (where the kubelet mounts the certificate Secret), as the in-cluster config reads them.
  const root = env[CONTAINER_ROOT_ENV];
  if (root) {
    const dir = o.certDir ?? DEFAULT_CERT_DIR;
    if (isAbsolute(dir)) o.certDir = join(root, dir);
  }
  return { enabled: env.ENABLE_WEBHOOKS !== 'false', options: o, rest };
}
