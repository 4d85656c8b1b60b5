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
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type ClientComparison, compareClients } from './benchmarks/client-node.js';
import { type CrdCreateResult, runCrdCreates } from './benchmarks/crd-create.js';
import { type CreateResult, runCreates } from './benchmarks/create.js';
import { INFORMER_REFERENCE, type InformerSizeResult, runInformer } from './benchmarks/informer.js';
import { type ListResult, runList } from './benchmarks/list.js';
import { type ReconcileBenchResult, runReconcileBench, STATUS_DEFINITION } from './benchmarks/reconcile.js';
import { measureStartup, type NodeFloor, nodeFloor, type StartupResult } from './benchmarks/startup.js';
import { runWatch, type WatchResult } from './benchmarks/watch.js';
import { type ClientListResult, compareClientList } from './client-list.js';
import { OBJECT_BYTES, storedConfigMap } from './lib/objects.js';
import { cpuMs, idle, LoadMeter, rssBytes } from './lib/proc.js';
import { evaluate, fmt, type Row, renderTable } from './lib/report.js';
import { findEtcd, type ServerProcess, startEtcd, startKubeloop } from './lib/servers.js';
import { etcdTarget, kubeloopTarget, type Target } from './lib/targets.js';
import { REFERENCE, TARGETS } from './reference.js';

const BENCHMARKS = ['startup', 'create', 'list', 'watch', 'crd-create', 'informer', 'reconcile'] as const;
type Benchmark = (typeof BENCHMARKS)[number];

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const RERUN = 'rerun: npm run build && npm run bench';

const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    'no-etcd': { type: 'boolean', default: false },
    creates: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '16' },
    'startup-runs': { type: 'string', default: '5' },
    'list-runs': { type: 'string', default: '10' },
    watchers: { type: 'string', default: '10' },
    events: { type: 'string', default: '500' },
    'crd-creates': { type: 'string', default: '5000' },
    'informer-sizes': { type: 'string', default: '10000' },
    'informer-runs': { type: 'string', default: '3' },
    foos: { type: 'string', default: '1000' },
    'reconcile-runs': { type: 'string', default: '3' },
    'reconcile-on-runs': { type: 'string', default: '1' },
    'cpu-prof': { type: 'string' },
    json: { type: 'string', default: join(root, 'bench/results/latest.json') },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (args.help) {
  process.stdout.write(
    [
      'usage: npm run bench -- [options]',
      `  --only=${BENCHMARKS.join(',')}   run only these benchmarks (default: all)`,
      '  --no-etcd                        skip the etcd comparison',
      '  --creates=N                      objects created (and then listed) per server (default 10000)',
      '  --clients=N                      concurrent clients for creates (default 16)',
      '  --startup-runs=N                 fresh starts per server (default 5)',
      '  --list-runs=N                    full lists per server (default 10)',
      '  --watchers=N --events=N          watch streams and timed events (default 10, 500)',
      '  --crd-creates=N                  crd-create: objects of each kind (default 5000, in 2 rounds)',
      '  --informer-sizes=N,M --informer-runs=N   informer: object counts and runs (default 10000, 3)',
      '  --foos=N                         reconcile: Foos per burst (default 1000)',
      '  --reconcile-runs=N               reconcile: runs with the built-in controllers off (default 3)',
      '  --reconcile-on-runs=N            reconcile: runs with them on, for information (default 1; 0: none)',
      '  --cpu-prof=DIR                   write V8 CPU profiles of the kubeloop servers into DIR',
      '  --json=FILE                      results file (default bench/results/latest.json)',
      '',
    ].join('\n'),
  );
  process.exit(0);
}

