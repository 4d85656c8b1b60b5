/**
 * Read-your-writes after a graceful delete: the object stays (terminating) until its grace period
 * ends — a pod until its kubelet stops it — so the manager's cache must go on showing it rather
 * than wait for it to disappear.
 */
import { Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RuntimeEnv, run, startRuntimeEnv, testManager } from './helpers.js';

let t: RuntimeEnv;
beforeAll(async () => {
  // A simulated node whose kubelet takes the real 30 s grace period to stop a deleted pod.
  t = await startRuntimeEnv({ controllers: true, nodes: { count: 1, timeScale: 1 } });
});
afterAll(() => t.stop());

describe('read-your-writes after a graceful delete', () => {
  it('reads the terminating object from the cache instead of waiting for it to go', async () => {
    const ns = 'ryw-graceful';
    await t.namespace(ns);
    await t.client.api(Pod, ns).create({
      metadata: { name: 'slow' },
      spec: { nodeName: 'kubeloop-node-1', containers: [{ name: 'c', image: 'nginx' }] },
    });
    // Without a fallback to the server: a read that waited for the pod to go would never end.
    const m = testManager(t.newClient(), { readYourWritesTimeoutMs: 3_600_000 });
    m.add({ name: 'noop', start: () => undefined });
    await run(m);
    try {
      await m.cache.get(Pod, 'slow', ns);
      const deleted = (await m.client.api(Pod, ns).delete('slow')) as Pod | undefined;
      expect(deleted?.metadata?.deletionGracePeriodSeconds).toBeGreaterThan(0);
      const cached = await m.cache.get(Pod, 'slow', ns);
      expect(cached?.metadata?.deletionTimestamp).toBeDefined();
      const listed = await m.cache.list(Pod, { namespace: ns });
      expect(listed.map((p) => p.metadata?.name)).toEqual(['slow']);
    } finally {
      await m.stop();
    }
  }, 20_000);
});
