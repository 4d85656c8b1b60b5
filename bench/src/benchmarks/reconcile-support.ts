/**
 * What the reconcile benchmark drives: the Foo objects, the operator process (sample-controller
 * built from each checkout), its CRD, its metrics, and the watches that time convergence.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parseCustomResourceDefinitions } from 'kubeloop/manifests';
import type { HttpClient, Stream } from '../lib/http.js';
import { freePort, terminate } from '../lib/process.js';
import type { ReconcileOptions } from './reconcile-types.js';

export const GROUP = 'samplecontroller.k8s.io';
export const VERSION = 'v1alpha1';
const LEASE = 'sample-controller.samplecontroller.k8s.io';
const EXAMPLE = 'examples/sample-controller';

/** What "has its status" means here, printed with the results. */
type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The Foo the bench creates: sample-controller's sample with its own Deployment name. */
export function foo(namespace: string, name: string, replicas: number): string {
  return JSON.stringify({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Foo',
    metadata: { name, namespace },
    spec: { deploymentName: name, replicas },
  });
}

export const fooName = (i: number) => `foo-${String(i).padStart(6, '0')}`;

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
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** `rest_client_requests_total` of the operator by method (all codes). */
export function requestsByMethod(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('rest_client_requests_total{')) continue;
    const method = /method="([^"]*)"/.exec(line)?.[1] ?? '?';
    out[method] = (out[method] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

/** Open sockets of process `pid` (its file descriptors that are sockets). */
export function socketCount(pid: number): number {
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

export async function fetchMetrics(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${url}/metrics: ${res.status}`);
  return res.text();
}

/** Installs the example's CRDs from its `config/crd/bases` and waits until Foos are served. */
export async function installCrd(http: HttpClient, root: string): Promise<void> {
  const file = join(root, EXAMPLE, 'config/crd/bases/samplecontroller.k8s.io_foos.yaml');
  for (const crd of parseCustomResourceDefinitions(readFileSync(file, 'utf8'))) {
    // The operator runs without its webhooks (startOperator): a conversion webhook left in the
    // CRD would point at nothing, and every read of another version — the garbage collector
    // watches Foos at the preferred v1 — would be a failed conversion the baseline's
    // single-version Foo never asked for. Without webhooks the versions convert as `None`.
    const { conversion: _webhook, ...spec } = crd.spec as { conversion?: unknown };
    const body = JSON.stringify({
      ...crd,
      spec,
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

/**
 * Resolves once `nodes` simulated nodes are Ready: the cluster a user starts working on. Builds
 * differ in how much of their start-up (node registration, leases, RBAC aggregation) runs after
 * the server reports ready; a burst that started before it ended would measure start-up too.
 */
export async function nodesReady(http: HttpClient, nodes: number, timeoutMs = 60_000): Promise<void> {
  await until(
    async () => {
      const res = await http.request('GET', '/api/v1/nodes');
      if (res.status !== 200) return false;
      const list = JSON.parse(res.body.toString('utf8')) as {
        items: { status?: { conditions?: { type: string; status: string }[] } }[];
      };
      const ready = list.items.filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return ready.length >= nodes;
    },
    timeoutMs,
    `${nodes} nodes to be Ready`,
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
export interface OperatorProcess {
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
export async function startOperator(
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
  // Older builds (a baseline of compare.js) read the workers from the environment and refuse
  // flags they do not know.
  const main = join(o.root, EXAMPLE, 'dist/main.js');
  const workersFlag = readFileSync(main, 'utf8').includes('managerFlags');
  const out = openSync(logPath, 'w');
  const start = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [
      ...prof,
      main,
      '--leader-elect',
      `--metrics-bind-address=${address}`,
      `--health-probe-bind-address=${address}`,
      ...(workersFlag ? [`--max-concurrent-reconciles=${o.workers}`] : []),
    ],
    {
      cwd: join(o.root, EXAMPLE),
      // The reconciles are measured, not the webhooks (nor a server on its port 9443 per operator).
      env: {
        ...process.env,
        KUBECONFIG: kubeconfigPath,
        ENABLE_WEBHOOKS: 'false',
        MAX_CONCURRENT_RECONCILES: String(o.workers),
      },
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
