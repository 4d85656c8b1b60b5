import { type ControlPlane, type ControlPlaneOptions, startControlPlane } from '../control-plane.js';
import { installCrdDirectories } from './crd-directories.js';
import {
  clientConfigFor,
  type Identity,
  type IdentityClientConfig,
  renderIdentityKubeconfig,
  writeKubeconfig,
} from './identities.js';
import type { KubeconfigFile } from './kubeconfig-file.js';

/**
 * Options of {@link startTestEnv}: those of `startControlPlane` (but `host` and `port`: the env
 * listens on a free loopback port), and envtest's CRD directories.
 *
 * Unlike `startControlPlane`, the env has **no simulated node** unless `nodes: { count: N }` asks
 * for some: as with envtest, pods stay Pending and workload controllers leave them alone, so a
 * test sees exactly what its operator does. Ask for a node when the test needs Deployments to
 * become available or pods to run.
 */
export type TestEnvOptions = Omit<ControlPlaneOptions, 'host' | 'port' | 'dataDir'> & {
  dataDir?: string;
  /**
   * Directories (or files) of CRD manifests to install before the env resolves, each CRD
   * Established and its kind served (envtest's `CRDDirectoryPaths`): every `.yaml`, `.yml` and
   * `.json` file in them, sub-directories included, except kustomize's `kustomization.yaml`.
   * Relative paths are resolved from the current directory (e.g. `['config/crd']`).
   */
  crdDirectoryPaths?: readonly string[];
  /** Fail when a path of `crdDirectoryPaths` does not exist (default true; envtest's `ErrorIfCRDPathMissing`). */
  errorIfCrdPathMissing?: boolean;
};

/** A control plane of a test, with clients for identities other than its admin. */
export interface TestEnv extends ControlPlane {
  /**
   * A client configuration acting as `identity`: a ServiceAccount (`{ serviceAccount: 'ns/name' }`,
   * created when missing, with a TokenRequest's token) or a user (`{ user, groups }`, with a
   * client certificate signed by the env's CA). See {@link clientConfigFor}.
   *
   * @example
   * ```ts
   * const client = new Client(await env.clientConfigFor({ serviceAccount: 'default/default' }));
   * ```
   */
  clientConfigFor(identity: Identity): Promise<IdentityClientConfig>;
  /**
   * {@link TestEnv.clientConfigFor} as a kubeconfig file (mode 0600, in its own temporary
   * directory), for kubectl, the Python client or client-node. `remove()` it when done.
   *
   * @example
   * ```ts
   * const file = await env.kubeconfigFileFor({ user: 'alice', groups: ['dev'] });
   * execFileSync('kubectl', ['--kubeconfig', file.path, 'auth', 'whoami']);
   * file.remove();
   * ```
   */
  kubeconfigFileFor(identity: Identity): Promise<KubeconfigFile>;
}

/**
 * A fresh, isolated control plane for a test (envtest's role): in memory, on a free loopback
 * port, with a ready-made client configuration. Always `stop()` it (e.g. in `afterAll`).
 *
 * Unlike `startControlPlane`, it has **no simulated nodes** unless asked (`nodes: { count: 1 }`;
 * without, pods stay Pending and workloads untouched, as in envtest), logs nothing, sends watch
 * bookmarks every second, and resolves only once the built-in controllers' caches are filled and
 * the CRDs of `crdDirectoryPaths` are served.
 *
 * @example
 * ```ts
 * const env = await startTestEnv({ crdDirectoryPaths: ['config/crd'], nodes: { count: 1 } });
 * // use env.clientConfig / env.kubeconfig with any Kubernetes client, or act as someone else:
 * const robot = await env.clientConfigFor({ serviceAccount: 'default/robot' });
 * await env.stop();
 * ```
 */
export async function startTestEnv(options: TestEnvOptions = {}): Promise<TestEnv> {
  const cp = await startControlPlane({
    bookmarkIntervalMs: 1000,
    waitForControllers: true,
    ...options,
    host: '127.0.0.1',
    port: 0,
    log: options.log ?? (() => undefined),
    nodes: { count: 0, ...options.nodes },
  });
  const forIdentity = (identity: Identity) => clientConfigFor(cp, identity);
  if (options.crdDirectoryPaths?.length) {
    try {
      await installCrdDirectories(cp, options.crdDirectoryPaths, options.errorIfCrdPathMissing ?? true);
    } catch (err) {
      await cp.stop();
      throw err;
    }
  }
  return Object.assign(cp, {
    clientConfigFor: forIdentity,
    async kubeconfigFileFor(identity: Identity) {
      return writeKubeconfig(renderIdentityKubeconfig(await forIdentity(identity)), 'kubeloop-identity-');
    },
  });
}
