import { type ControlPlane, type ControlPlaneOptions, startControlPlane } from '../control-plane.js';

/** Options of {@link startTestEnv}. */
export type TestEnvOptions = Omit<ControlPlaneOptions, 'host' | 'port' | 'dataDir'> & { dataDir?: string };

/**
 * A fresh, isolated control plane for a test (envtest's role): in memory, on a free loopback
 * port, with a ready-made client configuration. Always `stop()` it (e.g. in `afterAll`).
 *
 * Unlike `startControlPlane`, it has no simulated nodes unless asked (workloads stay untouched,
 * as in envtest), logs nothing, sends watch bookmarks every second, and resolves only once the
 * built-in controllers' caches are filled.
 *
 * @example
 * ```ts
 * const env = await startTestEnv();
 * // use env.clientConfig / env.kubeconfig with any Kubernetes client
 * await env.stop();
 * ```
 */
export function startTestEnv(options: TestEnvOptions = {}): Promise<ControlPlane> {
  return startControlPlane({
    bookmarkIntervalMs: 1000,
    waitForControllers: true,
    ...options,
    host: '127.0.0.1',
    port: 0,
    log: options.log ?? (() => undefined),
    nodes: { count: 0, ...options.nodes },
  });
}
