/**
 * The operator's entry point: `node dist/main.js [--leader-elect] [--metrics-bind-address=:8080]
 * [--health-probe-bind-address=:8081] [--max-concurrent-reconciles=N]` (kubebuilder's flags, read by
 * `kubeloop/runtime`), against the in-cluster config or `KUBECONFIG`. The workers default to 2, as
 * sample-controller's `Run(ctx, 2)`.
 */
import { managerFlags } from 'kubeloop/runtime';
import { createManager, LEADER_ELECTION_ID } from './operator.js';

await createManager({
  maxConcurrentReconciles: 2,
  ...managerFlags(process.argv.slice(2), { leaderElectionId: LEADER_ELECTION_ID }),
}).start();
