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
 * The kill -9 is of a replica that is not the sharder, and is timed from the killed replica's
 * Lease (its expiry: `renewTime + leaseDurationSeconds`), the point from which the spec'd bound
 * (lease duration + retry period from the last renewal) counts.
 *
 *   npm run build && node bench/dist/benchmarks/sharding.js --objects=10000 [--workers=16]
 *
 * `--done-when` runs issue 25's acceptance scenario instead (3 replica processes, 3,000 objects
 * by default, churn throughout; balance, kill, a fourth replica, overlaps), printing each clause
 * and exiting with 1 if one does not hold or a replica stops on its own (its Lease lost):
 *
 *   node bench/dist/benchmarks/sharding.js --done-when --objects=3000 [--lease=4000]
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, ConfigMap, Lease } from 'kubeloop/client';
import { controller, HashRing, Manager, shardLabel } from 'kubeloop/runtime';
import { destination, pino } from 'pino';
import { rssBytes } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';

const NS = 'bench';
const arg = (name: string, dflt: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
/**
 * `--lease=ms` (default 15 000, client-go's): renew deadline ¾ of it, retry period ⅛. A replica
 * that cannot renew within the deadline stops: on a machine loaded by others (20 runnable
 * processes on 2 cores), the server went without CPU for 2 s at a time, longer than a 4 s
 * lease's 3 s deadline allows. `--lease=4000` on a quiet machine.
 */
const LEASE_MS = Number(arg('lease', '15000'));
const TIMINGS = {
  leaseDurationMs: LEASE_MS,
  renewDeadlineMs: Math.round(LEASE_MS * 0.75),
  retryPeriodMs: Math.round(LEASE_MS / 8),
};

/**
 * A replica: reports `{ reconciles, assigned }` as a JSON line every 50 ms; with
 * `--record=FILE`, writes `[key, start, end]` per reconcile there (wall-clock ms, sub-ms precision).
 */
async function replica(shardId: string): Promise<void> {
  let reconciles = 0;
  // Records go to a file (an async stream): stdout to a pipe is synchronous on Linux, and a
  // reader busy elsewhere would stall the replica's event loop, and its Lease renewals with it.
  const recordPath = arg('record', '');
  const records = recordPath ? createWriteStream(recordPath) : undefined;
  const workers = Number(arg('workers', '0'));
  // The replicas the operator's Deployment would declare: the sharder waits for them before
  // assigning (without it the first replica up takes everything, then hands half of it over).
  const replicas = Number(arg('replicas', '0'));
  const clock = () => performance.timeOrigin + performance.now();
  const manager = new Manager({
    client: await Client.load(),
    // Logs to stderr: stdout carries the reports.
    logger: pino({ level: 'warn' }, destination(2)),
    healthProbeAddress: false,
    metricsAddress: false,
    sharding: {
      name: 'bench',
      shardId,
      namespace: NS,
      ...TIMINGS,
      ...(workers > 0 && { sharderWorkers: workers }),
      ...(replicas > 0 && { replicas }),
    },
    maxConcurrentReconciles: 4,
  }).add(
    controller(ConfigMap)
      .inNamespace(NS)
      .withLabelSelector({ bench: 'sharding' })
      .reconcile(async (cm) => {
        reconciles++;
        if (!records) return undefined;
        const start = clock();
        // A reconcile that takes a little time, so that handovers meet some in flight.
        await new Promise((r) => setTimeout(r, 2));
        records.write(`${JSON.stringify([cm.metadata!.name, start, clock()])}\n`);
        return undefined;
      }),
  );
  const timer = setInterval(() => {
    process.stdout.write(
      `${JSON.stringify({ reconciles, assigned: manager.shardAssignments.configmap ?? 0 })}\n`,
    );
  }, 50);
  await manager.start();
  clearInterval(timer);
}

interface Replica {
  id: string;
  pid: number;
  last: { reconciles: number; assigned: number };
  /** Its reconcile records' file, with `--record`. */
  recordPath?: string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

function startReplica(self: string, kubeconfig: string, id: string, extra: string[] = []): Replica {
  const child = spawn(process.execPath, [self, `--replica=${id}`, `--lease=${LEASE_MS}`, ...extra], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const r: Replica = {
    id,
    pid: child.pid!,
    last: { reconciles: 0, assigned: 0 },
    ...(extra.find((a) => a.startsWith('--record=')) && {
      recordPath: extra.find((a) => a.startsWith('--record='))!.slice('--record='.length),
    }),
    kill: async (signal) => {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((ok) => child.once('exit', ok));
      child.kill(signal);
      await exited;
    },
  };
  let stopping = false;
  child.on('exit', (code, signal) => {
    console.error(`replica ${id} exited: ${code ?? signal}`);
    // A replica that stopped on its own (its shard Lease lost) fails the run at once.
    if (!stopping) unexpectedExits.push(`${id} (${code ?? signal})`);
  });
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

/** Replicas that exited without being told to. */
const unexpectedExits: string[] = [];

async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (unexpectedExits.length > 0)
      throw new Error(`waiting for ${what}: replica ${unexpectedExits.join(', ')} exited on its own`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function main(): Promise<void> {
  const objects = Number(arg('objects', '10000'));
  const workerArgs = arg('workers', '') ? [`--workers=${arg('workers', '')}`] : [];
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
        startReplica(self, kubeconfig, `s${shards}-${i}`, [...workerArgs, `--replicas=${shards}`]),
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
        const kill = await killOne(client, replicas, cms, objects);
        rows.push(
          `kill -9 of 1 of 3 shards (not the sharder; lease ${TIMINGS.leaseDurationMs} ms, retry ${TIMINGS.retryPeriodMs} ms): ` +
            `of its ${kill.objects} objects the first reached a survivor's cache ${kill.firstMs} ms and the last ${kill.allMs} ms after its Lease expired ` +
            `(${(kill.sinceKillMs / 1000).toFixed(1)} s after the kill; bound for the start: the retry period, ${kill.boundMs} ms)`,
        );
      }
      for (const r of replicas) await r.kill('SIGTERM');
    }
    console.log(
      `sharding, ${objects} ConfigMaps, replicas as separate processes (sharder workers: ${arg('workers', 'default')}):`,
    );
    for (const row of rows) console.log(`  ${row}`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

type ConfigMapApi = ReturnType<Client['api']>;

/**
 * kill -9 of a replica that is not the sharder; times the move of its objects from its Lease's
 * expiry (`renewTime + leaseDurationSeconds`, read once it is dead: nothing renews it any more).
 */
async function killOne(client: Client, replicas: Replica[], cms: ConfigMapApi, objects?: number) {
  const leases = client.api(Lease, NS);
  const sharder = (await leases.get('bench-sharder')).spec?.holderIdentity;
  const victim = [...replicas].reverse().find((r) => r.id !== sharder)!;
  const survivors = replicas.filter((r) => r !== victim);
  const label = shardLabel('configmap');
  // Metadata only, and not too often: full lists of thousands of objects would load the server
  // and slow the very move being timed.
  const onVictim = async () =>
    (await cms.list({ labelSelector: `${label}=${victim.id}`, metadataOnly: true })).items.length;
  const inSurvivors = () => survivors.reduce((n, r) => n + r.last.assigned, 0);
  const before = await onVictim();
  const base = inSurvivors();
  const killedAt = Date.now();
  await victim.kill('SIGKILL');
  const lease = await leases.get(`bench-shard-${victim.id}`);
  const expiry = Date.parse(lease.spec!.renewTime!) + lease.spec!.leaseDurationSeconds! * 1000;
  let first = 0;
  if (objects !== undefined) {
    // No churn: the survivors' own reports (every 50 ms) say when the objects reached their
    // caches, without asking the server anything.
    await until(
      () => {
        const n = inSurvivors();
        if (n > base && !first) first = Date.now();
        return n >= objects;
      },
      120_000,
      'the survivors to watch every object',
      10,
    );
  } else {
    await until(
      async () => {
        const n = await onVictim();
        if (n < before && !first) first = Date.now();
        return n === 0;
      },
      120_000,
      'the killed shard’s objects to move',
      100,
    );
  }
  const all = Date.now();
  return {
    victim,
    objects: before,
    firstMs: first - expiry,
    allMs: all - expiry,
    sinceKillMs: all - killedAt,
    boundMs: TIMINGS.retryPeriodMs,
  };
}

/** Issue 25's acceptance scenario, each clause printed with its figure. */
async function doneWhen(): Promise<void> {
  const objects = Number(arg('objects', '3000'));
  const workerArgs = arg('workers', '') ? [`--workers=${arg('workers', '')}`] : [];
  const self = fileURLToPath(import.meta.url);
  const root = resolve(dirname(self), '../../..');
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-bench-sharding-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const server = await startKubeloop({ root, kubeconfigPath: kubeconfig, args: ['--no-controllers'] });
  const label = shardLabel('configmap');
  const replicas: Replica[] = [];
  try {
    const client = await Client.load({ path: kubeconfig });
    await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
    const cms = client.api(ConfigMap, NS);
    const cm = (name: string): ConfigMap => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { bench: 'sharding' } },
      data: { v: '0' },
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < objects) await cms.create(cm(`cm-${next++}`));
      }),
    );
    const start = (id: string) => {
      const r = startReplica(self, kubeconfig, id, [
        `--record=${join(dir, `${id}.rec`)}`,
        '--replicas=3',
        ...workerArgs,
      ]);
      replicas.push(r);
      return r;
    };
    /** name → shard once every object is on its shard of `live` and none drains. */
    const settled = async (live: string[]) => {
      const ring = new HashRing(live);
      const items = (await cms.list({ labelSelector: 'bench=sharding', metadataOnly: true })).items;
      const out = new Map<string, string>();
      for (const o of items) {
        const l = o.metadata?.labels ?? {};
        const want = ring.shardFor(`${NS}/${o.metadata!.name}`);
        if (l[label] !== want || l['sharding.kubeloop.dev/drain-configmap'] !== undefined) return undefined;
        out.set(o.metadata!.name!, want!);
      }
      return out;
    };
    const settle = async (live: string[], what: string) => {
      let got: Map<string, string> | undefined;
      await until(
        async () => {
          got = await settled(live);
          return got !== undefined;
        },
        300_000,
        what,
        // Each check lists every object: not so often that the lists load the server.
        500,
      );
      return got!;
    };
    const lines: string[] = [];
    const failed: string[] = [];
    /** A clause of the scenario: printed, and the run fails (exit code 1) if it does not hold. */
    const clause = (text: string, pass: boolean, name: string) => {
      lines.push(`${text}: ${pass ? 'PASS' : 'MISS'}`);
      if (!pass) failed.push(name);
    };
    const ids = ['d-0', 'd-1', 'd-2'];
    for (const id of ids) start(id);
    const first = await settle(ids, '3 shards');
    const counts = ids.map((id) => [...first.values()].filter((s) => s === id).length);
    const worst = Math.max(...counts.map((n) => Math.abs(n / (objects / 3) - 1)));
    clause(
      `balance over 3 shards: ${counts.join(' / ')} (worst ${(worst * 100).toFixed(1)} % from a third; bound ±15 %)`,
      worst <= 0.15,
      'balance',
    );

    // Churn throughout: creates, updates, deletes.
    let churning = true;
    let extra = 0;
    const churn = (async () => {
      while (churning) {
        const i = Math.floor(Math.random() * objects);
        await Promise.allSettled([
          cms.create(cm(`x-${extra++}`)),
          cms.patch(`cm-${i}`, { data: { v: String(Math.random()) } }),
          ...(extra % 3 === 0 ? [cms.delete(`x-${extra - 2}`)] : []),
        ]);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    start('d-3');
    const live4 = [...ids, 'd-3'];
    const second = await settle(live4, '4 shards');
    const moved = [...first.keys()].filter((k) => second.has(k) && second.get(k) !== first.get(k));
    const toNew = moved.every((k) => second.get(k) === 'd-3');
    const share = moved.length / objects;
    clause(
      `a fourth replica: ${moved.length} of ${objects} objects moved (${(share * 100).toFixed(1)} %; about a quarter), ${toNew ? 'all' : 'NOT all'} to the newcomer`,
      share > 0.18 && share < 0.32 && toNew,
      'a fourth replica',
    );

    // Under churn the total moves: the settled ring below checks the survivors, not a count.
    const kill = await killOne(client, replicas.slice(0, 4), cms);
    const victim = kill.victim;
    const live3 = live4.filter((id) => id !== victim.id);
    churning = false;
    await churn;
    await settle(live3, '3 shards after the kill');
    // The bound is of the move's start: its end adds one label write per object (16 at once).
    clause(
      `kill -9 of ${victim.id} (not the sharder): its ${kill.objects} objects started moving ${kill.firstMs} ms after its Lease expired (bound: the retry period, ${kill.boundMs} ms, i.e. lease ${TIMINGS.leaseDurationMs} ms + retry ${TIMINGS.retryPeriodMs} ms from the last renewal), and had all moved ${kill.allMs} ms after it`,
      kill.firstMs <= kill.boundMs,
      'kill',
    );
    // Let the last reconciles report, then look for two replicas reconciling one object at once.
    await new Promise((r) => setTimeout(r, 2_000));
    const byKey = new Map<string, { id: string; start: number; end: number }[]>();
    let total = 0;
    for (const r of replicas) {
      const recs = readFileSync(r.recordPath!, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as [string, number, number]);
      for (const [key, s, e] of recs) {
        total++;
        const list = byKey.get(key) ?? [];
        list.push({ id: r.id, start: s, end: e });
        byKey.set(key, list);
      }
    }
    let overlaps = 0;
    for (const list of byKey.values()) {
      list.sort((a, b) => a.start - b.start);
      let last: { id: string; end: number } | undefined;
      for (const x of list) {
        if (last && x.id !== last.id && x.start < last.end) overlaps++;
        if (!last || x.end > last.end) last = x;
      }
    }
    clause(
      `overlaps under churn (${extra} creates, as many updates, ${Math.floor(extra / 3)} deletes): ${overlaps} in ${total} reconciles of ${byKey.size} objects across ${replicas.length} replicas`,
      overlaps === 0,
      'overlaps',
    );
    console.log(
      `sharding, issue 25's acceptance scenario, ${objects} ConfigMaps, replicas as separate processes (lease ${TIMINGS.leaseDurationMs} ms):`,
    );
    for (const l of lines) console.log(`  ${l}`);
    console.log(failed.length === 0 ? 'PASS' : `FAIL: ${failed.join(', ')}`);
    if (failed.length > 0) process.exitCode = 1;
  } finally {
    for (const r of replicas) await r.kill('SIGTERM');
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const replicaId = arg('replica', '');
if (replicaId) await replica(replicaId);
else if (process.argv.includes('--done-when'))
  await doneWhen().catch((err: unknown) => {
    // A replica lost, a step that never settled: the scenario failed.
    console.log(`FAIL: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
else await main();