const int = (name: string, v: string | undefined): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${v}`);
  return n;
};
const only = new Set<Benchmark>(
  args.only
    ? args.only.split(',').map((b) => {
        if (!(BENCHMARKS as readonly string[]).includes(b)) {
          throw new Error(`--only: unknown benchmark ${JSON.stringify(b)} (known: ${BENCHMARKS.join(', ')})`);
        }
        return b as Benchmark;
      })
    : BENCHMARKS,
);
const N = int('creates', args.creates);
const CLIENTS = int('clients', args.clients);
const STARTUP_RUNS = int('startup-runs', args['startup-runs']);
const LIST_RUNS = int('list-runs', args['list-runs']);
const WATCHERS = int('watchers', args.watchers);
const EVENTS = int('events', args.events);
const CRD_CREATES = int('crd-creates', args['crd-creates']);
const INFORMER_SIZES = args['informer-sizes'].split(',').map((v) => int('informer-sizes', v));
const INFORMER_RUNS = int('informer-runs', args['informer-runs']);
const FOOS = int('foos', args.foos);
const RECONCILE_RUNS = int('reconcile-runs', args['reconcile-runs']);
const RECONCILE_ON_RUNS = Number(args['reconcile-on-runs']) || 0;
const IDLE_MS = 2000;
const WARMUP_CREATES = 1000;
const cpuProfDir = args['cpu-prof'] ? resolve(args['cpu-prof']) : undefined;

type Mode = 'memory' | 'durable' | 'etcd';

/** What one server session measured. */
interface Session {
  create: CreateResult;
  rssWithObjectsMb: number;
  list?: ListResult;
  clientNode?: ClientComparison;
  /** kubeloop/client vs client-node, from `client-list.ts`; an error message when it failed. */
  sdkClient?: ClientListResult | { error: string };
  watch?: WatchResult;
  /** Restart on the data directory holding the objects (durable and etcd only). */
  restart?: { readyMs: number; rssMb: number };
  /** CPU share of other processes during the session (see {@link LoadMeter}). */
  otherCpuPercent: number;
}

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

/** Results of the benchmarks that also run alone (`node bench/dist/benchmarks/<name>.js`). */
interface Standalone {
  crdCreate?: CrdCreateResult;
  informer?: InformerSizeResult[];
  reconcile?: ReconcileBenchResult;
}

/** Runs the standalone benchmarks that `--only` asks for, each on its own fresh kubeloop server(s). */
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

/** The standalone benchmarks' rows, in the table's format. */
function standaloneRows(s: Standalone): Row[] {
  const rows: Row[] = [];
  const c = s.crdCreate;
  if (c) {
    rows.push(
      {
        metric: `creates/s, ${CLIENTS} clients, custom resource (20 fields + 2 CEL)`,
        variant: 'memory',
        unit: '/s',
        better: 'higher',
        ours: c.customResources.perSecond,
        note: `ConfigMaps in the same run: ${fmt(c.configMaps.perSecond, '/s')}; time per create ${c.timeRatio.toFixed(2)}× theirs`,
      },
      {
        metric: 'server CPU per create, custom resource',
        variant: 'memory',
        unit: 'ms',
        better: 'lower',
        ours: c.customResources.serverCpuMsPerCreate,
        // The target is relative: at most 1.25× a ConfigMap create measured in the same run.
        target: { op: '<', value: 1.25 * c.configMaps.serverCpuMsPerCreate },
        note: `${c.serverCpuRatio.toFixed(2)}× a ${c.requestBytes.configMap} B ConfigMap's ${c.configMaps.serverCpuMsPerCreate.toFixed(3)} ms (target ≤ 1.25×); ${c.sizedServerCpuRatio.toFixed(2)}× a ConfigMap of its size (${c.requestBytes.customResource} B): the schema's own cost`,
      },
    );
  }
  for (const r of s.informer ?? []) {
    const ours = r.variants.find((v) => v.variant === 'kubeloop');
    const theirs = r.variants.find((v) => v.variant === 'client-node');
    if (!ours) continue;
    const ten = r.objects === 10_000;
    const ref = INFORMER_REFERENCE;
    const n = r.objects.toLocaleString('en-US');
    rows.push(
      {
        metric: `informer synced, ${n} custom objects`,
        variant: 'memory',
        unit: 's',
        better: 'lower',
        ours: ours.syncedMs / 1000,
        ...(ten && { reference: ref.clientGo10kSyncSeconds }),
        ...(theirs && { target: { op: '<', value: (ref.targetRatio * theirs.syncedMs) / 1000 } }),
        note:
          `@kubernetes/client-node 1.x in the same run: ${theirs ? fmt(theirs.syncedMs / 1000, 's') : 'n/a'} (target ≤ ${ref.targetRatio}× it)` +
          (ten
            ? `; quoted: client-go ${ref.clientGo10kSyncSeconds} s, client-node ${ref.clientNode10kSyncSeconds} s`
            : ''),
      },
      {
        metric: `informer heap growth, ${n} custom objects`,
        variant: 'memory',
        unit: 'MB',
        better: 'lower',
        ours: ours.heapGrowthMb,
        ...(ten && { reference: ref.clientGo10kHeapMb }),
        ...(theirs && { target: { op: '<', value: ref.targetRatio * theirs.heapGrowthMb } }),
        note: `client-node in the same run: ${theirs ? fmt(theirs.heapGrowthMb, 'MB') : 'n/a'} (target ≤ ${ref.targetRatio}× it); RSS growth ${fmt(ours.rssGrowthMb, 'MB')}`,
      },
    );
  }
  if (s.reconcile) rows.push(...s.reconcile.rows);
  return rows;
}

/** Formats the results file as the repository's formatter would, so that committing it keeps `biome check` clean. */
function formatWithBiome(file: string): void {
  const biome = join(root, 'node_modules/.bin/biome');
  if (!existsSync(biome)) return;
  try {
    execFileSync(biome, ['format', '--write', file], { cwd: root, stdio: 'ignore' });
  } catch {
    // Unformatted JSON is still valid results.
  }
}

async function session(
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

function buildRows(startup: Partial<Record<Mode, StartupResult>>, s: Partial<Record<Mode, Session>>): Row[] {
  const rows: Row[] = [];
  const e = s.etcd;
  const kObjects = `${(N / 1000).toLocaleString('en-US')}k`;
  for (const mode of ['memory', 'durable'] as const) {
    const st = startup[mode];
    if (!st) continue;
    rows.push({
      metric: 'start-to-ready',
      variant: mode === 'durable' ? 'durable, empty' : mode,
      unit: 'ms',
      better: 'lower',
      ours: st.medianReadyMs,
      ...(startup.etcd && { etcd: startup.etcd.medianReadyMs }),
      reference: REFERENCE.startToReadyMs,
      target: TARGETS.startToReadyMs,
    });
  }
  const restart = s.durable?.restart;
  if (restart) {
    rows.push({
      metric: 'start-to-ready',
      variant: `durable, ${kObjects} objects`,
      unit: 'ms',
      better: 'lower',
      ours: restart.readyMs,
      ...(e?.restart && { etcd: e.restart.readyMs }),
    });
  }
  for (const mode of ['memory', 'durable'] as const) {
    const st = startup[mode];
    if (!st) continue;
    rows.push({
      metric: 'idle RSS',
      variant: mode === 'durable' ? 'durable, empty' : mode,
      unit: 'MB',
      better: 'lower',
      ours: st.medianRssMb,
      ...(startup.etcd && { etcd: startup.etcd.medianRssMb }),
      reference: REFERENCE.idleRssMb,
      target: TARGETS.idleRssMb,
    });
  }
  for (const mode of ['memory', 'durable'] as const) {
    const x = s[mode];
    if (!x) continue;
    rows.push({
      metric: `RSS holding ${kObjects} objects`,
      variant: mode,
      unit: 'MB',
      better: 'lower',
      ours: x.rssWithObjectsMb,
      ...(e && { etcd: e.rssWithObjectsMb }),
    });
  }
  if (only.has('create')) {
    for (const mode of ['memory', 'durable'] as const) {
      const x = s[mode];
      if (!x) continue;
      rows.push({
        metric: `creates/s, ${CLIENTS} clients`,
        variant: mode,
        unit: '/s',
        better: 'higher',
        ours: x.create.perSecond,
        ...(e && { etcd: e.create.perSecond }),
        reference: REFERENCE.createsPerSecond,
        target: mode === 'memory' ? TARGETS.createsPerSecondMemory : TARGETS.createsPerSecondDurable,
      });
    }
    for (const [p, key] of [
      ['p50', 'p50Ms'],
      ['p99', 'p99Ms'],
    ] as const) {
      for (const mode of ['memory', 'durable'] as const) {
        const x = s[mode];
        if (!x) continue;
        rows.push({
          metric: `create latency ${p}, ${CLIENTS} clients`,
          variant: mode,
          unit: 'ms',
          better: 'lower',
          ours: x.create[key],
          ...(e && { etcd: e.create[key] }),
        });
      }
    }
    for (const mode of ['memory', 'durable'] as const) {
      const x = s[mode];
      if (!x) continue;
      rows.push({
        metric: 'server CPU per create',
        variant: mode,
        unit: 'ms',
        better: 'lower',
        ours: x.create.serverCpuMsPerCreate,
        ...(e && { etcd: e.create.serverCpuMsPerCreate }),
        note:
          (mode === 'memory'
            ? 'CPU time (user + system) of the server process over the creates: unlike creates/s, it barely moves when other ' +
              `processes share the machine; 1000 / it = creates/s one core could sustain: `
            : '') + `${Math.round(1000 / x.create.serverCpuMsPerCreate).toLocaleString('en-US')}/s`,
      });
    }
  }
  for (const mode of ['memory', 'durable'] as const) {
    const l = s[mode]?.list;
    if (!l) continue;
    rows.push({
      metric: `list ${N.toLocaleString('en-US')}, full`,
      variant: mode,
      unit: 's',
      better: 'lower',
      ours: l.full.medianMs / 1000,
      ...(e?.list && { etcd: e.list.full.medianMs / 1000 }),
      reference: REFERENCE.list10kSeconds,
      ...(N === 10_000 && { target: TARGETS.list10kSeconds }),
    });
  }
  for (const mode of ['memory', 'durable'] as const) {
    const l = s[mode]?.list;
    if (!l) continue;
    rows.push({
      metric: `list ${N.toLocaleString('en-US')}, limit=${l.paged.limit} × ${l.paged.pages}`,
      variant: mode,
      unit: 's',
      better: 'lower',
      ours: l.paged.medianMs / 1000,
      ...(e?.list && { etcd: e.list.paged.medianMs / 1000 }),
    });
  }
  const cn = s.memory?.clientNode;
  if (cn) {
    rows.push({
      metric: `list ${N.toLocaleString('en-US')} via @kubernetes/client-node`,
      variant: 'memory',
      unit: 's',
      better: 'lower',
      ours: cn.clientNodeMs / 1000,
      reference: REFERENCE.list10kSeconds,
      note: `the same list by a raw keep-alive HTTPS GET + JSON.parse, alternated with it: ${fmt(cn.rawMs / 1000, 's')}`,
    });
  }
  const sdk = s.memory?.sdkClient;
  if (sdk && !('error' in sdk)) {
    rows.push({
      metric: `list ${N.toLocaleString('en-US')} via kubeloop/client`,
      variant: 'memory',
      unit: 's',
      better: 'lower',
      ours: sdk.kubeloop.medianMs / 1000,
      reference: REFERENCE.list10kSeconds,
      note: `@kubernetes/client-node in the same interleaved runs: ${fmt(sdk.clientNode.medianMs / 1000, 's')} (kubeloop/client ${sdk.speedup.toFixed(2)}× its speed)`,
    });
  }
  for (const [p, key] of [
    ['p50', 'p50Ms'],
    ['p99', 'p99Ms'],
  ] as const) {
    for (const mode of ['memory', 'durable'] as const) {
      const w = s[mode]?.watch;
      if (!w) continue;
      rows.push({
        metric: `watch latency ${p}, ${WATCHERS} watchers`,
        variant: mode,
        unit: 'ms',
        better: 'lower',
        ours: w[key],
        ...(e?.watch && { etcd: e.watch[key] }),
      });
    }
  }
  return rows;
}

function details(s: Partial<Record<Mode, Session>>, floor: NodeFloor | undefined): string[] {
  const out: string[] = ['where the time goes:'];
  if (floor) {
    out.push(
      `  node itself (\`node -e\`, the floor under any Node server): ${fmt(floor.readyMs, 'ms')} from spawn to its first line, ${fmt(floor.rssMb, 'MB')} RSS`,
    );
  }
  const name = (m: Mode) => (m === 'etcd' ? 'etcd' : `kubeloop (${m})`);
  for (const m of ['memory', 'durable', 'etcd'] as const) {
    const x = s[m];
    if (!x) continue;
    const c = x.create;
    out.push(
      `  ${name(m)} creates: ${c.total} in ${c.seconds.toFixed(2)} s, max ${fmt(c.maxMs, 'ms')}; ` +
        `server CPU ${c.serverCpuMsPerCreate.toFixed(3)} ms/create, bench client CPU ${c.clientCpuMsPerCreate.toFixed(3)} ms/create; ` +
        `response ${c.responseBytes} B; other processes used ${c.otherCpuPercent.toFixed(0)}% of the machine's CPU meanwhile`,
    );
    if (x.list) {
      const f = x.list.full;
      out.push(
        `  ${name(m)} list: ${(f.bytes / 2 ** 20).toFixed(2)} MiB; headers after ${fmt(f.medianHeadersMs, 'ms')}, ` +
          `last byte after ${fmt(f.medianMs, 'ms')}, client decode ${fmt(f.medianParseMs, 'ms')}`,
      );
    }
    if (x.watch) {
      out.push(
        `  ${name(m)} watch: ${x.watch.events} events × ${x.watch.watchers} watchers, max ${fmt(x.watch.maxMs, 'ms')}; ` +
          `the create itself p50 ${fmt(x.watch.createP50Ms, 'ms')}`,
      );
    }
  }
  const cn = s.memory?.clientNode;
  if (cn) {
    out.push(
      `  client side of a list: @kubernetes/client-node ${fmt(cn.clientNodeMs, 'ms')} vs raw GET + JSON.parse ${fmt(cn.rawMs, 'ms')}: ` +
        `${fmt(cn.clientNodeMs - cn.rawMs, 'ms')} (${(cn.clientNodeMs / cn.rawMs).toFixed(1)}×) spent in client-node itself ` +
        '(its fetch stack and the conversion of every item into its model classes)',
    );
  }
  const sdk = s.memory?.sdkClient;
  if (sdk && 'error' in sdk) out.push(`  kubeloop/client list comparison failed: ${sdk.error}`);
  return out;
}

