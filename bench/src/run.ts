/**
 * `npm run bench`: measures the local control plane side by side with etcd (kube-apiserver's
 * storage, run here in the same conditions) and the quoted figures of a real kube-apiserver.
 *
 *   npm run build && npm run bench                     # everything
 *   npm run bench -- --only=create,list                # some benchmarks
 *   npm run bench -- --no-etcd --cpu-prof=/tmp/prof    # profile the kubeloop server processes
 *   npm run bench -- --only=crd-create,informer,reconcile   # the standalone benchmarks, in the same table
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { compareClients } from './benchmarks/client-node.js';
import { runCrdCreates } from './benchmarks/crd-create.js';
import { runCreates } from './benchmarks/create.js';
import { runInformer } from './benchmarks/informer.js';
import { runList } from './benchmarks/list.js';
import { runReconcileBench, STATUS_DEFINITION } from './benchmarks/reconcile.js';
import { measureStartup, type NodeFloor, nodeFloor, type StartupResult } from './benchmarks/startup.js';
import { runWatch } from './benchmarks/watch.js';
import { compareClientList } from './client-list.js';
import { OBJECT_BYTES } from './lib/objects.js';
import { cpuMs, idle, LoadMeter, rssBytes } from './lib/proc.js';
import { evaluate, fmt, renderTable } from './lib/report.js';
import { findEtcd, type ServerProcess, startEtcd, startKubeloop } from './lib/servers.js';
import { etcdTarget, kubeloopTarget, type Target } from './lib/targets.js';
import { REFERENCE } from './reference.js';
import {
  args,
  BENCHMARKS,
  CLIENTS,
  CRD_CREATES,
  cpuProfDir,
  EVENTS,
  FOOS,
  IDLE_MS,
  INFORMER_RUNS,
  INFORMER_SIZES,
  LIST_RUNS,
  type Mode,
  N,
  only,
  RECONCILE_ON_RUNS,
  RECONCILE_RUNS,
  RERUN,
  root,
  STARTUP_RUNS,
  WARMUP_CREATES,
  WATCHERS,
} from './run-options.js';
import {
  buildRows,
  details,
  loadReport,
  notes,
  type Session,
  type Standalone,
  standaloneRows,
} from './run-report.js';

async function main(): Promise<void> {
  const log = (s: string) => process.stdout.write(`${s}\n`);
  log(RERUN);
  log(`       one benchmark: npm run bench -- --only=${BENCHMARKS.join('|')} (comma-separated)`);
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  log(
    `machine: ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Linux ${release()}, node ${process.version}`,
  );
  const etcd = args['no-etcd'] ? undefined : findEtcd();
  if (etcd) log(`etcd ${etcd.version} (${etcd.path}): measured side by side, data on the same disk`);
  else {
    log(
      args['no-etcd']
        ? 'etcd: skipped (--no-etcd); only the quoted kube-apiserver figures are shown beside ours'
        : 'etcd: not found (install it, e.g. `apt-get install etcd-server`, or set ETCD=/path/to/etcd); only the quoted kube-apiserver figures are shown beside ours',
    );
  }
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-bench-'));
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const kubeloop = (name: string, durable: boolean) => {
    const dir = join(work, name);
    return startKubeloop({
      root,
      kubeconfigPath: join(dir, 'kubeconfig'),
      ...(durable && { dataDir: join(dir, 'data') }),
      ...(cpuProfDir && { cpuProfDir }),
    });
  };

  const startup: Partial<Record<Mode, StartupResult>> = {};
  let floor: NodeFloor | undefined;
  const sessions: Partial<Record<Mode, Session>> = {};
  const standalone: Standalone = {};
  try {
    if (only.has('startup')) {
      log(`\n[startup] ${STARTUP_RUNS} fresh starts each, RSS after ${IDLE_MS} ms idle`);
      floor = await nodeFloor(STARTUP_RUNS);
      startup.memory = await measureStartup(
        (i) => kubeloop(`startup-memory-${i}`, false),
        STARTUP_RUNS,
        IDLE_MS,
      );
      log(`  kubeloop (memory): ready ${startup.memory.readyMs.map((v) => v.toFixed(0)).join(', ')} ms`);
      startup.durable = await measureStartup(
        (i) => kubeloop(`startup-durable-${i}`, true),
        STARTUP_RUNS,
        IDLE_MS,
      );
      log(`  kubeloop (durable): ready ${startup.durable.readyMs.map((v) => v.toFixed(0)).join(', ')} ms`);
      if (etcd) {
        startup.etcd = await measureStartup(
          (i) => startEtcd(etcd.path, join(work, `startup-etcd-${i}`)),
          STARTUP_RUNS,
          IDLE_MS,
        );
        log(`  etcd: ready ${startup.etcd.readyMs.map((v) => v.toFixed(0)).join(', ')} ms`);
      }
    }

    if (only.has('create') || only.has('list') || only.has('watch')) {
      const modes: Mode[] = ['memory', 'durable', ...(etcd ? (['etcd'] as const) : [])];
      for (const mode of modes) {
        const start = (): Promise<ServerProcess> =>
          mode === 'etcd'
            ? startEtcd(etcd!.path, join(work, 'etcd'))
            : kubeloop(`session-${mode}`, mode === 'durable');
        log(`\n[${mode}] ${N.toLocaleString('en-US')} creates from ${CLIENTS} clients, then list and watch`);
        const load = new LoadMeter();
        const server = await start();
        const target = (mode === 'etcd' ? etcdTarget : kubeloopTarget)(server, CLIENTS);
        try {
          const kubeconfigPath = join(work, `session-${mode}`, 'kubeconfig');
          sessions[mode] = await session(target, mode, kubeconfigPath, load, log);
        } finally {
          await target.close();
          await server.stop();
        }
        if (mode !== 'memory' && only.has('startup')) {
          // A restart reads the whole data directory back: the start time that grows with the data.
          const again = await start();
          try {
            await idle(IDLE_MS);
            sessions[mode]!.restart = { readyMs: again.readyMs, rssMb: rssBytes(again.pid) / 2 ** 20 };
            log(`  restart with ${N.toLocaleString('en-US')} objects: ready ${again.readyMs.toFixed(0)} ms`);
          } finally {
            await again.stop();
          }
        }
      }
    }
    await runStandalone(standalone, work, log);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  const rows = [...buildRows(startup, sessions), ...standaloneRows(standalone)];
  const results = rows.map(evaluate);
  log('');
  log(renderTable(results, etcd ? `etcd ${etcd.version}` : 'etcd (not run)'));
  log('');
  const why = details(sessions, floor);
  if (why.length > 1) for (const line of why) log(line);
  for (const line of loadReport(startup, sessions)) log(line);
  log('');
  log(notes(Boolean(etcd)));

  mkdirSync(dirname(args.json), { recursive: true });
  writeFileSync(
    args.json,
    `${JSON.stringify(
      {
        rerun: 'npm run build && npm run bench',
        date: new Date().toISOString(),
        machine: {
          cpus: cpus().length,
          cpu,
          memoryGiB: totalmem() / 2 ** 30,
          kernel: release(),
          node: process.version,
        },
        etcd: etcd ? { version: etcd.version, transport: 'v3 JSON gateway over plain HTTP' } : null,
        reference: REFERENCE,
        options: {
          only: [...only],
          creates: N,
          clients: CLIENTS,
          objectBytes: OBJECT_BYTES,
          watchers: WATCHERS,
          events: EVENTS,
          ...(only.has('crd-create') && { crdCreates: CRD_CREATES }),
          ...(only.has('informer') && { informerSizes: INFORMER_SIZES, informerRuns: INFORMER_RUNS }),
          ...(only.has('reconcile') && {
            foos: FOOS,
            reconcileRuns: RECONCILE_RUNS,
            reconcileOnRuns: RECONCILE_ON_RUNS,
            reconcileStatusDefinition: STATUS_DEFINITION,
          }),
        },
        rows: results,
        machineLoad: loadReport(startup, sessions),
        raw: { nodeFloor: floor, startup, sessions, ...standalone },
      },
      // Four significant digits: more would be noise, and the file is meant to be read and diffed.
      (_key, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(4)) : v),
      2,
    )}\n`,
  );
  formatWithBiome(args.json);
  log(`results: ${args.json}`);
  if (cpuProfDir)
    log(
      `CPU profiles of the kubeloop servers (and of the reconcile benchmark's operator): ${cpuProfDir} (open in Chrome DevTools → Performance)`,
    );
  log(RERUN);
}

async function runStandalone(out: Standalone, work: string, log: (s: string) => void): Promise<void> {
  if (only.has('crd-create')) {
    log(
      `\n[crd-create] ${CRD_CREATES.toLocaleString('en-US')} each of ConfigMaps, Gadgets (20 fields + 2 CEL rules) and Gadget-sized ConfigMaps, ${CLIENTS} clients`,
    );
    const server = await startKubeloop({
      root,
      kubeconfigPath: join(work, 'crd-create', 'kubeconfig'),
      ...(cpuProfDir && { cpuProfDir }),
    });
    const target = kubeloopTarget(server, CLIENTS);
    try {
      out.crdCreate = await runCrdCreates(target, CRD_CREATES, CLIENTS, { rounds: 2 });
    } finally {
      await target.close();
      await server.stop();
    }
    const r = out.crdCreate;
    log(
      `  server CPU per create: ConfigMap ${r.configMaps.serverCpuMsPerCreate.toFixed(3)} ms, Gadget ${r.customResources.serverCpuMsPerCreate.toFixed(3)} ms (${r.serverCpuRatio.toFixed(2)}×)`,
    );
  }
  if (only.has('informer')) {
    log(`\n[informer] informers of ${INFORMER_SIZES.join(', ')} custom objects, ${INFORMER_RUNS} runs each`);
    const kubeconfigPath = join(work, 'informer', 'kubeconfig');
    const server = await startKubeloop({ root, kubeconfigPath });
    try {
      out.informer = await runInformer(kubeconfigPath, { sizes: INFORMER_SIZES, runs: INFORMER_RUNS, log });
    } finally {
      await server.stop();
    }
  }
  if (only.has('reconcile')) {
    log(
      `\n[reconcile] the sample-controller operator: ${FOOS.toLocaleString('en-US')} Foos from ${CLIENTS} clients, 2 workers`,
    );
    log(`  ${STATUS_DEFINITION}`);
    out.reconcile = await runReconcileBench({
      root,
      foos: FOOS,
      clients: CLIENTS,
      workers: 2,
      replicas: 1,
      nodes: 20,
      runs: RECONCILE_RUNS,
      onRuns: RECONCILE_ON_RUNS,
      // Information only: the wait for simulated pods would double the benchmark's time.
      waitAvailable: false,
      ...(cpuProfDir && { cpuProfDir }),
      log,
    });
  }
}

function formatWithBiome(file: string): void {
  const biome = join(root, 'node_modules/.bin/biome');
  if (!existsSync(biome)) return;
  try {
    execFileSync(biome, ['format', '--write', file], { cwd: root, stdio: 'ignore' });
  } catch {
    // Unformatted JSON is still valid results.
  }
}

export async function session(
  target: Target,
  mode: Mode,
  kubeconfigPath: string,
  load: LoadMeter,
  log: (s: string) => void,
): Promise<Session> {
  for (const ns of ['warmup', 'bench', 'bench-watch']) await target.prepare(ns);
  // The first thousand requests run while V8 is still compiling the hot paths: warm up, then clean up.
  await runCreates(target, 'warmup', WARMUP_CREATES, CLIENTS);
  await target.deleteAll('warmup');

  const create = await runCreates(target, 'bench', N, CLIENTS);
  log(
    `  creates: ${fmt(create.perSecond, '/s')}, p50 ${fmt(create.p50Ms, 'ms')}, p99 ${fmt(create.p99Ms, 'ms')}`,
  );
  await idle(IDLE_MS);
  const out: Session = {
    create,
    rssWithObjectsMb: rssBytes(target.server.pid) / 2 ** 20,
    otherCpuPercent: 0,
  };
  if (only.has('list')) {
    out.list = await runList(target, 'bench', N, { runs: LIST_RUNS, pagedRuns: 5, limit: 500, warmup: 2 });
    log(
      `  list ${N}: ${fmt(out.list.full.medianMs, 'ms')}; limit=500: ${fmt(out.list.paged.medianMs, 'ms')}`,
    );
    if (mode === 'memory') {
      out.clientNode = await compareClients(target, kubeconfigPath, 'bench', N, { runs: 7, warmup: 1 });
      log(
        `  list ${N} via @kubernetes/client-node: ${fmt(out.clientNode.clientNodeMs, 'ms')} ` +
          `(raw GET + JSON.parse: ${fmt(out.clientNode.rawMs, 'ms')})`,
      );
      try {
        const sdk = await compareClientList(kubeconfigPath, 'bench', N, { runs: 7, warmup: 1 });
        out.sdkClient = sdk;
        log(`  list ${N} via kubeloop/client: ${fmt(sdk.kubeloop.medianMs, 'ms')}`);
      } catch (err) {
        // The SDK client is measured here but is not what this bench is about: report, go on.
        out.sdkClient = { error: err instanceof Error ? err.message : String(err) };
        log(`  list ${N} via kubeloop/client failed: ${out.sdkClient.error}`);
      }
    }
  }
  if (only.has('watch')) {
    out.watch = await runWatch(target, 'bench-watch', WATCHERS, EVENTS, 50);
    log(`  watch: p50 ${fmt(out.watch.p50Ms, 'ms')}, p99 ${fmt(out.watch.p99Ms, 'ms')}`);
  }
  load.addChild(cpuMs(target.server.pid));
  out.otherCpuPercent = load.otherPercent();
  return out;
}
main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
