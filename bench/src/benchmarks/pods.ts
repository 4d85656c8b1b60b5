/**
 * The built-in controllers at work: a default server (`kubeloop server --nodes 20`: garbage
 * collector, Deployment and ReplicaSet controllers, scheduler and the simulated nodes' kubelets)
 * given 50 Deployments of 20 replicas, timed until every one of the 1,000 pods is Running and every
 * Deployment reports all its replicas updated and available; then the server's memory holding them,
 * after a full GC.
 *
 * Only public entry points of the server are used (its CLI, its REST API), so that the same code
 * measures two builds side by side (`compare.ts`); the server runs as a child process, so that the
 * RSS is its own.
 *
 *   npm run build && node bench/dist/benchmarks/pods.js [--deployments=50 --replicas=20 --nodes=20 --runs=3]
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { HttpClient, type Stream } from '../lib/http.js';
import { gcHooks, type MemoryAfterGc, memoryAfterGc } from '../lib/memory.js';
import { cpuMs, idle, LoadMeter } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import { watchFrom } from './reconcile.js';

const NAMESPACE = 'bench';

/** Options of {@link runPods}. */
export interface PodsOptions {
  /** The repository root of the build under test (holds `packages/cli/dist/bin.js`). */
  root: string;
  /** A fresh directory for the run's files (kubeconfig, GC readings). */
  dir: string;
  deployments: number;
  /** `spec.replicas` of every Deployment. */
  replicas: number;
  /** Simulated nodes (`kubeloop server --nodes`; 110 pods each). */
  nodes: number;
  /** Concurrent clients creating the Deployments (default 4). */
  clients?: number;
  /** Idle time between convergence and the memory reading (default 2 s). */
  settleMs?: number;
  /** Gives up after this long (default 180 s). */
  timeoutMs?: number;
}

/** What one run measured. Times are from the first create request on. */
export interface PodsResult {
  pods: number;
  /** Spawn to `ready` of the server with its simulated nodes. */
  readyMs: number;
  /** Until the last Deployment create was answered. */
  createsMs: number;
  /** Until every pod was Running. */
  runningMs: number;
  /** Until every Deployment reported all replicas updated and available for its generation: the headline. */
  convergedMs: number;
  /** Pods per second until convergence. */
  podsPerSecond: number;
  /** Server CPU per pod until convergence. */
  serverCpuMsPerPod: number;
  /** The server's memory holding the converged workload, after a full GC. */
  memory: MemoryAfterGc;
  /** Percentage of the machine's CPU used by other processes until convergence. */
  otherCpuPercent: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function deployment(name: string, replicas: number): string {
  const labels = { app: name };
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NAMESPACE, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'registry.k8s.io/pause:3.10',
              ports: [{ containerPort: 8080, name: 'http' }],
              resources: { requests: { cpu: '1m', memory: '1Mi' } },
            },
          ],
        },
      },
    },
  });
}

const deploymentName = (i: number) => `app-${String(i).padStart(4, '0')}`;

/** Whether a Deployment's status says the controllers finished with its current spec. */
function deploymentDone(d: Obj, replicas: number): boolean {
  const meta = isObj(d.metadata) ? d.metadata : {};
  const status = isObj(d.status) ? d.status : {};
  return (
    status.observedGeneration === meta.generation &&
    status.replicas === replicas &&
    status.updatedReplicas === replicas &&
    status.availableReplicas === replicas
  );
}

