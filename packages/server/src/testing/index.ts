/**
 * `@kubeloop/server/testing` — the test environment, envtest's equivalent: a fresh control
 * plane per test file, in memory, on a free port, and the helpers an operator's tests need
 * around it. The SDK's own integration tests, the server's tests and users' operator tests all
 * use these.
 *
 * - {@link startTestEnv}: the control plane alone (also exported by `@kubeloop/server`); no
 *   simulated node unless `nodes: { count: N }`, and envtest's `crdDirectoryPaths`
 *   ({@link installCrdDirectories} for an env already running).
 * - {@link startClientEnv}: with a `kubeloop/client` and {@link installCrd}.
 * - {@link startKubectlEnv}: with a kubectl bound to it; {@link parseTable} and {@link manifest}
 *   read and write what kubectl prints and reads.
 * - {@link kubeconfigFile}: the admin kubeconfig as a file, for any other client.
 * - `env.clientConfigFor(identity)` / `env.kubeconfigFileFor(identity)` ({@link clientConfigFor}):
 *   a client acting as a ServiceAccount or a user instead of the admin, to test an operator under
 *   the RBAC it ships.
 * - {@link httpClient}: raw HTTPS requests, and {@link establish}/{@link waitEstablished} for CRDs;
 *   {@link simpleCrd} builds one.
 * - {@link eventually}: wait for a condition instead of sleeping; {@link rejection}: the error a
 *   promise rejects with.
 * - {@link createCertificateAuthority} and friends: certificates for TLS servers under test
 *   (webhooks) and for client-certificate users.
 *
 * @example
 * ```ts
 * import { startClientEnv, eventually } from '@kubeloop/server/testing';
 *
 * const t = await startClientEnv();
 * await t.installCrd(Foo.crd());
 * // … run the operator's manager on t.client, create a Foo, then:
 * await eventually(async () => (await t.client.get(Deployment, 'foo')).status?.readyReplicas === 1);
 * await t.stop();
 * ```
 * @module
 */

export {
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
  type KeyPair,
} from '../auth/pki.js';
export type { ControlPlane } from '../control-plane.js';
export {
  type ClientEnv,
  type ClientEnvOptions,
  installCrd,
  startClientEnv,
} from './client-env.js';
export { simpleCrd } from './crd.js';
export { installCrdDirectories, readCrdDirectories } from './crd-directories.js';
export {
  CRDS,
  condition,
  crPath,
  establish,
  type Http,
  type HttpOptions,
  type HttpResult,
  httpClient,
  type Json,
  waitEstablished,
  warnings,
} from './http.js';
export {
  clientConfigFor,
  type Identity,
  type IdentityClientConfig,
  renderIdentityKubeconfig,
  writeKubeconfig,
} from './identities.js';
export { type KubeconfigFile, kubeconfigFile } from './kubeconfig-file.js';
export {
  type KubectlEnv,
  type KubectlResult,
  type KubectlTable,
  manifest,
  parseTable,
  startKubectlEnv,
} from './kubectl.js';
export { startTestEnv, type TestEnv, type TestEnvOptions } from './test-env.js';
export { eventually, rejection } from './wait.js';
