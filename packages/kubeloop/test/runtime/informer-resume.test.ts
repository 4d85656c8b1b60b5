/**
 * An informer of `kubeloop/runtime` resumes its watch across a restart of a server on a data
 * directory, without relisting: the changes it missed while the server was away come from the
 * durable history, once each, in order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ControlPlane, startControlPlane } from '@kubeloop/server';
import { eventually } from '@kubeloop/server/testing';
import { Client, ConfigMap } from 'kubeloop/client';
import { Informer, type InformerLifecycleEvent } from 'kubeloop/runtime';
import { afterEach, expect, it } from 'vitest';

/** A port that was free a moment ago: the restarted server must come back on the same address. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

it('an informer resumes its watch across a server restart without relisting', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-informer-resume-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const start = () =>
    startControlPlane({
      port,
      dataDir: dir,
      controllers: false,
      compactionIntervalMs: 0,
      log: () => undefined,
    });
  let cp: ControlPlane = await start();
  cleanup.push(() => cp.stop());

  const client = new Client(cp.clientConfig);
  const cms = client.api(ConfigMap, 'default');
  const lifecycle: InformerLifecycleEvent[] = [];
  const informer = new Informer(cms, {
    // Plain lists, so that a relist would be a list request the restarted server refuses.
    watchList: false,
    backoff: { initialMs: 10, maxMs: 200, jitter: 0 },
    onLifecycle: (e) => lifecycle.push(e),
  });
  const seen: string[] = [];
  informer.addEventHandler({
    onAdd: (o, initial) => {
      if (!initial) seen.push(`add ${o.metadata?.name} ${o.data?.v}`);
    },
    onUpdate: (_old, o) => seen.push(`update ${o.metadata?.name} ${o.data?.v}`),
    onDelete: (o) => seen.push(`delete ${o.metadata?.name}`),
  });
  await cms.create({ metadata: { name: 'a' }, data: { v: '1' } });
  informer.start();
  cleanup.push(() => informer.stop());
  await informer.waitForSync({ timeoutMs: 10_000 });
  await eventually(
    () => informer.store.getByKey('default/a')?.data?.v === '1',
    10_000,
    'the informer to see a',
  );

  // The informer loses its watch and cannot get another: what follows happens behind its back.
  cp.faults.inject({ match: { verb: 'watch', resource: 'configmaps' }, action: { status: 500 } });
  cp.faults.dropWatches();
  await cms.patch('a', { data: { v: '2' } });
  await cms.create({ metadata: { name: 'b' }, data: { v: '1' } });
  await cms.delete('a');
  await cp.stop();

  cp = await start();
  // A relist would fail: only resuming the watch from where the informer was can catch it up.
  cp.faults.inject({ match: { verb: 'list', resource: 'configmaps' }, action: { status: 500 } });
  await eventually(
    () => seen.length >= 3 && !informer.store.getByKey('default/a'),
    20_000,
    'the missed changes',
  );
  await cms.create({ metadata: { name: 'c' }, data: { v: '1' } });
  await eventually(() => informer.store.getByKey('default/c'), 10_000, 'a change after the restart');

  expect(seen.filter((s) => !s.startsWith('add kube-root-ca.crt'))).toEqual([
    'update a 2',
    'add b 1',
    'delete a',
    'add c 1',
  ]);
  expect(informer.store.list().map((o) => o.metadata?.name)).toEqual(expect.arrayContaining(['b', 'c']));
  // One list: the first. The restart cost a reconnect, not a relist.
  const relists = lifecycle.filter((e) => e.type === 'relisting');
  expect(relists.map((e) => e.type === 'relisting' && e.reason)).toEqual(['initial']);
  expect(lifecycle.some((e) => e.type === 'connected')).toBe(true);
  client.close?.();
});