/** How busy other processes kept the machine during each phase, with a warning when it matters. */
function loadReport(
  startup: Partial<Record<Mode, StartupResult>>,
  s: Partial<Record<Mode, Session>>,
): string[] {
  const parts: string[] = [];
  for (const m of ['memory', 'durable', 'etcd'] as const) {
    const st = startup[m];
    if (st) parts.push(`startup ${m} ${st.otherCpuPercent.toFixed(0)}%`);
  }
  for (const m of ['memory', 'durable', 'etcd'] as const) {
    const x = s[m];
    if (x)
      parts.push(
        `${m} session ${x.otherCpuPercent.toFixed(0)}% (creates ${x.create.otherCpuPercent.toFixed(0)}%)`,
      );
  }
  if (parts.length === 0) return [];
  const worst = Math.max(
    ...Object.values(startup).map((x) => x.otherCpuPercent),
    ...Object.values(s).map((x) => Math.max(x.otherCpuPercent, x.create.otherCpuPercent)),
  );
  const out = [`machine load: other processes used ${parts.join(', ')} of the CPU capacity`];
  if (worst > 10) {
    out.push(
      `  ! up to ${worst.toFixed(0)}% of the machine was busy with other work: figures are pessimistic and noisy; rerun on an idle machine`,
    );
  }
  return out;
}

