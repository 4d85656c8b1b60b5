/**
 * One replica of a sharded operator as its own process (for processes.test.ts): a Manager with
 * one sharded controller of the ConfigMaps labeled `app=sharded` in `NAMESPACE`, on the cluster
 * of `KUBECONFIG`. Each reconcile appends `[name, start, end]` (wall-clock ms) to `RECORD`, for
 * the test's overlap check; `ready` on stdout once its caches synced. Runs the built SDK.
 */
import { createWriteStream } from 'node:fs';
import { Client, ConfigMap } from 'kubeloop/client';
import { controller, Manager } from 'kubeloop/runtime';
import { destination, pino } from 'pino';

const env = process.env;
const lease = Number(env.LEASE_MS);
const records = createWriteStream(env.RECORD);
const clock = () => performance.timeOrigin + performance.now();
const manager = new Manager({
  client: await Client.load(),
  logger: pino({ level: 'warn' }, destination(2)),
  healthProbeAddress: false,
  metricsAddress: false,
  sharding: {
    name: 'procs',
    shardId: env.SHARD,
    namespace: env.NAMESPACE,
    replicas: 3,
    leaseDurationMs: lease,
    renewDeadlineMs: Math.round(lease * 0.75),
    retryPeriodMs: Math.round(lease / 8),
  },
  maxConcurrentReconciles: 4,
}).add(
  controller(ConfigMap)
    .inNamespace(env.NAMESPACE)
    .withLabelSelector({ app: 'sharded' })
    .reconcile(async (cm) => {
      const start = clock();
      // A little time, so that handovers meet reconciles in flight.
      await new Promise((resolve) => setTimeout(resolve, 2));
      records.write(`${JSON.stringify([cm.metadata.name, start, clock()])}\n`);
      return undefined;
    }),
);
const done = manager.start();
await manager.ready();
process.stdout.write('ready\n');
await done;