/** One run on a fresh server; the server is stopped at the end. */
export async function runPods(o: PodsOptions): Promise<PodsResult> {
  const timeoutMs = o.timeoutMs ?? 180_000;
  const pods = o.deployments * o.replicas;
  const gcFile = join(o.dir, 'gc.json');
  const hooks = gcHooks(gcFile);
  const server = await startKubeloop({
    root: o.root,
    kubeconfigPath: join(o.dir, 'kubeconfig'),
    args: ['--nodes', String(o.nodes)],
    ...hooks,
  });
  const clients = o.clients ?? 4;
  const http = new HttpClient(server.endpoint, clients);
  const streams: Stream[] = [];
  try {
    const ns = await http.request(
      'POST',
      '/api/v1/namespaces',
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }),
    );
    if (ns.status !== 201) throw new Error(`create namespace: ${ns.status} ${ns.body.toString()}`);

    const phases = new Map<string, string>();
    let running = 0;
    let runningAt = 0n;
    const done = new Set<string>();
    let doneAt = 0n;
    let converged!: () => void;
    const convergence = new Promise<void>((r) => {
      converged = r;
    });
    const check = () => {
      if (running === pods && done.size === o.deployments) converged();
    };
    streams.push(
      await watchFrom(http, `/api/v1/namespaces/${NAMESPACE}/pods`, (type, obj, at) => {
        const name = isObj(obj.metadata) ? obj.metadata.name : undefined;
        if (typeof name !== 'string') return;
        const was = phases.get(name) === 'Running';
        const phase = type === 'DELETED' ? undefined : isObj(obj.status) ? obj.status.phase : undefined;
        if (typeof phase === 'string') phases.set(name, phase);
        else phases.delete(name);
        const is = phase === 'Running';
        if (is !== was) running += is ? 1 : -1;
        if (is && !was && running === pods) runningAt = at;
        check();
      }),
    );
    streams.push(
      await watchFrom(http, `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`, (type, obj, at) => {
        const name = isObj(obj.metadata) ? obj.metadata.name : undefined;
        if (typeof name !== 'string') return;
        if (type !== 'DELETED' && deploymentDone(obj, o.replicas)) {
          if (!done.has(name)) {
            done.add(name);
            if (done.size === o.deployments) doneAt = at;
          }
        } else done.delete(name);
        check();
      }),
    );

    const load = new LoadMeter();
    const cpu0 = cpuMs(server.pid);
    const t0 = process.hrtime.bigint();
    let lastCreate = t0;
    let next = 0;
    const creator = async () => {
      for (let i = next++; i < o.deployments; i = next++) {
        const res = await http.request(
          'POST',
          `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`,
          deployment(deploymentName(i), o.replicas),
        );
        if (res.status !== 201) throw new Error(`create Deployment: ${res.status} ${res.body.toString()}`);
        const at = process.hrtime.bigint();
        if (at > lastCreate) lastCreate = at;
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `not converged after ${timeoutMs} ms: ${running}/${pods} pods Running, ${done.size}/${o.deployments} Deployments done`,
            ),
          ),
        timeoutMs,
      );
    });
    try {
      await Promise.race([
        Promise.all([Promise.all(Array.from({ length: clients }, creator)), convergence]),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
    const serverCpu = cpuMs(server.pid) - cpu0;
    load.addChild(serverCpu);
    const otherCpuPercent = load.otherPercent();
    const ms = (at: bigint) => Number(at - t0) / 1e6;
    const runningMs = ms(runningAt);
    const convergedMs = Math.max(runningMs, ms(doneAt));

    // The bench's own watches would hold server memory of their own: closed before the reading.
    for (const s of streams.splice(0)) s.close();
    http.close();
    await idle(o.settleMs ?? 2_000);
    const memory = await memoryAfterGc(server.pid, gcFile);
    return {
      pods,
      readyMs: server.readyMs,
      createsMs: ms(lastCreate),
      runningMs,
      convergedMs,
      podsPerSecond: pods / (convergedMs / 1000),
      serverCpuMsPerPod: serverCpu / pods,
      memory,
      otherCpuPercent,
    };
  } finally {
    for (const s of streams) s.close();
    http.close();
    await server.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      deployments: { type: 'string', default: '50' },
      replicas: { type: 'string', default: '20' },
      nodes: { type: 'string', default: '20' },
      runs: { type: 'string', default: '3' },
    },
    strict: true,
  });
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-pods-'));
  const runs: PodsResult[] = [];
  try {
    for (let i = 0; i < Number(values.runs); i++) {
      const dir = join(work, String(i));
      mkdirSync(dir);
      const r = await runPods({
        root,
        dir,
        deployments: Number(values.deployments),
        replicas: Number(values.replicas),
        nodes: Number(values.nodes),
      });
      runs.push(r);
      console.log(
        `run ${i + 1}: ${r.pods} pods Running after ${(r.runningMs / 1000).toFixed(2)} s, Deployments done after ` +
          `${(r.convergedMs / 1000).toFixed(2)} s (${r.podsPerSecond.toFixed(0)} pods/s, server CPU ${r.serverCpuMsPerPod.toFixed(2)} ms/pod, ` +
          `other processes ${r.otherCpuPercent.toFixed(0)}%); after GC: RSS ${r.memory.rssMb.toFixed(1)} MB ` +
          `(samples ${r.memory.rssSamplesMb.map((v) => v.toFixed(1)).join(', ')}; anon ${r.memory.rssAnonMb.toFixed(1)}, file ${r.memory.rssFileMb.toFixed(1)}), ` +
          `heap used ${r.memory.heapUsedMb.toFixed(1)} MB of ${r.memory.heapTotalMb.toFixed(1)}, external ${r.memory.externalMb.toFixed(1)} MB`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log(
    `median of ${runs.length}: ${median(runs.map((r) => r.podsPerSecond)).toFixed(0)} pods/s, ` +
      `RSS after GC ${median(runs.map((r) => r.memory.rssMb)).toFixed(1)} MB, heap used ${median(runs.map((r) => r.memory.heapUsedMb)).toFixed(1)} MB`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `pods bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
