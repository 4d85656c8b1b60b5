import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { HttpClient, type Stream } from '../lib/http.js';
import { cpuMs, LoadMeter, peakRssBytes, rssBytes } from '../lib/proc.js';
import { terminate } from '../lib/process.js';
import { evaluate, fmt, type Row, renderTable } from '../lib/report.js';
import { startKubeloop } from '../lib/servers.js';
import { percentile } from '../lib/stats.js';
import { reconcileRows } from './reconcile-report.js';
import {
  fetchMetrics,
  foo,
  fooName,
  GROUP,
  installCrd,
  isObj,
  metricSum,
  nodesReady,
  type OperatorProcess,
  requestsByMethod,
  socketCount,
  startOperator,
  VERSION,
  watchFrom,
} from './reconcile-support.js';
import {
  type Burst,
  type ReconcileOptions,
  type ReconcileRun,
  STATUS_DEFINITION,
} from './reconcile-types.js';

interface Session {
  o: ReconcileOptions;
  http: HttpClient;
  serverPid: number;
  operator: OperatorProcess;
  timeoutMs: number;
  log: (s: string) => void;
}

/** Creates `o.foos` Foos in `namespace` from `o.clients` clients and times what follows. */
export async function burst(x: Session, namespace: string): Promise<Burst> {
  const { o, http, serverPid, operator, timeoutMs, log } = x;
  const operatorPid = operator.pid;
  const ns = await http.request(
    'POST',
    '/api/v1/namespaces',
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }),
  );
  if (ns.status !== 201) throw new Error(`create namespace ${namespace}: ${ns.status}`);
  const streams: Stream[] = [];
  // Per Foo: when its create was answered, when its status first showed, its last availableReplicas.
  const createdAt = new Map<string, bigint>();
  const statusAt = new Map<string, bigint>();
  const available = new Map<string, number>();
  const deploymentAt = new Map<string, bigint>();
  let lastStatus = 0n;
  let lastDeployment = 0n;
  let fullyAvailable = 0;
  let availableAt = 0n;
  let converged: (() => void) | undefined;
  const convergence = new Promise<void>((r) => {
    converged = r;
  });
  let allAvailable: (() => void) | undefined;
  const availability = new Promise<void>((r) => {
    allAvailable = r;
  });
  const check = () => {
    if (statusAt.size === o.foos && deploymentAt.size === o.foos) converged?.();
  };
  try {
    streams.push(
      await watchFrom(http, `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/foos`, (type, obj, at) => {
        if (type !== 'ADDED' && type !== 'MODIFIED') return;
        const name = isObj(obj.metadata) ? obj.metadata.name : undefined;
        const n = isObj(obj.status) ? obj.status.availableReplicas : undefined;
        if (typeof name !== 'string' || typeof n !== 'number' || !Number.isInteger(n)) return;
        if (!statusAt.has(name)) {
          statusAt.set(name, at);
          lastStatus = at;
          check();
        }
        const was = available.get(name) === o.replicas;
        available.set(name, n);
        const is = n === o.replicas;
        if (is !== was) fullyAvailable += is ? 1 : -1;
        if (fullyAvailable === o.foos) {
          availableAt = at;
          allAvailable?.();
        }
      }),
    );
    streams.push(
      await watchFrom(http, `/apis/apps/v1/namespaces/${namespace}/deployments`, (type, obj, at) => {
        if (type !== 'ADDED') return;
        const name = isObj(obj.metadata) ? obj.metadata.name : undefined;
        if (typeof name !== 'string' || deploymentAt.has(name)) return;
        deploymentAt.set(name, at);
        lastDeployment = at;
        check();
      }),
    );

    const before = await fetchMetrics(operator.metricsUrl);
    const reconciles0 = metricSum(before, 'controller_runtime_reconcile_total', { controller: 'foo' });
    const errors0 = metricSum(before, 'controller_runtime_reconcile_errors_total', { controller: 'foo' });
    const load = new LoadMeter();
    const serverCpu0 = cpuMs(serverPid);
    const operatorCpu0 = cpuMs(operatorPid);
    const bench0 = process.cpuUsage();
    let peakSockets = socketCount(operatorPid);
    const sampler = setInterval(() => {
      peakSockets = Math.max(peakSockets, socketCount(operatorPid));
    }, 50);
    const t0 = process.hrtime.bigint();
    let lastCreate = t0;
    let next = 0;
    const creator = async () => {
      for (let i = next++; i < o.foos; i = next++) {
        const name = fooName(i);
        const res = await http.request(
          'POST',
          `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/foos`,
          foo(namespace, name, o.replicas),
        );
        if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.body.toString()}`);
        const at = process.hrtime.bigint();
        createdAt.set(name, at);
        if (at > lastCreate) lastCreate = at;
      }
    };
    const creators = Promise.all(Array.from({ length: o.clients }, creator));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `not converged after ${timeoutMs} ms: ${createdAt.size} created, ${statusAt.size} with status, ${deploymentAt.size} Deployments`,
            ),
          ),
        timeoutMs,
      );
    });
    try {
      await Promise.race([Promise.all([creators, convergence]), timeout]);
    } finally {
      clearTimeout(timer);
      clearInterval(sampler);
    }
    // Read at once: what the operator did by convergence, and its memory then.
    const after = await fetchMetrics(operator.metricsUrl);
    const operatorRss = rssBytes(operatorPid);
    const operatorPeak = peakRssBytes(operatorPid);
    const serverRss = rssBytes(serverPid);
    const operatorCpu = cpuMs(operatorPid) - operatorCpu0;
    const serverCpu = cpuMs(serverPid) - serverCpu0;
    const bench = process.cpuUsage(bench0);
    load.addChild(operatorCpu);
    load.addChild(serverCpu);
    const otherCpuPercent = load.otherPercent();

    const ms = (at: bigint) => Number(at - t0) / 1e6;
    const convergedMs = Math.max(ms(lastStatus), ms(lastDeployment));
    const latencies: number[] = [];
    for (const [name, created] of createdAt) {
      const seen = statusAt.get(name);
      // The status can only follow the create; a watch event read before the create's response is 0.
      if (seen !== undefined) latencies.push(Math.max(0, Number(seen - created) / 1e6));
    }
    const reconciles =
      metricSum(after, 'controller_runtime_reconcile_total', { controller: 'foo' }) - reconciles0;
    const requests0 = requestsByMethod(before);
    const b: Burst = {
      convergedMs,
      createsMs: ms(lastCreate),
      statusMs: ms(lastStatus),
      deploymentsMs: ms(lastDeployment),
      reconciles,
      reconcileErrors:
        metricSum(after, 'controller_runtime_reconcile_errors_total', { controller: 'foo' }) - errors0,
      reconcilesPerSecond: reconciles / (convergedMs / 1000),
      latency: {
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        maxMs: percentile(latencies, 100),
      },
      operator: {
        rssMb: operatorRss / 2 ** 20,
        peakRssMb: operatorPeak / 2 ** 20,
        cpuMs: operatorCpu,
        requests: Object.fromEntries(
          Object.entries(requestsByMethod(after)).map(([m, n]) => [m, n - (requests0[m] ?? 0)]),
        ),
        peakSockets,
      },
      server: { rssMb: serverRss / 2 ** 20, cpuMs: serverCpu },
      benchCpuMs: (bench.user + bench.system) / 1000,
      otherCpuPercent,
    };
    log(
      `  ${namespace}: converged in ${fmt(convergedMs / 1000, 's')} (creates answered by ${fmt(b.createsMs / 1000, 's')}); ` +
        `${reconciles} reconciles (${fmt(b.reconcilesPerSecond, '/s')}, ${b.reconcileErrors} errors); ` +
        `create→status p50 ${fmt(b.latency.p50Ms, 'ms')}, p99 ${fmt(b.latency.p99Ms, 'ms')}; operator RSS ${fmt(b.operator.rssMb, 'MB')}`,
    );
    log(
      `    CPU per Foo: operator ${(operatorCpu / o.foos).toFixed(2)} ms, server ${(serverCpu / o.foos).toFixed(2)} ms, ` +
        `bench ${(b.benchCpuMs / o.foos).toFixed(2)} ms; other processes used ${otherCpuPercent.toFixed(0)}% of the machine; ` +
        `operator requests ${Object.entries(b.operator.requests)
          .map(([m, n]) => `${m} ${n}`)
          .join(', ')} over at most ${peakSockets} sockets`,
    );
    if (o.controllers && (o.waitAvailable ?? true)) {
      let t: NodeJS.Timeout | undefined;
      const reached = await Promise.race([
        availability.then(() => true),
        new Promise<boolean>((r) => {
          t = setTimeout(() => r(false), timeoutMs);
        }),
      ]);
      clearTimeout(t);
      b.availableMs = reached ? ms(availableAt) : Number.NaN;
      log(
        reached
          ? `    every Foo reports availableReplicas = ${o.replicas} after ${fmt(b.availableMs / 1000, 's')}`
          : `    not every Foo reported availableReplicas = ${o.replicas} within ${timeoutMs} ms (${fullyAvailable} did)`,
      );
    }
    return b;
  } finally {
    for (const s of streams) s.close();
  }
}

/**
 * One run: a fresh control plane and operator, a cold burst of Foos, then a warm one, each timed;
 * everything stopped at the end.
 */
export async function runReconcile(o: ReconcileOptions): Promise<ReconcileRun> {
  const log = o.log ?? (() => undefined);
  const timeoutMs = o.timeoutMs ?? 120_000;
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-reconcile-'));
  const kubeconfigPath = join(work, 'kubeconfig');
  if (o.cpuProfDir) mkdirSync(o.cpuProfDir, { recursive: true });
  const server = await startKubeloop({
    root: o.root,
    kubeconfigPath,
    args: o.controllers ? ['--nodes', String(o.nodes)] : ['--no-controllers', '--nodes', '0'],
    ...(o.cpuProfDir && { cpuProfDir: o.cpuProfDir, cpuProfName: `server-${o.label ?? 'run'}.cpuprofile` }),
  });
  const http = new HttpClient(server.endpoint, o.clients);
  let operator: OperatorProcess | undefined;
  try {
    await installCrd(http, o.root);
    if (o.controllers) await nodesReady(http, o.nodes);
    operator = await startOperator(o, kubeconfigPath, join(work, 'operator.log'));
    log(
      `  ${o.foos.toLocaleString('en-US')} Foos (replicas ${o.replicas}) per burst from ${o.clients} clients; operator ${o.workers} workers, ` +
        `leading ${operator.readyMs.toFixed(0)} ms after spawn (pids: server ${server.pid}, operator ${operator.pid})`,
    );
    const operatorIdleRssMb = rssBytes(operator.pid) / 2 ** 20;
    const session: Session = { o, http, serverPid: server.pid, operator, timeoutMs, log };
    const cold = await burst(session, 'cold');
    const warm = await burst(session, 'warm');
    return {
      controllers: o.controllers,
      foos: o.foos,
      clients: o.clients,
      workers: o.workers,
      replicas: o.replicas,
      operatorReadyMs: operator.readyMs,
      operatorIdleRssMb,
      cold,
      warm,
    };
  } finally {
    http.close();
    if (operator) await terminate(operator.child);
    await server.stop();
    if (o.keep) log(`  kept ${work} (kubeconfig, operator.log)`);
    else rmSync(work, { recursive: true, force: true });
  }
}

/** Options of {@link runReconcileBench}. */
export type ReconcileBenchOptions = Omit<ReconcileOptions, 'controllers' | 'label' | 'log'> & {
  /** Runs with the built-in controllers off: the headline. */
  runs: number;
  /** Runs with them on, for information (0: none). */
  onRuns: number;
  log?: (s: string) => void;
};

/** The runs of each mode, and their medians as result rows. */
export interface ReconcileBenchResult {
  definition: string;
  off: ReconcileRun[];
  on: ReconcileRun[];
  rows: Row[];
}

/** Runs {@link runReconcile} `runs` times per mode, alternating the modes, and builds the rows. */
export async function runReconcileBench(o: ReconcileBenchOptions): Promise<ReconcileBenchResult> {
  const log = o.log ?? (() => undefined);
  const out: ReconcileBenchResult = { definition: STATUS_DEFINITION, off: [], on: [], rows: [] };
  // Alternated, so that a busy neighbour weighs on both modes alike.
  for (let r = 0; r < Math.max(o.runs, o.onRuns); r++) {
    for (const [mode, runs] of [
      ['off', o.runs],
      ['on', o.onRuns],
    ] as const) {
      if (r >= runs) continue;
      log(
        `[reconcile] run ${r + 1}/${runs}, built-in controllers ${mode}${mode === 'on' ? ` (${o.nodes} simulated nodes)` : ''}`,
      );
      const run = await runReconcile({ ...o, controllers: mode === 'on', label: `${mode}-${r + 1}`, log });
      out[mode].push(run);
    }
  }
  out.rows = reconcileRows(out.off, out.on, o.nodes);
  return out;
}

/** The result rows: medians over the runs of each mode, the cold and the warm burst apart. */
export async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      foos: { type: 'string', default: '1000' },
      clients: { type: 'string', default: '16' },
      workers: { type: 'string', default: '2' },
      replicas: { type: 'string', default: '1' },
      runs: { type: 'string', default: '3' },
      nodes: { type: 'string', default: '20' },
      'on-runs': { type: 'string', default: '1' },
      'cpu-prof': { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const log = (s: string) => process.stdout.write(`${s}\n`);
  if (values.help) {
    log(
      [
        'usage: node bench/dist/benchmarks/reconcile.js [options]',
        '  --foos=N --clients=N     Foos created, by that many concurrent clients (default 1000, 16)',
        '  --workers=N              workers of the operator (default 2)',
        '  --replicas=N             spec.replicas of each Foo (default 1)',
        '  --runs=N                 runs with the built-in controllers off (the headline), median reported (default 3)',
        '  --on-runs=N              runs with them on and simulated pods, for information (default 1; 0: none)',
        '  --nodes=N                simulated nodes when the controllers are on (default 20: 110 pods each)',
        '  --cpu-prof=DIR           V8 CPU profiles of the server and the operator',
        "  --keep                   keep each run's directory (kubeconfig, operator.log)",
      ].join('\n'),
    );
    return;
  }
  const int = (name: string, v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${v}`);
    return n;
  };
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const rerun = `rerun: npm run build && node bench/dist/benchmarks/reconcile.js --foos=${values.foos} --clients=${values.clients} --workers=${values.workers} --runs=${values.runs}`;
  log(rerun);
  log(`definition: ${STATUS_DEFINITION}; converged = every Foo has its status and every Deployment exists`);
  const cpuProfDir = values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined;
  const result = await runReconcileBench({
    root,
    foos: int('foos', values.foos),
    clients: int('clients', values.clients),
    workers: int('workers', values.workers),
    replicas: int('replicas', values.replicas),
    runs: int('runs', values.runs),
    onRuns: Number(values['on-runs']) || 0,
    nodes: int('nodes', values.nodes),
    ...(cpuProfDir && { cpuProfDir }),
    keep: values.keep,
    log,
  });
  log('');
  log(renderTable(result.rows.map(evaluate), 'etcd (not run)'));
  log('');
  if (cpuProfDir) log(`CPU profiles (server-*, operator-*): ${cpuProfDir}`);
  log(rerun);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `reconcile bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}

export { reconcileRows } from './reconcile-report.js';
export { until, watchFrom } from './reconcile-support.js';
export {
  type Burst,
  type ReconcileOptions,
  type ReconcileRun,
  STATUS_DEFINITION,
} from './reconcile-types.js';
