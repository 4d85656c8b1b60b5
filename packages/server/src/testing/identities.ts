/**
 * Clients of the test env that are not its admin: a ServiceAccount (a token from a
 * TokenRequest, as a pod gets one) or a user (a client certificate signed by the env's CA, as
 * kubeadm's users are). An operator's tests run it under such an identity to prove that the RBAC
 * it ships is enough — the admin token proves nothing, since the admin may do everything.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlane } from '../control-plane.js';
import type { KubeconfigFile } from './kubeconfig-file.js';

/**
 * Who a client of the test env authenticates as.
 *
 * - `{ serviceAccount: 'ns/name' }`: the ServiceAccount (created, with its namespace, when
 *   missing), by a bound token of a TokenRequest — `system:serviceaccount:ns:name`, in the groups
 *   `system:serviceaccounts`, `system:serviceaccounts:ns` and `system:authenticated`.
 * - `{ user, groups }`: a user of a client certificate (subject CN = user, O = groups) signed by
 *   the env's CA; the server adds `system:authenticated`.
 *
 * @example
 * ```ts
 * const operator: Identity = { serviceAccount: 'foo-system/foo-controller-manager' };
 * const alice: Identity = { user: 'alice', groups: ['developers'] };
 * ```
 */
export type Identity =
  | {
      /** `namespace/name` of the ServiceAccount. */
      serviceAccount: string;
      /** Lifetime of the token (default 3600 s, the TokenRequest default; at least 600). */
      expirationSeconds?: number;
      /** Audiences of the token (default: the API server's). */
      audiences?: readonly string[];
    }
  | { user: string; groups?: readonly string[] };

/**
 * A client configuration of one identity: what `new Client(config)` takes, with exactly one
 * credential (`token`, or `certData` and `keyData`).
 */
export interface IdentityClientConfig {
  server: string;
  /** PEM of the cluster CA. */
  caData: string;
  /** The bearer token of a ServiceAccount. */
  token?: string;
  /** PEM client certificate of a user. */
  certData?: string;
  /** PEM private key of the client certificate. */
  keyData?: string;
  /** Default namespace: the ServiceAccount's own (as in a pod), `default` for a user. */
  namespace: string;
  /** The username the server authenticates these credentials as. */
  username: string;
}

/** `ns/name` → its parts, or a TypeError naming the mistake. */
function parseServiceAccount(ref: string): { namespace: string; name: string } {
  const parts = ref.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1])
    throw new TypeError(`serviceAccount must be "namespace/name", got ${JSON.stringify(ref)}`);
  return { namespace: parts[0], name: parts[1] };
}

/** Creates an object unless it exists already (another test, or a test's own manifests, made it). */
async function ensure(create: () => Promise<unknown>): Promise<void> {
  const { isAlreadyExists } = await import('kubeloop/client');
  try {
    await create();
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/**
 * A client configuration of `identity` for the control plane `cp`: a ServiceAccount's token
 * (the ServiceAccount, and its namespace, are created when missing) or a user's client
 * certificate. Without RBAC enforcement every identity may do everything; with it, such a client
 * may do exactly what the RBAC objects in the env grant it.
 *
 * @example
 * ```ts
 * const config = await clientConfigFor(env, { serviceAccount: 'default/default' });
 * const client = new Client(config);
 * await client.api(Pod, 'default').list(); // 403 unless a binding grants it
 * ```
 */
export async function clientConfigFor(
  cp: Pick<ControlPlane, 'clientConfig' | 'issueClientCertificate'>,
  identity: Identity,
): Promise<IdentityClientConfig> {
  const { server, caData } = cp.clientConfig;
  if ('user' in identity) {
    if (!identity.user) throw new TypeError('user must not be empty');
    const { cert, key } = await cp.issueClientCertificate(identity.user, identity.groups ?? []);
    return { server, caData, certData: cert, keyData: key, namespace: 'default', username: identity.user };
  }
  const { namespace, name } = parseServiceAccount(identity.serviceAccount);
  // Loaded on first use: the server (whose index exports the test env) does not load the client.
  const { Client, isNotFound, Namespace, ServiceAccount } = await import('kubeloop/client');
  const admin = new Client(cp.clientConfig);
  try {
    const createServiceAccount = () =>
      admin.api(ServiceAccount, namespace).create({ metadata: { name, namespace } });
    try {
      await ensure(createServiceAccount);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // The namespace is missing: a pod's namespace always exists, so make it.
      await ensure(() => admin.api(Namespace).create({ metadata: { name: namespace } }));
      await ensure(createServiceAccount);
    }
    const review = await admin.request<{ status?: { token?: string } }>(
      'POST',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`,
      {
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: {
            ...(identity.expirationSeconds !== undefined && {
              expirationSeconds: identity.expirationSeconds,
            }),
            ...(identity.audiences !== undefined && { audiences: [...identity.audiences] }),
          },
        },
      },
    );
    const token = review.status?.token;
    if (!token) throw new Error(`the TokenRequest of ServiceAccount ${namespace}/${name} returned no token`);
    return { server, caData, token, namespace, username: `system:serviceaccount:${namespace}:${name}` };
  } finally {
    await admin.close();
  }
}

/**
 * A kubeconfig (YAML) holding one client configuration — for kubectl, the Python client or
 * client-node acting as that identity. Its context is named `name` and selects the config's
 * namespace.
 *
 * @example
 * ```ts
 * const yaml = renderIdentityKubeconfig(await clientConfigFor(env, { user: 'alice' }));
 * ```
 */
export function renderIdentityKubeconfig(config: IdentityClientConfig, name = 'kubeloop'): string {
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  const user: Record<string, string> = {};
  if (config.token !== undefined) user.token = config.token;
  if (config.certData !== undefined) user['client-certificate-data'] = b64(config.certData);
  if (config.keyData !== undefined) user['client-key-data'] = b64(config.keyData);
  // JSON is YAML: every kubeconfig reader takes it.
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name, cluster: { server: config.server, 'certificate-authority-data': b64(config.caData) } },
      ],
      users: [{ name: config.username, user }],
      contexts: [{ name, context: { cluster: name, user: config.username, namespace: config.namespace } }],
      'current-context': name,
      preferences: {},
    },
    null,
    2,
  );
}

/**
 * Writes a kubeconfig to a fresh private temporary directory (mode 0600), as
 * {@link kubeconfigFile} does for the admin's.
 *
 * @example
 * ```ts
 * const file = writeKubeconfig(renderIdentityKubeconfig(config), 'alice-');
 * // kubectl --kubeconfig file.path auth whoami
 * file.remove();
 * ```
 */
export function writeKubeconfig(kubeconfig: string, prefix = 'kubeloop-'): KubeconfigFile {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, kubeconfig, { mode: 0o600 });
  return { dir, path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
