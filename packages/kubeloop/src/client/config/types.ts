/**
 * What a client needs to reach and authenticate to one API server (client-go's `rest.Config`).
 * Built from a kubeconfig, from the in-cluster service account, or by hand.
 */

/** One `name`/`value` pair of an exec plugin's environment. */
export interface ExecEnvVar {
  name: string;
  value: string;
}

/**
 * An exec credential plugin (`users[].user.exec` of a kubeconfig): a command that prints an
 * `ExecCredential` with a token or a client certificate.
 */
export interface ExecConfig {
  /** `client.authentication.k8s.io/v1` (or `v1beta1`). */
  apiVersion: string;
  command: string;
  args?: string[];
  env?: ExecEnvVar[];
  /** Shown when the command cannot be run. */
  installHint?: string;
  /** Pass the cluster's connection details to the plugin in `KUBERNETES_EXEC_INFO`. */
  provideClusterInfo?: boolean;
  interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
  /** `clusters[].cluster.extensions["client.authentication.k8s.io/exec"]`, given to the plugin as `spec.cluster.config`. */
  clusterConfig?: unknown;
  /** Working directory of the command. */
  cwd?: string;
}

/** Who to act as (`Impersonate-*` headers). */
export interface Impersonation {
  user: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/**
 * Connection settings. Authentication: `token`, `tokenFile` (re-read when it changes; wins over
 * `token`), `username`/`password`, a client certificate (`certData` + `keyData`, PEM), or an
 * `exec` plugin. A client certificate can be combined with the header-based methods.
 *
 * @example
 * ```ts
 * const client = new Client({ server: 'https://127.0.0.1:6443', token, caData: caPem });
 * ```
 */
export interface ConnectionConfig {
  /** Base URL of the API server, e.g. `https://127.0.0.1:6443`. */
  server: string;
  /** PEM of the CA certificate(s) to trust for the server; the system roots when omitted. */
  caData?: string;
  /** Skip verification of the server certificate (never in production). */
  insecureSkipTlsVerify?: boolean;
  /** Name to verify the server certificate against (and send as SNI) instead of the URL's host. */
  tlsServerName?: string;
  token?: string;
  tokenFile?: string;
  /** PEM client certificate. */
  certData?: string;
  /** PEM private key of the client certificate. */
  keyData?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
  impersonate?: Impersonation;
  /** Default namespace of the client (`default` when omitted). */
  namespace?: string;
  /**
   * Where each setting came from, e.g. `{ tokenFile: '/home/me/.kube/config: users["me"].user.tokenFile' }`,
   * so that errors found later (a token file gone, a plugin failing) can name it.
   */
  origins?: Partial<
    Record<'server' | 'caData' | 'token' | 'tokenFile' | 'certData' | 'keyData' | 'exec', Origin>
  >;
}

/** Where a configuration value came from. */
export interface Origin {
  file?: string;
  field?: string;
}
