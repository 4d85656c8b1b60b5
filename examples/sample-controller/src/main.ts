/**
 * The operator's entry point: `node dist/main.js [--leader-elect] [--metrics-bind-address=:8080]
 * [--health-probe-bind-address=:8081]`, against the in-cluster config or `KUBECONFIG`.
 */
import { createManager, parseFlags } from './operator.js';

const flags = parseFlags(process.argv.slice(2));
await createManager({
  ...(flags.leaderElect && { leaderElection: { id: 'sample-controller.samplecontroller.k8s.io' } }),
  metricsAddress: flags.metricsBindAddress,
  healthProbeAddress: flags.healthProbeBindAddress,
}).start();
