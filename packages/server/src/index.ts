/**
 * `@kubeloop/server` — a local Kubernetes-compatible control plane in Node.
 *
 * `startControlPlane()` serves the Kubernetes API over HTTPS (real kubectl works against it);
 * `startTestEnv()` is the same thing, fresh and in memory on a free port, for tests; its helpers
 * (a client, kubectl, CRD install, waiting) are in `@kubeloop/server/testing`.
 */

export type { KeyPair } from './auth/pki.js';
export {
  type ClientConfig,
  type ControlPlane,
  type ControlPlaneOptions,
  renderKubeconfig,
  startControlPlane,
} from './control-plane.js';
export type { NodeTaint, SimulatedNodesOptions } from './controllers/kubelet/kubelet.js';
export { SIMULATE_ANNOTATION } from './controllers/simulate.js';
export type { FaultAction, FaultMatch, FaultRule, Faults } from './http/faults.js';
export {
  type PortForwardConnection,
  type PortForwardTarget,
  simulatedPortForwardTarget,
} from './http/streaming/portforward-target.js';

// The test environment's own module is `@kubeloop/server/testing`; its entry point stays here too.
import type { TestEnv, TestEnvOptions } from './testing/test-env.js';

export type { TestEnv, TestEnvOptions };

/**
 * {@link TestEnv}: a fresh, isolated control plane for a test (the same function as
 * `@kubeloop/server/testing`'s `startTestEnv`). Its module loads on the first call, so that a
 * server started through this entry point does not load the test environment's helpers.
 *
 * @example
 * ```ts
 * const env = await startTestEnv({ crdDirectoryPaths: ['config/crd'] });
 * await env.stop();
 * ```
 */
export async function startTestEnv(options?: TestEnvOptions): Promise<TestEnv> {
  return (await import('./testing/test-env.js')).startTestEnv(options);
}
