/**
 * A kind the garbage collector cannot list — a CRD whose preferred version needs a conversion
 * webhook that is not there, stored objects of it, a server restarted on that data — holds
 * neither the other built-in controllers nor the collector itself: as in kube-controller-manager,
 * the collector waits for its own informers only, at most its initial sync timeout, then works
 * with the kinds it could list and says which it could not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Client,
  ConfigMap,
  CustomResourceDefinition,
  Deployment,
  isNotFound,
  ReplicaSet,
} from 'kubeloop/client';
import { Manager } from 'kubeloop/runtime';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { garbageCollector } from '../../src/controllers/garbage-collector.js';
import { startTestEnv, type TestEnv } from '../../src/index.js';
import { simpleCrd, withUnreachableV2 } from '../crd/support.js';
import { eventually } from '../kubectl.js';

const dataDir = mkdtempSync(join(tmpdir(), 'kubeloop-gc-sync-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const G = 'gcsync.example.com';
const Widget = { group: G, version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };

type Logged = [level: string, msg: string, fields?: Record<string, unknown>];

/** A server (on the test's data directory with `persist`), its log lines kept. */
async function start(
  controllers: boolean,
  persist = true,
): Promise<{ env: TestEnv; client: Client; log: Logged[] }> {
  const log: Logged[] = [];
  const env = await startTestEnv({
    ...(persist && { dataDir }),
    controllers,
    // Not held until the collector gave up on the kind (what a server's start waits, at most 10 s).
    waitForControllers: false,
    nodes: { count: controllers ? 1 : 0 },
    log: (level, msg, fields) => log.push([level, msg, fields]),
  });
  return { env, client: new Client(env.clientConfig), log };
}

/** Stores a Widget (at v1, the storage version) of a CRD whose preferred v2 needs a webhook that is not there. */
async function storeUnlistableKind(client: Client): Promise<void> {
  const crd = withUnreachableV2(simpleCrd('widgets', 'Widget', G));
  await client.api(CustomResourceDefinition).create(crd);
  await eventually(
    () =>
      client
        .api(Widget, 'default')
        .create({ apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'w' } })
        .catch(() => undefined),
    10_000,
    'the CRD served',
  );
}

describe('a kind the garbage collector cannot list', () => {
  it('does not hold the workload controllers of a server restarted with objects of it', async () => {
    const first = await start(false);
    try {
      await storeUnlistableKind(first.client);
    } finally {
      await first.client.close();
      await first.env.stop();
    }

    const second = await start(true);
    try {
      const deployments = second.client.api(Deployment, 'default');
      await deployments.create({
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'nginx' }] },
          },
        },
      });
      const sets = await eventually(
        async () => {
          const items = (await second.client.api(ReplicaSet, 'default').list()).items;
          return items.length > 0 ? items : undefined;
        },
        10_000,
        "the Deployment's ReplicaSet",
      );
      expect(sets[0]?.metadata?.ownerReferences?.[0]?.name).toBe('web');
      // The kind's list fails, and the controller manager's log says why.
      const failed = await eventually(
        () => second.log.find(([level, msg]) => level === 'error' && /widgets.*conversion webhook/.test(msg)),
        10_000,
        'the failed list in the log',
      );
      expect(failed[1]).toMatch(/service "nowhere" not found/);
    } finally {
      await second.client.close();
      await second.env.stop();
    }
  });

  it('waits for its lists at most its initial sync timeout, then collects the kinds it could list', async () => {
    const { env, client } = await start(false, false);
    await storeUnlistableKind(client);
    const log: Logged[] = [];
    const manager = new Manager({
      client,
      logger: pino({ level: 'silent' }),
      healthProbeAddress: false,
      metricsAddress: false,
      handleSignals: false,
    });
    const gc = garbageCollector(client, {
      initialSyncTimeoutMs: 300,
      log: (level, msg, fields) => log.push([level, msg, fields]),
    });
    manager.add(gc);
    const running = manager.start();
    running.catch(() => undefined);
    try {
      // The manager is ready at once: the collector's informers are not its to wait for.
      await manager.ready();
      await gc.initialSync();
      const warning = log.find(([, msg]) => msg.startsWith('garbage collector: not all resource monitors'));
      expect(warning?.[0]).toBe('warn');
      expect(warning?.[1]).toBe(
        'garbage collector: not all resource monitors could be synced, proceeding anyway',
      );
      // The kind that cannot be listed is named (on a slow machine, kinds still listing may be too).
      expect(warning?.[2]?.unsynced).toContain(`widgets.v2.${G}`);
      // It collects what it can list: a ConfigMap whose owner is gone.
      const cms = client.api(ConfigMap, 'default');
      await cms.create({
        metadata: {
          name: 'orphan',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: 'no-such-uid' }],
        },
      });
      await eventually(
        () =>
          cms.get('orphan').then(
            () => false,
            (err: unknown) => isNotFound(err),
          ),
        10_000,
        'the orphan collected',
      );
    } finally {
      await manager.stop();
      await running.catch(() => undefined);
      await client.close();
      await env.stop();
    }
  });
});
