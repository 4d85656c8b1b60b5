/**
 * The operator's entry point: `node dist/main.js [--leader-elect] [--metrics-bind-address=:8080]
 * [--health-probe-bind-address=:8081] [--max-concurrent-reconciles=N]` (`--help` lists them),
 * against the in-cluster config or `KUBECONFIG`.
 */
import { managerFlags } from 'kubeloop/runtime';
import { WebhookServer, webhookFlags } from 'kubeloop/webhook';
import { createManager, LEADER_ELECTION_ID } from './manager.js';
import { allWebhooks } from './webhooks.js';

// The webhook server's flags (--webhook-port, --webhook-cert-path, …) first, the manager's from the rest;
// ENABLE_WEBHOOKS=false runs the operator without its webhooks.
const hooks = webhookFlags(process.argv.slice(2));
const manager = createManager(managerFlags(hooks.rest, { leaderElectionId: LEADER_ELECTION_ID }));
if (hooks.enabled) new WebhookServer(hooks.options).register(...allWebhooks).setupWithManager(manager);
await manager.start();
