/**
 * `kubeloop shards` against a running sharded manager on the local control plane: the built bin,
 * as a user runs it, checked against what kubectl shows of the same Leases and labels.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestEnv, type TestEnv } from '@kubeloop/server';
import { type KubeconfigFile, kubeconfigFile } from '@kubeloop/server/testing';
import { Client, ConfigMap, loadKubeconfig } from 'kubeloop/client';
import { controller, Manager } from 'kubeloop/runtime';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatRings, humanDuration, readRings } from './shards.js';

const run = promisify(execFile);
// The built bin (`npm test` builds first), as a user runs it.
const bin = fileURLToPath(new URL('../../bin/kubeloop.js', import.meta.url));
const ns = 'shards-cli';
const LABEL = 'sharding.kubeloop.dev/shard-configmap';
// Short, yet generous to a loaded machine: a replica that cannot renew for 3 s stops.
const timings = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };

let cp: TestEnv;
let file: KubeconfigFile;
let client: Client;
const managers = new Map<string, { manager: Manager; done: Promise<void> }>();

const kubeloop = (...args: string[]) =>
  run(process.execPath, [bin, 'shards', '--kubeconfig', file.path, ...args]);
const kubectl = async (...args: string[]) =>
  (await run('kubectl', ['--kubeconfig', file.path, ...args])).stdout.trim();

async function eventually<T>(check: () => Promise<T | undefined | false>, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  cp = await startTestEnv({ controllers: false });
  file = kubeconfigFile(cp);
  client = new Client(await loadKubeconfig({ path: file.path }));
  await kubectl('create', 'namespace', ns);
  for (let i = 0; i < 30; i++) {
    await client.api(ConfigMap, ns).create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, labels: { app: 'sharded' } },
    });
  }
  for (const id of ['shard-a', 'shard-b']) {
    const manager = new Manager({
      client: new Client(await loadKubeconfig({ path: file.path })),
      logger: pino({ level: 'silent' }),
      healthProbeAddress: false,
      metricsAddress: false,
      handleSignals: false,
      sharding: { name: 'cms', shardId: id, namespace: ns, ...timings },
    }).add(
      controller(ConfigMap)
        .inNamespace(ns)
        .withLabelSelector({ app: 'sharded' })
        .reconcile(() => undefined),
    );
    const done = manager.start();
    done.catch(() => undefined);
    await manager.ready();
    managers.set(id, { manager, done });
  }
  // Every ConfigMap assigned to one of the two shards.
  await eventually(async () => {
    const items = (await client.api(ConfigMap, ns).list({ labelSelector: 'app=sharded' })).items;
    return items.every((c) => ['shard-a', 'shard-b'].includes(c.metadata?.labels?.[LABEL] ?? ''));
  }, 'all assigned');
});

afterAll(async () => {
  for (const { manager } of managers.values()) await manager.stop();
  await client?.close();
  file?.remove();
  await cp?.stop();
});

describe('kubeloop shards', () => {
  it('prints each shard of the ring as kubectl prints a table, with the objects kubectl finds on its label', async () => {
    const { stdout } = await kubeloop('-n', ns);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^RING {3,}SHARD {3,}STATE {3,}SINCE {3,}RENEWED {3,}CONTROLLER {3,}OBJECTS {3,}DRAINING$/,
    );
    // Columns aligned under their headers, as kubectl's tabwriter does.
    const starts = [...lines[0]!.matchAll(/\S+/g)].map((m) => m.index);
    for (const line of lines.slice(1)) {
      expect([...line.matchAll(/(?<=^| {3})\S/g)].map((m) => m.index)).toEqual(starts);
    }
    const sharder = await kubectl(
      'get',
      'lease',
      'cms-sharder',
      '-n',
      ns,
      '-o',
      'jsonpath={.spec.holderIdentity}',
    );
    const rows = lines.slice(1).map((l) => l.split(/ {3,}/));
    for (const id of ['shard-a', 'shard-b']) {
      const row = rows.find((r) => r[1] === id)!;
      expect(row[0]).toBe('cms');
      expect(row[2]).toBe(id === sharder ? 'Live,Sharder' : 'Live');
      expect(row[5]).toBe('configmap');
      const onShard = await kubectl('get', 'configmaps', '-n', ns, '-l', `${LABEL}=${id}`, '-o', 'name');
      expect(Number(row[6])).toBe(onShard.split('\n').filter(Boolean).length);
      expect(row[7]).toBe('0');
    }
    expect(rows.find((r) => r[1] === '<none>')).toEqual([
      'cms',
      '<none>',
      'Unassigned',
      '-',
      '-',
      'configmap',
      '0',
      '0',
    ]);
  });

  it('prints JSON for scripts with -o json, and says so when no ring matches', async () => {
    const { stdout } = await kubeloop('-n', ns, '-o', 'json', '--ring', 'cms');
    const { rings } = JSON.parse(stdout) as { rings: Awaited<ReturnType<typeof readRings>> };
    expect(rings.map((r) => r.name)).toEqual(['cms']);
    const [ring] = rings;
    expect(ring!.shards.map((s) => [s.id, s.state])).toEqual([
      ['shard-a', 'live'],
      ['shard-b', 'live'],
    ]);
    expect(ring!.controllers).toEqual([
      {
        controller: 'configmap',
        group: '',
        version: 'v1',
        kind: 'ConfigMap',
        namespace: ns,
        labelSelector: 'app=sharded',
      },
    ]);
    expect(ring!.shards.reduce((n, s) => n + s.controllers.configmap!.objects, 0)).toBe(30);

    const none = await kubeloop('-n', ns, '--ring', 'other');
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe(`No sharded rings found in ${ns} namespace.\n`);
    await expect(kubeloop('-n', ns, '-o', 'yaml')).rejects.toMatchObject({
      stderr: expect.stringContaining('unable to match a printer suitable for the output format "yaml"'),
    });
  });

  it('shows a crashed shard as expired once its Lease expired, holding nothing once its objects moved', async () => {
    const b = managers.get('shard-b')!;
    managers.delete('shard-b');
    await b.manager.abort();
    await eventually(async () => {
      const [ring] = await readRings(client, ns, 'cms');
      const dead = ring?.shards.find((s) => s.id === 'shard-b');
      return dead?.state === 'expired' && dead.controllers.configmap?.objects === 0;
    }, 'shard-b expired and emptied');
    const { stdout } = await kubeloop('-n', ns);
    const rows = stdout
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/ {3,}/));
    expect(rows.find((r) => r[1] === 'shard-b')!.slice(0, 4)).toEqual([
      'cms',
      'shard-b',
      'Expired',
      expect.stringMatching(/^\d+s$/),
    ]);
    expect(rows.find((r) => r[1] === 'shard-b')!.slice(5)).toEqual(['configmap', '0', '0']);
    expect(rows.find((r) => r[1] === 'shard-a')!.slice(2)).toEqual([
      'Live,Sharder',
      expect.stringMatching(/^\d+s$/),
      expect.stringMatching(/^\d+s$/),
      'configmap',
      '30',
      '0',
    ]);
  });

  it('prints ages as kubectl does', () => {
    expect(
      [5_000, 119_000, 150_000, 600_000, 7_200_000, 9 * 3_600_000, 50 * 3_600_000].map(humanDuration),
    ).toEqual(['5s', '119s', '2m30s', '10m', '120m', '9h', '2d2h']);
    expect(formatRings([])).toBe('');
  });
});
