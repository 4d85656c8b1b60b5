/**
 * The sample-controller operator end to end: 1,000 Foos created by 16 concurrent clients, timed
 * until every Foo has its status and every Deployment exists.
 *
 * Everything runs as a user runs it, each in its own process: the local control plane
 * (`kubeloop server --port 0`), the operator (`node examples/sample-controller/dist/main.js
 * --leader-elect`, its built entry point with leader election, metrics and probes, 2 workers),
 * and this bench, which installs the Foo CRD from `config/crd`, creates the Foos over keep-alive
 * HTTPS and watches Foos and Deployments to time what the operator did.
 *
 *   npm run build && node bench/dist/benchmarks/reconcile.js
 *   node bench/dist/benchmarks/reconcile.js --foos=1000 --clients=16 --workers=2 --runs=3 --cpu-prof=/tmp/prof
 *
 * Headline: the control plane's built-in controllers off (`kubeloop server --no-controllers`), as
 * the quoted reference was a bare kube-apiserver with etcd (no kube-controller-manager: a
 * Deployment makes no ReplicaSet and no pods, its status stays empty, and the operator reports
 * `availableReplicas: 0`). A second line, for information, runs with them on and simulated nodes:
 * the Deployments then make ReplicaSets and pods, which become available, and the operator
 * rewrites each Foo's status as they do.
 *
 * Each run starts fresh processes and sends two bursts, into two namespaces: `cold`, while V8
 * still compiles the hot paths of the server and the operator (a quarter of their CPU goes to
 * the optimizing compiler and GC threads then), and `warm`, the steady state of a long-running
 * operator (the convention of the other benchmarks, which warm up before measuring). Both are
 * printed, with the reference and the target beside each.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parseCustomResourceDefinitions } from 'kubeloop/manifests';
import { HttpClient, type Stream } from '../lib/http.js';
import { cpuMs, LoadMeter, peakRssBytes, rssBytes } from '../lib/proc.js';
import { freePort, terminate } from '../lib/process.js';
import { evaluate, fmt, type Row, renderTable } from '../lib/report.js';
import { startKubeloop } from '../lib/servers.js';
import { median, percentile } from '../lib/stats.js';
import { REFERENCE, TARGETS } from '../reference.js';

const GROUP = 'samplecontroller.k8s.io';
const VERSION = 'v1alpha1';
const LEASE = 'sample-controller.samplecontroller.k8s.io';
const EXAMPLE = 'examples/sample-controller';

/** What "has its status" means here, printed with the results. */
export const STATUS_DEFINITION =
  'a Foo has its status when a watch event shows it with status.availableReplicas set to an integer (0 counts: ' +
  'without kube-controller-manager no pod ever becomes available)';

/** Options of one measured run. */
export interface ReconcileOptions {
  /** The repository root (holds `packages/cli/dist/bin.js` and the built example). */
  root: string;
  foos: number;
  /** Concurrent clients creating the Foos. */
  clients: number;
  /** Workers of the operator (`MAX_CONCURRENT_RECONCILES`). */
  workers: number;
  /** `spec.replicas` of every Foo (1–10, the Foo's schema). */
  replicas: number;
  /** The control plane's built-in controllers (garbage collector, Deployment, ReplicaSet, scheduler, kubelet). */
  controllers: boolean;
  /** Simulated nodes when the controllers run (110 pods each). */
  nodes: number;
  /** V8 CPU profiles of the server and the operator go into this directory. */
  cpuProfDir?: string;
  /** Names the profiles of this run (`server-<label>.cpuprofile`, `operator-<label>.cpuprofile`). */
  label?: string;
  /** With the controllers on, also wait until every Foo reports all its replicas available (default true). */
  waitAvailable?: boolean;
  /** Keeps the run's directory (kubeconfig, `operator.log`) instead of removing it. */
  keep?: boolean;
  /** Gives up after this long (default 120 s). */
  timeoutMs?: number;
  log?: (s: string) => void;
}