function notes(etcdRun: boolean): string {
  const stored = Buffer.byteLength(storedConfigMap('bench', 'cm-000000'));
  return [
    'how to read this:',
    `  · objects: ConfigMaps of ${OBJECT_BYTES} B of JSON per POST; etcd gets kube-apiserver's key layout (/registry/configmaps/<ns>/<name>),`,
    `    a ${stored} B value (the object with uid and creationTimestamp) and its create transaction (put if create_revision = 0).`,
    '  · kubeloop figures are end to end over HTTPS with a bearer token: authentication, decoding, defaulting, validation,',
    "    admission, storage and encoding. etcd's are storage only, through its v3 JSON gateway over plain HTTP (which adds",
    '    JSON↔protobuf translation and an in-process gRPC hop that kube-apiserver does not pay). kube-apiserver = API work + etcd,',
    "    so ours/etcd > 1 on throughput (< 1 on time) means kubeloop does the whole job faster than kube-apiserver's storage alone.",
    "  · etcd always fsyncs its log, as kubeloop's durable mode does (SQLite WAL, synchronous=FULL, group commit).",
    '  · kube-apiserver figures are quoted from the issue (2-core machine of this kind), not measured here.',
    `  · servers run as separate processes; the ${CLIENTS} clients share one bench process (node:https keep-alive).`,
    etcdRun || args['no-etcd']
      ? ''
      : '  · etcd was not found: install it (Debian: etcd-server) or set ETCD=/path/to/etcd for the side-by-side figures.',
  ]
    .filter(Boolean)
    .join('\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
