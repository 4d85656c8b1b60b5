/**
 * Reconcile throughput of the GenericDaemon example (examples/generic-daemon, seed 003) on the
 * local control plane with its built-in controllers: `kubeloop server --nodes N` (the DaemonSet
 * controller, the scheduler and simulated kubelets place and run the daemons' pods), half of the
 * nodes labelled `daemon=bench`, and the operator run as a user runs it (`node dist/main.js
 * --leader-elect`, 2 workers, as admin: its RBAC is the tests' business, not this figure's). It
 * creates `--objects` GenericDaemons (default 100) from 8 clients and times until every one
 * reports `status.installed` equal to the labelled nodes — its DaemonSet created, every pod
 * scheduled, running and ready, and the status followed back. Reported: GenericDaemons/s, the
 * operator's CPU per GenericDaemon and its RSS after the burst (and peak), its reconciles.
 *
 * Rerun (after `npm run build`):
 * `node bench/dist/benchmarks/generic-daemon-reconcile.js [--objects=100] [--nodes=4] [--runs=3]`
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseCustomResourceDefinitions } from 'kubeloop/manifests';
import { HttpClient } from '../lib/http.js';
import { cpuMs, peakRssBytes, rssBytes } from '../lib/proc.js';
import { freePort, terminate } from '../lib/process.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import { fetchMetrics, isObj, metricSum, until, watchFrom } from './reconcile-support.js';

const EXAMPLE = 'examples/generic-daemon';
const COLLECTION = '/apis/mydomain.com/v1beta1/namespaces/default/genericdaemons';
const LEASE = 'generic-daemon.com';
const CLIENTS = 8;

/** One run's figures. */
export interface GenericDaemonRun {
  objects: number;
  labelledNodes: number;
  seconds: number;
  perSecond: number;
  operatorCpuMsPerObject: number;
  operatorRssMb: number;
  operatorPeakRssMb: number;
  reconciles: number;
}

/** Starts the operator as `npm start` does, logs to a file; resolves once it leads. */
async function startOperator(root: string, kubeconfig: string, log: string) {
  const address = `127.0.0.1:${await freePort()}`;
  const out = openSync(log, 'w');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(root, EXAMPLE, 'dist/main.js'),
      '--leader-elect',
      `--metrics-bind-address=${address}`,
      `--health-probe-bind-address=${address}`,
      '--max-concurrent-reconciles=2',
    ],
    {
      cwd: join(root, EXAMPLE),
      env: { ...process.env, KUBECONFIG: kubeconfig },
      stdio: ['ignore', out, out],
    },
  );
  closeSync(out);
  const metricsUrl = `http://${address}`;
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`the operator exited:\n${readFileSync(log, 'utf8')}`);
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
  return { child, pid: child.pid as number, metricsUrl };
}

/** One run on fresh processes. */
export async function runGenericDaemonBench(
  root: string,
  objects: number,
  nodes: number,
): Promise<GenericDaemonRun> {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-bench-gd-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const server = await startKubeloop({ root, kubeconfigPath: kubeconfig, args: ['--nodes', String(nodes)] });
  const http = new HttpClient(server.endpoint, CLIENTS + 2);
  let operator: Awaited<ReturnType<typeof startOperator>> | undefined;
  try {
    const labelled = Math.ceil(nodes / 2);
    // The simulated kubelets register their nodes after the server is ready.
    await until(
      async () => (await http.request('GET', `/api/v1/nodes/kubeloop-node-${nodes}`)).status === 200,
      30_000,
      'the simulated nodes to register',
    );
    for (let i = 1; i <= labelled; i++) {
      const res = await http.request(
        'PATCH',
        `/api/v1/nodes/kubeloop-node-${i}`,
        JSON.stringify({ metadata: { labels: { daemon: 'bench' } } }),
        { 'content-type': 'application/merge-patch+json' },
      );
      if (res.status !== 200) throw new Error(`label node ${i}: ${res.status} ${res.body.toString()}`);
    }
    const crdFile = join(root, EXAMPLE, 'config/crd/bases/mydomain.com_genericdaemons.yaml');
    for (const crd of parseCustomResourceDefinitions(readFileSync(crdFile, 'utf8'))) {
      const body = JSON.stringify({
        ...crd,
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
      });
      const res = await http.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body);
      if (res.status !== 201) throw new Error(`create CRD: ${res.status} ${res.body.toString()}`);
    }
    await until(
      async () => (await http.request('GET', `${COLLECTION}?limit=1`)).status === 200,
      30_000,
      'the GenericDaemon CRD to be served',
    );
    operator = await startOperator(root, kubeconfig, join(dir, 'operator.log'));
    const op = operator;

    // Converged: the GenericDaemons whose status reports every labelled node.
    const done = new Set<string>();
    const watch = await watchFrom(http, COLLECTION, (_type, obj) => {
      const status = isObj(obj.status) ? obj.status : {};
      const meta = isObj(obj.metadata) ? obj.metadata : {};
      if (status.installed === labelled) done.add(String(meta.name));
    });
    const cpuBefore = cpuMs(op.pid);
    const start = process.hrtime.bigint();
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < objects) {
          const name = `gd-${String(next++).padStart(4, '0')}`;
          const body = JSON.stringify({
            apiVersion: 'mydomain.com/v1beta1',
            kind: 'GenericDaemon',
            metadata: { name, namespace: 'default' },
            spec: { label: 'bench', image: 'mbessler/syslogdocker' },
          });
          const res = await http.request('POST', COLLECTION, body);
          if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.body.toString()}`);
        }
      }),
    );
    await until(
      () => done.size === objects,
      300_000,
      `${objects} GenericDaemons installed on ${labelled} nodes`,
    );
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = cpuMs(op.pid) - cpuBefore;
    watch.close();
    const metrics = await fetchMetrics(op.metricsUrl);
    return {
      objects,
      labelledNodes: labelled,
      seconds,
      perSecond: objects / seconds,
      operatorCpuMsPerObject: cpu / objects,
      operatorRssMb: rssBytes(op.pid) / 2 ** 20,
      operatorPeakRssMb: peakRssBytes(op.pid) / 2 ** 20,
      reconciles: metricSum(metrics, 'controller_runtime_reconcile_total', { controller: 'genericdaemon' }),
    };
  } finally {
    if (operator) await terminate(operator.child);
    http.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '100' },
      nodes: { type: 'string', default: '4' },
      runs: { type: 'string', default: '3' },
    },
  });
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const runs: GenericDaemonRun[] = [];
  for (let i = 0; i < Number(values.runs); i++) {
    const run = await runGenericDaemonBench(root, Number(values.objects), Number(values.nodes));
    runs.push(run);
    process.stdout.write(`run ${i + 1}: ${JSON.stringify(run)}\n`);
  }
  const m = (f: (r: GenericDaemonRun) => number) => median(runs.map(f)).toFixed(1);
  process.stdout.write(
    `GenericDaemon reconcile, median of ${runs.length}: ${m((r) => r.perSecond)} GenericDaemons/s ` +
      `(${values.objects} objects, ${runs[0]?.labelledNodes} labelled nodes of ${values.nodes}), ` +
      `operator CPU ${m((r) => r.operatorCpuMsPerObject)} ms/object, RSS ${m((r) => r.operatorRssMb)} MB ` +
      `(peak ${m((r) => r.operatorPeakRssMb)} MB), ${m((r) => r.reconciles)} reconciles\n`,
  );
}