/** One burst of Foos: what the bench saw and what the operator did. Times are from the first create request on. */
export interface Burst {
  /** Until every Foo has its status and every Deployment exists: the headline. */
  convergedMs: number;
  /** Until the last create was answered. */
  createsMs: number;
  /** Until the last Foo got its status. */
  statusMs: number;
  /** Until the last Deployment appeared. */
  deploymentsMs: number;
  /** Until every Foo reports `availableReplicas == replicas` (built-in controllers on only; NaN if not reached). */
  availableMs?: number;
  /** Reconciles the operator finished by convergence (its `controller_runtime_reconcile_total`). */
  reconciles: number;
  reconcileErrors: number;
  reconcilesPerSecond: number;
  /** Per Foo: from its create response to the first watch event showing its status. */
  latency: { p50Ms: number; p99Ms: number; maxMs: number };
  operator: {
    /** RSS right after convergence. */
    rssMb: number;
    peakRssMb: number;
    /** CPU time over the burst. */
    cpuMs: number;
    /** Requests it sent by convergence, by method (its `rest_client_requests_total`). */
    requests: Record<string, number>;
    /** Most sockets it held open at once (sampled every 50 ms): its connections to the server. */
    peakSockets: number;
  };
  server: { rssMb: number; cpuMs: number };
  /** CPU time of this bench process (the clients and the watches) over the burst. */
  benchCpuMs: number;
  /** Percentage of the machine's CPU used by other processes during the burst. */
  otherCpuPercent: number;
}

/**
 * What one run measured: the first burst on fresh processes (`cold`: V8 still compiling the hot
 * paths of the server and the operator), then a second one into another namespace (`warm`: the
 * steady state of a long-running operator, the convention of the other benchmarks).
 */
export interface ReconcileRun {
  controllers: boolean;
  foos: number;
  clients: number;
  workers: number;
  replicas: number;
  /** From spawn to leading (caches synced, Lease acquired). */
  operatorReadyMs: number;
  /** Operator RSS once leading, before any Foo. */
  operatorIdleRssMb: number;
  cold: Burst;
  warm: Burst;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The Foo the bench creates: sample-controller's sample with its own Deployment name. */
function foo(namespace: string, name: string, replicas: number): string {
  return JSON.stringify({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Foo',
    metadata: { name, namespace },
    spec: { deploymentName: name, replicas },
  });
}

const fooName = (i: number) => `foo-${String(i).padStart(6, '0')}`;

/** Resolves once `check` returns true, polling every 10 ms; rejects after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The sum of the samples of a Prometheus metric whose labels include `labels`. */
function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** `rest_client_requests_total` of the operator by method (all codes). */
function requestsByMethod(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('rest_client_requests_total{')) continue;
    const method = /method="([^"]*)"/.exec(line)?.[1] ?? '?';
    out[method] = (out[method] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

/** Open sockets of process `pid` (its file descriptors that are sockets). */
function socketCount(pid: number): number {
  let n = 0;
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) n++;
      } catch {
        // Closed meanwhile.
      }
    }
  } catch {
    // The process is gone.
  }
  return n;
}

