/**
 * The operator's entry point: `node dist/main.js [--leader-elect] [--metrics-bind-address=:8080]
 * [--health-probe-bind-address=:8081] [--max-concurrent-reconciles=N]` (`--help` lists them),
 * against the in-cluster config or `KUBECONFIG`.
 */
import { managerFlags } from 'kubeloop/runtime';
import { createManager, LEADER_ELECTION_ID } from './manager.js';

await createManager(managerFlags(process.argv.slice(2), { leaderElectionId: LEADER_ELECTION_ID })).start();
