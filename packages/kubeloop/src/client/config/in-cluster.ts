/**
 * In-cluster configuration: a process running in a pod reaches the API server through the
 * `kubernetes` Service (`KUBERNETES_SERVICE_HOST`/`PORT`) with the pod's service-account token,
 * CA and namespace, mounted under `/var/run/secrets/kubernetes.io/serviceaccount`.
 *
 * A pod that kubeloop's local control plane runs as a process on this machine has no mount
 * namespace: its kubelet writes the pod's volumes under a directory of its own, the container's
 * root, and names it in `KUBELOOP_ROOT`. A path `/p` of the container is then `$KUBELOOP_ROOT/p`,
 * which is where the token, CA and namespace are read from.
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ConfigError, describeFsError } from './errors.js';
import { checkCertificates } from './pem.js';
import type { ConnectionConfig } from './types.js';

/** Where the kubelet mounts the service account's token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The environment variable naming the container's root directory of a process-backed pod of
 * kubeloop's local control plane: its volumes are mounted under it (`$KUBELOOP_ROOT/var/run/...`).
 */
export const CONTAINER_ROOT_ENV = 'KUBELOOP_ROOT';

/** Options of {@link inClusterConfig}; the defaults are what a pod sees. */
export interface InClusterOptions {
  /** Environment to read `KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT` and `POD_NAMESPACE` from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Directory of `token`, `ca.crt` and `namespace` (default {@link SERVICE_ACCOUNT_DIR}, under
   * `$KUBELOOP_ROOT` when that is set: see {@link CONTAINER_ROOT_ENV}).
   */
  serviceAccountDir?: string;
}

/** True when the environment looks like a pod's (the service host and port are set). */
export function isInCluster(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT);
}

/**
 * The configuration of a pod: server from `KUBERNETES_SERVICE_HOST`/`PORT`, the projected token
 * as a `tokenFile` (kubelet rotates it; the client re-reads it when it changes), the CA from
 * `ca.crt`, and the namespace from `POD_NAMESPACE` or the `namespace` file (else `default`).
 *
 * @example
 * ```ts
 * const client = new Client(await inClusterConfig());
 * ```
 */
export async function inClusterConfig(options: InClusterOptions = {}): Promise<ConnectionConfig> {
  const env = options.env ?? process.env;
  const root = env[CONTAINER_ROOT_ENV];
  const dir = options.serviceAccountDir ?? (root ? join(root, SERVICE_ACCOUNT_DIR) : SERVICE_ACCOUNT_DIR);
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new ConfigError(
      'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
      { field: !host ? 'KUBERNETES_SERVICE_HOST' : 'KUBERNETES_SERVICE_PORT' },
    );
  }
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new ConfigError(`${JSON.stringify(port)} is not a port number`, {
      field: 'KUBERNETES_SERVICE_PORT',
    });
  }
  const tokenFile = join(dir, 'token');
  const caFile = join(dir, 'ca.crt');
  const read = async (file: string, what: string) => {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new ConfigError(
        `cannot read the service account ${what}: ${describeFsError(err)}`,
        { file },
        err,
      );
    }
  };
  if ((await read(tokenFile, 'token')).trim() === '') {
    throw new ConfigError('the service account token is empty', { file: tokenFile });
  }
  const caData = checkCertificates(
    await read(caFile, 'CA certificate'),
    { file: caFile },
    'the service account CA',
  );
  let namespace = env.POD_NAMESPACE || undefined;
  if (!namespace) {
    try {
      namespace = (await readFile(join(dir, 'namespace'), 'utf8')).trim() || undefined;
    } catch {
      // No namespace file (e.g. automountServiceAccountToken with a custom volume): default, as client-go does.
    }
  }
  const hostPart = isIP(host) === 6 ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    caData,
    tokenFile,
    namespace: namespace ?? 'default',
    origins: {
      server: { field: 'KUBERNETES_SERVICE_HOST' },
      tokenFile: { file: tokenFile },
      caData: { file: caFile },
    },
  };
}
