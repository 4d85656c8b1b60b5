/**
 * The sample operator beside client-go's sample-controller, on the same API server in the same
 * run: N Foos exist, then the operator starts; timed from its spawn until every Foo has its
 * Deployment and a status (`status.availableReplicas` set; 0 without a kubelet), with its RSS
 * then (and its peak) and the CPU it used. This is issue 24's job: the whole reconcile path of
 * each (start, first list, queue, cache read, Deployment create, status write, event).
 *
 *   npm run build && node bench/dist/benchmarks/operators.js                      # fresh local plane (--no-controllers)
 *   node bench/dist/benchmarks/operators.js --kubeconfig=/tmp/anchor/run/admin.kubeconfig   # any API server
 *   node bench/dist/benchmarks/operators.js --cpu-prof=/tmp/prof --heap-prof=/tmp/prof --operators=kubeloop
 *   node bench/dist/benchmarks/operators.js --operators=kubeloop,baseline --baseline=../main   # this build vs another
 *   node bench/dist/benchmarks/operators.js --operators=client-go --server-cpu-prof=/tmp/prof   # the server's side
 *
 * On the local plane each round also reports the server's CPU over the round (the server's work
 * for that operator's requests shares its 2 cores) and the requests it answered, by verb.
 *
 * - kubeloop: `node examples/sample-controller/dist/main.js`, 2 workers, no leader election,
 *   metrics and probes on (free loopback ports), as a user runs it (with `MALLOC_ARENA_MAX=2`,
 *   as its image sets it); its logs to a file.
 * - client-go: the real k8s.io/sample-controller (kubernetes-1.24.1, 2 workers) that
 *   `../shared/tools/anchor/build-peers.sh` builds (`--sample-controller=PATH`, default
 *   `$ANCHOR_BIN/sample-controller` or `/tmp/anchor/bin/sample-controller`), with
 *   `-qps 1000 -burst 1000` (client-go's default 5 QPS would measure its rate limiter).
 *
 * On a local plane the bench started, an uncounted round of the first operator warms the server
 * up first (`--no-warmup`: none). Rounds alternate the operators (ABBA…); each round uses a namespace of its own, whose Foos and
 * Deployments are deleted after it (a server without kube-controller-manager collects nothing),
 * so that every operator starts on the same N Foos. Medians, ratios kubeloop / client-go
 * (targets: time ≤ 1.0×, RSS ≤ 1.25×).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  Client,
  CustomResourceDefinition,
  Deployment,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  Namespace,
  type ResourceDescriptor,
} from 'kubeloop/client';
import { parseCustomResourceDefinitions } from 'kubeloop/manifests';
import { HttpClient } from '../lib/http.js';
import { cpuMs, peakRssBytes, rssBytes } from '../lib/proc.js';
import { freePort, terminate } from '../lib/process.js';
import { requestCounts } from '../lib/request-counts.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import { GROUP, VERSION } from './reconcile-support.js';

interface Foo extends KubeObject {
  spec?: { deploymentName?: string; replicas?: number };
  status?: { availableReplicas?: number };
}
export const Foo: ResourceDescriptor<Foo> = {
  group: GROUP,
  version: VERSION,
  kind: 'Foo',
  plural: 'foos',
  namespaced: true,
};

/**
 * `baseline` is the sample operator of another build of kubeloop (`--baseline=ROOT`, e.g. a git
 * worktree of main, built), run as `kubeloop` is: changes to the SDK are measured against it
 * in the same run (ABBA), which a loaded machine's noise allows where separate runs do not.
 * `node-floor` is the least a Node process doing the same job can be (`lib/floor-operator.ts`:
 * node:https, JSON and Maps, the smallest young generation): the floor under kubeloop's figures.
 */
export const OPERATORS = ['kubeloop', 'client-go', 'baseline', 'node-floor'] as const;
export type Operator = (typeof OPERATORS)[number];

/** One round of one operator. */
export interface OperatorSample {
  /** Spawn → every Foo has its Deployment and its status. */
  ms: number;
  rssMb: number;
  peakRssMb: number;
  cpuMs: number;
  /**
   * The local plane's CPU over the same span (spawn → converged): the server's work for this
   * operator's requests, which shares the operator's 2 cores and so is part of its time.
   */
  serverCpuMs?: number;
  /** Requests the local plane answered over that span, by `VERB resource[/subresource]`. */
  requests?: Record<string, number>;
}

