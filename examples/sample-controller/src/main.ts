/**
 * The operator's entry point: `node dist/main.js [--leader-elect] [--metrics-bind-address=:8080]
 * [--health-probe-bind-address=:8081]`, against the in-cluster config or `KUBECONFIG`.
 * `MAX_CONCURRENT_RECONCILES` sets the workers (default 2, as sample-controller's `Run(ctx, 2)`).
 */
import { createManager, parseFlags } from './operator.js';

const flags = parseFlags(process.argv.slice(2));
const workers = Number(process.env.MAX_CONCURRENT_RECONCILES || 2);
if (!Number.isInteger(workers) || workers < 1) {
  throw new Error(`MAX_CONCURRENT_RECONCILES must be a positive integer, got ${workers}`);
}
await createManager({
  ...(flags.leaderElect && { leaderElection: { id: 'sample-controller.samplecontroller.k8s.io' } }),
  metricsAddress: flags.metricsBindAddress,
  healthProbeAddress: flags.healthProbeBindAddress,
  maxConcurrentReconciles: workers,
}).start();
