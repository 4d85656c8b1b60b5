/**
 * The operator itself, loaded by main.ts once V8's young generation is capped: the manager with
 * kubebuilder's flags (read by `kubeloop/runtime`) and, unless `ENABLE_WEBHOOKS=false`, the
 * webhook server. The workers default to 2, as sample-controller's `Run(ctx, 2)`.
 */
import { managerFlags } from 'kubeloop/runtime';
// The flags alone: the webhook server's modules load only when it runs (~1 MB of heap otherwise).
import { webhookFlags } from 'kubeloop/webhook/flags';
import { createManager, LEADER_ELECTION_ID } from './operator.js';

const hooks = webhookFlags(process.argv.slice(2));
const manager = createManager({
  maxConcurrentReconciles: 2,
  ...managerFlags(hooks.rest, { leaderElectionId: LEADER_ELECTION_ID }),
});
if (hooks.enabled) {
  // Loaded only when served: without webhooks their code (and the conversion's) is not needed.
  const { webhookServer } = await import('./webhooks.js');
  webhookServer(hooks.options).setupWithManager(manager);
}
await manager.start();