async function fetchMetrics(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${url}/metrics: ${res.status}`);
  return res.text();
}

/** Installs the example's CRDs from its `config/crd/bases` and waits until Foos are served. */
async function installCrd(http: HttpClient, root: string): Promise<void> {
  const file = join(root, EXAMPLE, 'config/crd/bases/samplecontroller.k8s.io_foos.yaml');
  for (const crd of parseCustomResourceDefinitions(readFileSync(file, 'utf8'))) {
    const body = JSON.stringify({
      ...crd,
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
    });
    const res = await http.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body);
    if (res.status !== 201) throw new Error(`create CRD: ${res.status} ${res.body.toString()}`);
  }
  await until(
    async () => (await http.request('GET', `/apis/${GROUP}/${VERSION}/foos?limit=1`)).status === 200,
    30_000,
    'the Foo CRD to be served',
  );
}

/** Opens a watch of a collection from its current resourceVersion; calls `onEvent` with each event. */
export async function watchFrom(
  http: HttpClient,
  collection: string,
  onEvent: (type: string, obj: Obj, at: bigint) => void,
): Promise<Stream> {
  const listed = await http.request('GET', `${collection}?limit=1`);
  if (listed.status !== 200) throw new Error(`list ${collection}: ${listed.status}`);
  const list = JSON.parse(listed.body.toString('utf8')) as { metadata: { resourceVersion: string } };
  return http.stream(
    'GET',
    `${collection}?watch=true&resourceVersion=${list.metadata.resourceVersion}`,
    undefined,
    (line, at) => {
      const ev = JSON.parse(line) as { type?: unknown; object?: unknown };
      if (typeof ev.type === 'string' && isObj(ev.object)) onEvent(ev.type, ev.object, at);
    },
  );
}

/** The operator process and where to reach its metrics. */
interface OperatorProcess {
  child: ChildProcess;
  pid: number;
  metricsUrl: string;
  /** From spawn to leading (caches synced, Lease acquired). */
  readyMs: number;
}

/**
 * The operator, started as `npm start` in its directory does (`node dist/main.js`) with the flags
 * of its generated Deployment. Its JSON logs go to a file, as a container's go to the runtime's
 * log file: a pipe read by this busy bench would throttle its synchronous log writes.
 */
async function startOperator(
  o: ReconcileOptions,
  kubeconfigPath: string,
  logPath: string,
): Promise<OperatorProcess> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const metricsUrl = `http://${address}`;
  const prof = o.cpuProfDir
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${o.cpuProfDir}`,
        `--cpu-prof-name=operator-${o.label ?? 'run'}.cpuprofile`,
      ]
    : [];
  const out = openSync(logPath, 'w');
  const start = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [
      ...prof,
      join(o.root, EXAMPLE, 'dist/main.js'),
      '--leader-elect',
      `--metrics-bind-address=${address}`,
      `--health-probe-bind-address=${address}`,
    ],
    {
      cwd: join(o.root, EXAMPLE),
      env: { ...process.env, KUBECONFIG: kubeconfigPath, MAX_CONCURRENT_RECONCILES: String(o.workers) },
      stdio: ['ignore', out, out],
    },
  );
  closeSync(out);
  const failed = () =>
    child.exitCode !== null || child.signalCode !== null
      ? new Error(
          `the operator exited (${child.signalCode ?? child.exitCode}):\n${readFileSync(logPath, 'utf8').slice(-4000)}`,
        )
      : undefined;
  try {
    // Leading is what starts the controllers: wait for it, as one waits for the operator's readiness.
    await until(
      async () => {
        const err = failed();
        if (err) throw err;
        try {
          return (
            metricSum(await fetchMetrics(metricsUrl), 'leader_election_master_status', { name: LEASE }) === 1
          );
        } catch (e) {
          if (e instanceof TypeError) return false; // not listening yet
          throw e;
        }
      },
      60_000,
      'the operator to lead',
    );
  } catch (err) {
    await terminate(child);
    throw err;
  }
  return { child, pid: child.pid!, metricsUrl, readyMs: Number(process.hrtime.bigint() - start) / 1e6 };
}

/** The processes and clients of one run. */
interface Session {
  o: ReconcileOptions;
  http: HttpClient;
  serverPid: number;
  operator: OperatorProcess;
  timeoutMs: number;
  log: (s: string) => void;
}

/** Creates `o.foos` Foos in `namespace` from `o.clients` clients and times what follows. */
async function burst(x: Session, namespace: string): Promise<Burst> {
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
export function reconcileRows(
  off: readonly ReconcileRun[],
  on: readonly ReconcileRun[],
  nodes: number,
): Row[] {
  const rows: Row[] = [];
  const first = off[0] ?? on[0];
  if (!first) return rows;
  const what = `${first.foos.toLocaleString('en-US')} Foos, ${first.clients} clients, ${first.workers} workers`;
  const phases = ['warm', 'cold'] as const;
  const variants = [
    ...phases.map((phase) => ({ runs: off, phase, headline: true, name: `controllers off, ${phase}` })),
    ...phases.map((phase) => ({
      runs: on,
      phase,
      headline: false,
      name: `controllers on, ${nodes} nodes, ${phase}`,
    })),
  ].filter((v) => v.runs.length > 0);
  const med = (runs: readonly ReconcileRun[], phase: 'warm' | 'cold', f: (b: Burst) => number) =>
    median(runs.map((r) => f(r[phase])));
  const seconds = (ms: number) => fmt(ms / 1000, 's');
  for (const { runs, phase, headline, name } of variants) {
    rows.push({
      metric: `reconcile ${what}: all with status + Deployment`,
      variant: name,
      unit: 's',
      better: 'lower',
      ours: med(runs, phase, (b) => b.convergedMs / 1000),
      ...(headline && {
        reference: REFERENCE.reconcile1kFoosSeconds,
        ...(first.foos === 1000 && first.workers === 2 && { target: TARGETS.reconcile1kFoosSeconds }),
      }),
      note:
        `${runs.length === 1 ? '1 run' : `median of ${runs.length} runs: ${runs.map((r) => (r[phase].convergedMs / 1000).toFixed(2)).join(', ')} s`}; creates answered by ${seconds(
          med(runs, phase, (b) => b.createsMs),
        )}; other processes used ${med(runs, phase, (b) => b.otherCpuPercent).toFixed(0)}% of the machine` +
        (runs.some((r) => r[phase].availableMs !== undefined)
          ? `; every Foo at availableReplicas = ${first.replicas} after ${seconds(med(runs, phase, (b) => b.availableMs ?? Number.NaN))}`
          : ''),
    });
  }
  for (const { runs, phase, name } of variants) {
    rows.push({
      metric: 'reconciles/s, until convergence',
      variant: name,
      unit: '/s',
      better: 'higher',
      ours: med(runs, phase, (b) => b.reconcilesPerSecond),
      note: `${med(runs, phase, (b) => b.reconciles)} reconciles (controller_runtime_reconcile_total), ${med(runs, phase, (b) => b.reconcileErrors)} errors`,
    });
  }
  for (const [p, key] of [
    ['p50', 'p50Ms'],
    ['p99', 'p99Ms'],
  ] as const) {
    for (const { runs, phase, name } of variants) {
      rows.push({
        metric: `create→status latency ${p}`,
        variant: name,
        unit: 'ms',
        better: 'lower',
        ours: med(runs, phase, (b) => b.latency[key]),
      });
    }
  }
  for (const { runs, phase, name } of variants) {
    const cpu = (f: (b: Burst) => number) => med(runs, phase, f) / first.foos;
    const operator = cpu((b) => b.operator.cpuMs);
    const server = cpu((b) => b.server.cpuMs);
    const bench = cpu((b) => b.benchCpuMs);
    rows.push({
      metric: 'CPU per Foo, server + operator + bench clients',
      variant: name,
      unit: 'ms',
      better: 'lower',
      ours: operator + server + bench,
      note: `operator ${operator.toFixed(2)} ms, server ${server.toFixed(2)} ms, bench ${bench.toFixed(2)} ms: on two idle cores the burst cannot converge in less than ${seconds(((operator + server + bench) * first.foos) / 2)}`,
    });
  }
  for (const { runs, phase, name } of variants) {
    const holds = phase === 'cold' ? first.foos : 2 * first.foos;
    rows.push({
      metric: 'operator RSS after convergence',
      variant: name,
      unit: 'MB',
      better: 'lower',
      ours: med(runs, phase, (b) => b.operator.rssMb),
      note: `caching ${holds.toLocaleString('en-US')} Foos and Deployments; peak ${fmt(
        med(runs, phase, (b) => b.operator.peakRssMb),
        'MB',
      )}; ${fmt(median(runs.map((r) => r.operatorIdleRssMb)), 'MB')} once leading, before any Foo`,
    });
  }
  return rows;
}

async function main(): Promise<void> {
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
