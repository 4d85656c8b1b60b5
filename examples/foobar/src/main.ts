/**
 * The operator's entry point: `node dist/main.js [--leader-elect] [--metrics-bind-address=:8080]
 * [--health-probe-bind-address=:8081] [--max-concurrent-reconciles=N] [--webhook-port=9443]
 * [--webhook-cert-path=DIR]` (`--help` lists the manager's), against the in-cluster config or
 * `KUBECONFIG`. The webhook server answers FooBar's conversions; `ENABLE_WEBHOOKS=false` runs
 * without it (then only v2, the stored version, can be read and written).
 */
import { managerFlags } from 'kubeloop/runtime';
import { WebhookServer, webhookFlags } from 'kubeloop/webhook';
import { createManager, LEADER_ELECTION_ID } from './manager.js';
import { allWebhooks } from './webhooks.js';

const hooks = webhookFlags(process.argv.slice(2));
const manager = createManager(managerFlags(hooks.rest, { leaderElectionId: LEADER_ELECTION_ID }));
if (hooks.enabled) new WebhookServer(hooks.options).register(...allWebhooks).setupWithManager(manager);
await manager.start();
