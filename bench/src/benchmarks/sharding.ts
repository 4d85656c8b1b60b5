/**
 * Sharded controllers (`Manager` option `sharding`): per-replica RSS and reconciles/s with 1, 2
 * and 3 shards over the same objects, side by side in one run, and the time to rebalance after a
 * replica is killed (SIGKILL: its Lease expires, its objects move to the others).
 *
 * Against `kubeloop server --no-controllers`; each replica is its own Node process running a
 * `Manager` with one controller of ConfigMaps (a trivial reconcile: the figures are of the
 * sharding and the caches, not of the work). For each shard count, fresh replicas start on the
 * objects as the previous count left them (labeled for shards that left, which the sharder
 * reassigns at once), and the clock runs from their spawn until every object was reconciled.
 *
 *   npm run build && node bench/dist/benchmarks/sharding.js --objects=10000
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, ConfigMap } from 'kubeloop/client';
import { controller, Manager, shardLabel } from 'kubeloop/runtime';
import { pino } from 'pino';
import { rssBytes } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';

const NS = 'bench';
const TIMINGS = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };
const arg = (name: string, dflt: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;

/** A replica: reports `{ reconciles, assigned }` as a JSON line every 200 ms. */
async function replica(shardId: string): Promise<void> {
  let reconciles = 0;
  const manager = new Manager({
    client: await Client.load(),
    logger: pino({ level: 'warn' }),
    healthProbeAddress: false,
    metricsAddress: false,
    sharding: { name: 'bench', shardId, namespace: NS, ...TIMINGS },
    maxConcurrentReconciles: 4,
  }).add(
    controller(ConfigMap)
      .inNamespace(NS)
      .withLabelSelector({ bench: 'sharding' })
      .reconcile(() => {
        reconciles++;
        return undefined;
      }),
  );
  const timer = setInterval(() => {
    process.stdout.write(
      `${JSON.stringify({ reconciles, assigned: manager.shardAssignments.configmap ?? 0 })}\n`,
    );
  }, 200);
  await manager.start();
  clearInterval(timer);
}

interface Replica {
  id: string;
  pid: number;
  last: { reconciles: number; assigned: number };
  kill(signal: NodeJS.Signals): Promise<void>;
}

function startReplica(self: string, kubeconfig: string, id: string): Replica {
  const child = spawn(process.execPath, [self, `--replica=${id}`], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const r: Replica = {
    id,
    pid: child.pid!,
    last: { reconciles: 0, assigned: 0 },
    kill: async (signal) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((ok) => child.once('exit', ok));
      child.kill(signal);
      await exited;
    },
  };
  child.on('exit', (code, signal) => console.error(`replica ${id} exited: ${code ?? signal}`));
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        r.last = JSON.parse(line);
      } catch {
        // not a report line
      }
    }
  });
  return r;
}

async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main(): Promise<void> {
  const objects = Number(arg('objects', '10000'));
  const self = fileURLToPath(import.meta.url);
  const root = resolve(dirname(self), '../../..');
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-bench-sharding-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const server = await startKubeloop({ root, kubeconfigPath: kubeconfig, args: ['--no-controllers'] });
  try {
    const client = await Client.load({ path: kubeconfig });
    await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
    const cms = client.api(ConfigMap, NS);
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < objects) {
          const i = next++;
          await cms.create({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `cm-${i}`, labels: { bench: 'sharding' } },
            data: { i: String(i) },
          });
        }
      }),
    );
    console.error(`created ${objects} ConfigMaps`);
    const rows: string[] = [];
    for (const shards of [1, 2, 3]) {
      const started = performance.now();
      const replicas = Array.from({ length: shards }, (_, i) =>
        startReplica(self, kubeconfig, `s${shards}-${i}`),
      );
      const total = (k: 'reconciles' | 'assigned') => replicas.reduce((s, r) => s + r.last[k], 0);
      const progress = setInterval(
        () => console.error(`${shards} shard(s): ${JSON.stringify(replicas.map((r) => r.last))}`),
        2_000,
      );
      await until(
        () => total('reconciles') >= objects && total('assigned') === objects,
        300_000,
        `${shards} shards`,
      );
      clearInterval(progress);
      const ms = performance.now() - started;
      // RSS once settled: the caches hold each shard's objects only.
      await new Promise((r) => setTimeout(r, 2_000));
      const rss = replicas.map(
        (r) => `${(rssBytes(r.pid) / 2 ** 20).toFixed(0)} MB (${r.last.assigned} objects)`,
      );
      rows.push(
        `${shards} shard(s): every object reconciled in ${(ms / 1000).toFixed(1)} s from spawn ` +
          `(${Math.round(objects / (ms / 1000))} reconciles/s overall); per replica RSS: ${rss.join(', ')}`,
      );
      if (shards === 3) {
        const victim = replicas[2]!;
        const killedAt = performance.now();
        await victim.kill('SIGKILL');
        const label = shardLabel('configmap');
        await until(
          async () => (await cms.list({ labelSelector: `${label}=${victim.id}` })).items.length === 0,
          120_000,
          'the killed shard’s objects to move',
        );
        const moved = performance.now() - killedAt;
        await until(
          () => replicas[0]!.last.assigned + replicas[1]!.last.assigned === objects,
          60_000,
          'the survivors to watch every object',
        );
        const watched = performance.now() - killedAt;
        rows.push(
          `kill -9 of 1 of 3 shards (lease ${TIMINGS.leaseDurationMs} ms, retry ${TIMINGS.retryPeriodMs} ms): ` +
            `its objects relabeled in ${(moved / 1000).toFixed(1)} s, in the survivors' caches in ${(watched / 1000).toFixed(1)} s`,
        );
      }
      for (const r of replicas) await r.kill('SIGTERM');
    }
    console.log(`sharding, ${objects} ConfigMaps, replicas as separate processes:`);
    for (const row of rows) console.log(`  ${row}`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const replicaId = arg('replica', '');
if (replicaId) await replica(replicaId);
else await main();