export interface OperatorsResult {
  foos: number;
  samples: Record<Operator, OperatorSample[]>;
  medians: Partial<Record<Operator, OperatorSample>>;
  /** kubeloop / client-go of the medians. */
  ratio?: { ms: number; rssMb: number; cpuMs: number };
  /** kubeloop / baseline of the medians, with `--baseline`. */
  baselineRatio?: { ms: number; rssMb: number; cpuMs: number };
}

interface Options {
  root: string;
  kubeconfigPath: string;
  foos: number;
  runs: number;
  operators: readonly Operator[];
  sampleController?: string;
  /** The root of the `baseline` build. */
  baselineRoot?: string;
  qps: number;
  cpuProfDir?: string;
  heapProfDir?: string;
  /** Run an uncounted round first, to warm the local plane up. */
  warmup?: boolean;
  /** The local plane, when the bench started it: its CPU and request counters per round. */
  server?: { pid: number; http: HttpClient };
  work: string;
  log: (s: string) => void;
}

/** Where the anchor's client-go sample-controller is, if built. */
export function clientGoSampleController(explicit?: string): string | undefined {
  const path = explicit ?? join(process.env.ANCHOR_BIN ?? '/tmp/anchor/bin', 'sample-controller');
  return existsSync(path) ? path : undefined;
}

/** Awaits `p`, ignoring the errors `what` accepts. */
export async function ignoring(p: Promise<unknown>, what: (err: unknown) => boolean): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!what(err)) throw err;
  }
}

