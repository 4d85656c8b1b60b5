/**
 * What `kubeloop run` does with the project's webhooks, said plainly. A cluster's API server
 * calls webhooks over HTTPS with a CA it trusts, and cannot reach a process on this machine: by
 * default they are off (`ENABLE_WEBHOOKS=false`, as kubebuilder's `make run` advice) and the CRDs
 * it installs convert with `None`; with `--webhook-url`, the operator serves them on this machine
 * with a local CA and they are registered with that URL (a tunnel to this machine), then deleted
 * when it stops.
 */
import { Client, type ConnectionConfig, type CustomResourceDefinition } from 'kubeloop/client';
import {
  DEV_CERT_DIR,
  type DevWebhooks,
  prepareDevWebhooks,
  projectHasWebhooks,
  withoutWebhookConversion,
} from './dev-webhooks.js';
import type { OperatorProcess } from './project.js';

/** The operator's webhook setup for one `kubeloop run`. */
export interface RunWebhooks {
  /** The CRDs as `--install` applies them. */
  crds(crds: readonly CustomResourceDefinition[]): CustomResourceDefinition[];
  /** Extra arguments and environment of the operator. */
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** With `--webhook-url`: registers the configurations once the operator serves them. */
  register(connection: ConnectionConfig, op: OperatorProcess): Promise<void>;
  unregister(connection: ConnectionConfig): Promise<void>;
}

const nothing: RunWebhooks = {
  crds: (c) => [...c],
  args: [],
  env: {},
  register: async () => undefined,
  unregister: async () => undefined,
};

/** The `--webhook-port` among the operator's arguments, if given. */
function portIn(args: readonly string[]): number | undefined {
  for (const [i, a] of args.entries()) {
    const value = a.startsWith('--webhook-port=')
      ? a.slice(15)
      : a === '--webhook-port'
        ? args[i + 1]
        : undefined;
    if (value !== undefined && Number.isInteger(Number(value))) return Number(value);
  }
  return undefined;
}

/** Decides, and prints, what happens to the project's webhooks in `kubeloop run`. */
export async function runWebhooks(
  dir: string,
  crds: readonly CustomResourceDefinition[],
  o: { url?: string; args: readonly string[]; out: (line: string) => void },
): Promise<RunWebhooks> {
  if (!(await projectHasWebhooks(dir, crds))) {
    if (o.url !== undefined)
      o.out('--webhook-url: the project has no webhooks (config/webhook, a converted CRD)');
    return nothing;
  }
  if (o.url === undefined) {
    if (process.env.ENABLE_WEBHOOKS !== undefined) {
      o.out(`webhooks: ENABLE_WEBHOOKS=${process.env.ENABLE_WEBHOOKS} as set in the environment`);
      return nothing;
    }
    o.out(
      "webhooks: off (ENABLE_WEBHOOKS=false). A cluster's API server cannot call a webhook server on this machine, so the operator runs without it and --install sets the CRDs' conversion to None. To have them: `kubeloop dev` (local control plane, nothing to set up), `kubeloop run --webhook-url https://<host>` (a URL reaching this machine's port 9443), or deploy the operator with cert-manager (`kubeloop deploy`).",
    );
    return { ...nothing, crds: withoutWebhookConversion, env: { ENABLE_WEBHOOKS: 'false' } };
  }
  let url: URL;
  try {
    url = new URL(o.url);
  } catch {
    throw new Error(`--webhook-url must be an https URL, got ${JSON.stringify(o.url)}`);
  }
  if (url.protocol !== 'https:')
    throw new Error(
      `--webhook-url must be an https URL (the API server calls webhooks over TLS), got ${o.url}`,
    );
  const port = portIn(o.args);
  const hooks = (await prepareDevWebhooks(dir, crds, {
    url: url.origin,
    ...(port !== undefined && { port }),
  })) as DevWebhooks;
  o.out(
    `webhooks: ${hooks.summary}, served on this machine's port ${port ?? 9443} and registered with ${url.origin} (its CA: ${DEV_CERT_DIR}/ca.crt)`,
  );
  // --webhook-port given by the user wins over ours (the last flag is the one read).
  const args = hooks.args.filter((a) => !(port !== undefined && a.startsWith('--webhook-port=')));
  return {
    crds: (c) => hooks.crds(c),
    args,
    env: { ENABLE_WEBHOOKS: 'true' },
    async register(connection, op) {
      const client = new Client(connection);
      try {
        if (await hooks.register(client, op)) o.out(`registered ${hooks.summary} with ${url.origin}`);
      } finally {
        await client.close();
      }
    },
    async unregister(connection) {
      const client = new Client(connection);
      try {
        await hooks.unregister(client);
      } finally {
        await client.close();
      }
    },
  };
}