/** The example's Foo CRD, unless the server has one; waits until Foos are served. */
export async function installFooCrd(client: Client, root: string): Promise<void> {
  const file = join(root, 'examples/sample-controller/config/crd/bases/samplecontroller.k8s.io_foos.yaml');
  for (const crd of parseCustomResourceDefinitions(readFileSync(file, 'utf8')))
    await ignoring(
      client.api(CustomResourceDefinition).create({
        ...crd,
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
      } as CustomResourceDefinition),
      isAlreadyExists,
    );
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await client.api(Foo, '').list({ limit: 1 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Creates Foos 0 … n-1 in `namespace` from 16 concurrent requests. */
async function createFoos(client: Client, namespace: string, n: number): Promise<void> {
  const api = client.api(Foo, namespace);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      const name = `foo-${String(i).padStart(6, '0')}`;
      await api.create({ metadata: { name }, spec: { deploymentName: name, replicas: 1 } });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

/**
 * Resolves once every one of `n` Foos of `namespace` has its Deployment and its status, seen by
 * watches opened now (before the operator starts).
 */
async function convergence(client: Client, namespace: string, n: number, signal: AbortSignal) {
  const foos = client.api(Foo, namespace);
  const deployments = client.api(Deployment, namespace);
  const [fooRv, depRv] = await Promise.all([
    foos.list({ limit: 1 }).then((l) => l.metadata.resourceVersion),
    deployments.list({ limit: 1 }).then((l) => l.metadata.resourceVersion),
  ]);
  const withStatus = new Set<string>();
  const withDeployment = new Set<string>();
  let done: () => void = () => undefined;
  const finished = new Promise<void>((r) => {
    done = r;
  });
  const check = () => {
    if (withStatus.size >= n && withDeployment.size >= n) done();
  };
  const follow = async (
    api: typeof foos | typeof deployments,
    rv: string | undefined,
    onObject: (o: KubeObject) => void,
  ) => {
    for await (const batch of api.watchBatches({ resourceVersion: rv, timeoutSeconds: 3600, signal }))
      for (const ev of batch) if (ev.type === 'ADDED' || ev.type === 'MODIFIED') onObject(ev.object);
  };
  const watches = Promise.all([
    follow(foos, fooRv, (o) => {
      if (Number.isInteger((o as Foo).status?.availableReplicas)) withStatus.add(o.metadata!.name!);
      check();
    }),
    follow(deployments, depRv, (o) => {
      withDeployment.add(o.metadata!.name!);
      check();
    }),
  ]);
  return {
    finished,
    watches,
    counts: () => `${withDeployment.size} Deployments, ${withStatus.size} statuses`,
  };
}

/**
 * How the bench runs `root`'s sample operator (node's arguments after its own flags, working
 * directory, environment): 2 workers, metrics and probes on free loopback ports, no webhooks.
 * The script is the one `npm start` and the image run (the example's `start`: its bundle, in a
 * checkout that builds one).
 */
export async function sampleOperator(
  root: string,
  kubeconfig: string,
): Promise<{ args: string[]; cwd: string; env: NodeJS.ProcessEnv }> {
  const [metrics, probes] = [await freePort(), await freePort()];
  const project = join(root, 'examples/sample-controller');
  const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const script = /^node\s+(\S+)$/.exec(pkg.scripts.start)?.[1] ?? 'dist/main.js';
  return {
    args: [
      join(project, script),
      `--metrics-bind-address=127.0.0.1:${metrics}`,
      `--health-probe-bind-address=127.0.0.1:${probes}`,
      '--max-concurrent-reconciles=2',
    ],
    cwd: project,
    // The reconciles are measured, not the webhooks (client-go's sample-controller has none);
    // glibc's arenas as the operator's image sets them (manifests/dockerfile.ts).
    env: { MALLOC_ARENA_MAX: '2', ...process.env, KUBECONFIG: kubeconfig, ENABLE_WEBHOOKS: 'false' },
  };
}

/** Starts one operator against the kubeconfig. */
async function spawnOperator(o: Options, op: Operator, label: string): Promise<ChildProcess> {
  const logPath = join(o.work, `${label}.log`);
  const out = openSync(logPath, 'w');
  let child: ChildProcess;
  if (op === 'kubeloop' || op === 'baseline') {
    const root = op === 'baseline' ? o.baselineRoot : o.root;
    if (!root) throw new Error('baseline: give --baseline=ROOT');
    const operator = await sampleOperator(root, o.kubeconfigPath);
    const prof = [
      ...(o.cpuProfDir
        ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`, `--cpu-prof-name=operator-${label}.cpuprofile`]
        : []),
      ...(o.heapProfDir
        ? [
            '--heap-prof',
            `--heap-prof-dir=${o.heapProfDir}`,
            `--heap-prof-name=operator-${label}.heapprofile`,
            // Node's default samples every 512 KB: too coarse to tell what a cached object costs.
            '--heap-prof-interval=8192',
          ]
        : []),
    ];
    child = spawn(process.execPath, [...prof, ...operator.args], {
      cwd: operator.cwd,
      env: operator.env,
      stdio: ['ignore', out, out],
    });
  } else if (op === 'node-floor') {
    const script = join(o.root, 'bench/dist/lib/floor-operator.js');
    child = spawn(process.execPath, ['--max-semi-space-size=1', '--heap-growing-percent=50', script], {
      env: { ...process.env, MALLOC_ARENA_MAX: '2', KUBECONFIG: o.kubeconfigPath },
      stdio: ['ignore', out, out],
    });
  } else {
    if (!o.sampleController)
      throw new Error('client-go sample-controller not built (../shared/tools/anchor)');
    child = spawn(
      o.sampleController,
      ['-kubeconfig', o.kubeconfigPath, '-qps', String(o.qps), '-burst', String(o.qps)],
      { stdio: ['ignore', out, out] },
    );
  }
  closeSync(out);
  return child;
}

/** One round of one operator on `foos` fresh Foos in a namespace of its own. */
async function round(client: Client, o: Options, op: Operator, label: string): Promise<OperatorSample> {
  const namespace = `ops-${label}`;
  await ignoring(client.api(Namespace).create({ metadata: { name: namespace } }), isAlreadyExists);
  await createFoos(client, namespace, o.foos);
  const ac = new AbortController();
  const conv = await convergence(client, namespace, o.foos, ac.signal);
  const requests0 = o.server && (await requestCounts(o.server.http));
  const server0 = o.server && cpuMs(o.server.pid);
  const start = process.hrtime.bigint();
  const child = await spawnOperator(o, op, label);
  const pid = child.pid!;
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code, sig) =>
      reject(new Error(`${op} exited (${sig ?? code}); log: ${join(o.work, `${label}.log`)}`)),
    );
  });
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${op}: not converged in 300 s: ${conv.counts()}`)), 300_000);
  });
  try {
    await Promise.race([conv.finished, exited, timeout]);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const sample: OperatorSample = {
      ms,
      rssMb: rssBytes(pid) / 2 ** 20,
      peakRssMb: peakRssBytes(pid) / 2 ** 20,
      cpuMs: cpuMs(pid),
    };
    if (o.server && server0 !== undefined && requests0) {
      sample.serverCpuMs = cpuMs(o.server.pid) - server0;
      // The bench's own /metrics read and its watches' events are the same for every operator.
      const after = await requestCounts(o.server.http);
      sample.requests = Object.fromEntries(
        [...after]
          .map(([k, n]) => [k, n - (requests0.get(k) ?? 0)] as const)
          .filter(([, n]) => n > 0)
          .sort((a, b) => b[1] - a[1]),
      );
    }
    const server =
      sample.serverCpuMs === undefined ? '' : `, server CPU ${(sample.serverCpuMs / 1000).toFixed(2)} s`;
    o.log(
      `  ${label.padEnd(16)} ${(ms / 1000).toFixed(2)} s, RSS ${sample.rssMb.toFixed(0)} MB (peak ${sample.peakRssMb.toFixed(0)}), CPU ${(sample.cpuMs / 1000).toFixed(2)} s${server}`,
    );
    if (sample.requests)
      o.log(
        `    requests: ${Object.entries(sample.requests)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ')}`,
      );
    return sample;
  } finally {
    clearTimeout(timer);
    exited.catch(() => undefined);
    await terminate(child);
    ac.abort();
    await conv.watches.catch(() => undefined);
    // What the round left is removed: the next operator must start on its own Foos only.
    await client.api(Foo, namespace).deleteCollection();
    await client.api(Deployment, namespace).deleteCollection();
    await ignoring(client.api(Namespace).delete(namespace), isNotFound);
  }
}

export async function runOperators(o: Options): Promise<OperatorsResult> {
  const client = await Client.fromKubeconfig({ path: o.kubeconfigPath });
  const samples: Record<Operator, OperatorSample[]> = {
    kubeloop: [],
    'client-go': [],
    baseline: [],
    'node-floor': [],
  };
  try {
    await installFooCrd(client, o.root);
    // A fresh local plane spends its first round's requests compiling its code (its CPU in a
    // first round was ~2× a later one's): whichever operator went first paid for it. One
    // round of the first operator warms it up, and is not counted.
    if (o.server && o.warmup) await round(client, o, o.operators[0]!, `warmup-${o.operators[0]}`);
    for (let r = 0; r < o.runs; r++) {
      // Alternated (ABBA…), so that a busy neighbour weighs on both alike.
      const order = r % 2 === 0 ? o.operators : [...o.operators].reverse();
      for (const op of order) samples[op].push(await round(client, o, op, `${op}-${r + 1}`));
    }
  } finally {
    await client.close();
  }
  const medians: Partial<Record<Operator, OperatorSample>> = {};
  for (const op of o.operators) {
    const s = samples[op];
    medians[op] = {
      ms: median(s.map((x) => x.ms)),
      rssMb: median(s.map((x) => x.rssMb)),
      peakRssMb: median(s.map((x) => x.peakRssMb)),
      cpuMs: median(s.map((x) => x.cpuMs)),
      ...(s.every((x) => x.serverCpuMs !== undefined) && {
        serverCpuMs: median(s.map((x) => x.serverCpuMs!)),
      }),
    };
  }
  const [ours, theirs, base] = [medians.kubeloop, medians['client-go'], medians.baseline];
  const ratioOf = (a: OperatorSample, b: OperatorSample) => ({
    ms: a.ms / b.ms,
    rssMb: a.rssMb / b.rssMb,
    cpuMs: a.cpuMs / b.cpuMs,
  });
  return {
    foos: o.foos,
    samples,
    medians,
    ...(ours && theirs && { ratio: ratioOf(ours, theirs) }),
    ...(ours && base && { baselineRatio: ratioOf(ours, base) }),
  };
}

export function renderOperators(r: OperatorsResult, runs: number, where: string): string {
  const lines = [
    `${r.foos.toLocaleString('en-US')} existing Foos → Deployments + status, 2 workers, on ${where} (median of ${runs}):`,
    `  ${'operator'.padEnd(34)}${'time'.padStart(10)}${'RSS'.padStart(10)}${'peak RSS'.padStart(10)}${'CPU'.padStart(10)}${'server CPU'.padStart(12)}`,
  ];
  const label: Record<Operator, string> = {
    kubeloop: 'kubeloop examples/sample-controller',
    'client-go': 'client-go 1.24 sample-controller',
    baseline: 'kubeloop --baseline build',
    'node-floor': 'node floor (lib/floor-operator)',
  };
  for (const [op, m] of Object.entries(r.medians) as [Operator, OperatorSample][]) {
    lines.push(
      `  ${label[op].padEnd(34)}${`${(m.ms / 1000).toFixed(2)} s`.padStart(10)}${`${m.rssMb.toFixed(0)} MB`.padStart(10)}${`${m.peakRssMb.toFixed(0)} MB`.padStart(10)}${`${(m.cpuMs / 1000).toFixed(2)} s`.padStart(10)}${(m.serverCpuMs === undefined ? '—' : `${(m.serverCpuMs / 1000).toFixed(2)} s`).padStart(12)}`,
    );
  }
  if (r.ratio) {
    const v = (x: number, t: number) => `${x.toFixed(2)}× ${x <= t ? 'PASS' : 'MISS'}`;
    lines.push(
      `  kubeloop / client-go: time ${v(r.ratio.ms, 1)} (target ≤ 1.0×), RSS ${v(r.ratio.rssMb, 1.25)} (target ≤ 1.25×), CPU ${r.ratio.cpuMs.toFixed(2)}×`,
    );
  }
  const [floor, clientGo] = [r.medians['node-floor'], r.medians['client-go']];
  if (floor && clientGo)
    lines.push(
      `  node floor / client-go: time ${(floor.ms / clientGo.ms).toFixed(2)}×, RSS ${(floor.rssMb / clientGo.rssMb).toFixed(2)}×, CPU ${(floor.cpuMs / clientGo.cpuMs).toFixed(2)}× (RSS: what any Node process doing this job holds)`,
    );
  if (r.baselineRatio) {
    const b = r.baselineRatio;
    lines.push(
      `  kubeloop / baseline: time ${b.ms.toFixed(2)}×, RSS ${b.rssMb.toFixed(2)}×, CPU ${b.cpuMs.toFixed(2)}×`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      foos: { type: 'string', default: '1000' },
      runs: { type: 'string', default: '3' },
      operators: { type: 'string' },
      'sample-controller': { type: 'string' },
      baseline: { type: 'string' },
      qps: { type: 'string', default: '1000' },
      'cpu-prof': { type: 'string' },
      'heap-prof': { type: 'string' },
      'server-cpu-prof': { type: 'string' },
      json: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'no-warmup': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const log = (s: string) => process.stdout.write(`${s}\n`);
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const sampleController = clientGoSampleController(values['sample-controller']);
  const operators = (
    values.operators
      ? values.operators.split(',')
      : ['kubeloop', ...(sampleController ? ['client-go'] : []), ...(values.baseline ? ['baseline'] : [])]
  ) as Operator[];
  for (const op of operators)
    if (!(OPERATORS as readonly string[]).includes(op)) throw new Error(`unknown operator ${op}`);
  const rerun = [
    'rerun: npm run build && node bench/dist/benchmarks/operators.js',
    `--foos=${values.foos} --runs=${values.runs} --operators=${operators.join(',')}`,
    ...(values.kubeconfig ? [`--kubeconfig=${values.kubeconfig}`] : []),
    ...(values.baseline ? [`--baseline=${values.baseline}`] : []),
    ...(values['cpu-prof'] ? [`--cpu-prof=${values['cpu-prof']}`] : []),
    ...(values['heap-prof'] ? [`--heap-prof=${values['heap-prof']}`] : []),
    ...(values['server-cpu-prof'] ? [`--server-cpu-prof=${values['server-cpu-prof']}`] : []),
    ...(values['no-warmup'] ? ['--no-warmup'] : []),
  ].join(' ');
  log(rerun);
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-operators-'));
  const kubeconfigPath = values.kubeconfig ? resolve(values.kubeconfig) : join(work, 'kubeconfig');
  // A bare local control plane, as a kube-apiserver + etcd without kube-controller-manager.
  const server = values.kubeconfig
    ? undefined
    : await startKubeloop({
        root,
        kubeconfigPath,
        args: ['--no-controllers', '--nodes', '0'],
        // The server's side of the operators' requests, written when it stops.
        ...(values['server-cpu-prof'] && { cpuProfDir: resolve(values['server-cpu-prof']) }),
      });
  const cpuProfDir = values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined;
  const heapProfDir = values['heap-prof'] ? resolve(values['heap-prof']) : undefined;
  for (const d of [cpuProfDir, heapProfDir]) if (d) mkdirSync(d, { recursive: true });
  const where = server ? 'the local control plane (--no-controllers)' : `the API server of ${kubeconfigPath}`;
  const serverHttp = server && new HttpClient(server.endpoint, 2);
  try {
    log(`${where}; client-go sample-controller: ${sampleController ?? 'not built'}; logs in ${work}`);
    const runs = Number(values.runs);
    const result = await runOperators({
      root,
      kubeconfigPath,
      foos: Number(values.foos),
      runs,
      operators,
      ...(sampleController && { sampleController }),
      ...(values.baseline && { baselineRoot: resolve(values.baseline) }),
      qps: Number(values.qps),
      warmup: !values['no-warmup'],
      ...(cpuProfDir && { cpuProfDir }),
      ...(heapProfDir && { heapProfDir }),
      ...(server && serverHttp && { server: { pid: server.pid, http: serverHttp } }),
      work,
      log,
    });
    log('');
    log(renderOperators(result, runs, where));
    log(rerun);
    if (values.json) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
    }
    if (!values.keep) rmSync(work, { recursive: true, force: true });
  } finally {
    serverHttp?.close();
    await server?.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `operators bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
