/**
 * The EtcdCluster operator (examples/etcd-cluster) at work on many clusters: a default server
 * (`kubeloop server --nodes N`: StatefulSet controller, scheduler and simulated kubelets, so the
 * members' pods become Ready) given 100 EtcdClusters of 3 members, timed until every one is
 * `Running` with its 3 members ready; then every one scaled to 5, timed the same way. Each member
 * joins only once the previous one is ready, so a cluster takes at least `size` rounds of pod
 * start-up: the figure is the operator's orchestration throughput on the local control plane.
 * The operator runs as its users run it (`node examples/etcd-cluster/dist/main.js`, its member API
 * the in-process one), in its own process, so its CPU time and RSS are its own.
 *
 * Measured 2026-11-26, two runs on the shared 2-core machine (load average 8.6–10: wall times
 * vary, the operator's CPU does not): create 29.2 / 44.0 s for 100 clusters (3.4 / 2.3 per second,
 * operator CPU 35 ms per cluster), scale 3 → 5 21.8 / 19.3 s (4.6 / 5.2 per second, 19 ms per
 * cluster); operator RSS 75–76 MB idle, 119–121 MB peak.
 *
 * Rerun (after `npm run build`):
 *
 *   node bench/dist/benchmarks/etcd-cluster-reconcile.js [--clusters=100 --size=3 --scale-to=5 --nodes=6 --clients=8]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, type KubeObject, loadKubeconfig, type ResourceDescriptor } from 'kubeloop/client';
import { parseCustomResourceDefinitions } from 'kubeloop/manifests';
import { cpuMs, peakRssBytes, rssBytes } from '../lib/proc.js';
import { freePort, spawnUntil, terminate } from '../lib/process.js';
import { startKubeloop } from '../lib/servers.js';
import { metricSum } from './reconcile-support.js';

const NAMESPACE = 'default';
const EXAMPLE = 'examples/etcd-cluster';
type Cluster = KubeObject & { spec?: { size?: number; version?: string }; status?: Record<string, unknown> };
/** The EtcdCluster kind, described by hand: the bench builds against no example's code. */
const EtcdCluster: ResourceDescriptor<Cluster> = {
  group: 'etcd.cloud.io',
  version: 'v1alpha1',
  kind: 'EtcdCluster',
  plural: 'etcdclusters',
  namespaced: true,
};
const cluster = (i: number, size: number): Cluster => ({
  apiVersion: 'etcd.cloud.io/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: name(i), namespace: NAMESPACE },
  spec: { size, version: '3.5.17' },
});

/** Options of {@link runEtcdClusterReconcile}. */
export interface EtcdClusterReconcileOptions {
  /** The repository root (holds `packages/cli/dist/bin.js` and the built example). */
  root: string;
  clusters: number;
  /** The members each cluster is created with. */
  size: number;
  /** The members each cluster is then scaled to (no second phase when equal to `size`). */
  scaleTo: number;
  /** Simulated nodes (110 pods each). */
  nodes: number;
  /** Concurrent clients creating and scaling the clusters. */
  clients: number;
}

/** The figures of one phase (create, or scale). */
export interface PhaseFigures {
  /** Wall time from the first write to every cluster Running at its size. */
  seconds: number;
  /** Clusters converged per second. */
  clustersPerSecond: number;
  /** Membership changes (member adds and removes) per second. */
  memberChangesPerSecond: number;
  /** Reconciles the operator ran in the phase (`controller_runtime_reconcile_total`). */
  reconciles: number;
  reconcilesPerSecond: number;
  /** The operator's CPU time in the phase, and per cluster. */
  operatorCpuSeconds: number;
  operatorCpuMsPerCluster: number;
  /** The operator's resident set at the end of the phase. */
  operatorRssMb: number;
}

/** The result of a run. */
export interface EtcdClusterReconcileResult {
  options: Omit<EtcdClusterReconcileOptions, 'root'>;
  create: PhaseFigures;
  scale?: PhaseFigures;
  /** The operator's resident set when idle with its caches synced, and its peak over the run. */
  operatorIdleRssMb: number;
  operatorPeakRssMb: number;
}

const name = (i: number) => `etcd-${String(i).padStart(4, '0')}`;
const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** Runs `work` on `n` indices with `clients` concurrent workers. */
async function pool(n: number, clients: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(clients, n) }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

/** Runs the benchmark once. */
export async function runEtcdClusterReconcile(
  o: EtcdClusterReconcileOptions,
): Promise<EtcdClusterReconcileResult> {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-etcd-bench-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const server = await startKubeloop({ root: o.root, kubeconfigPath, args: ['--nodes', String(o.nodes)] });
  const client = new Client(await loadKubeconfig({ kubeconfig: readFileSync(kubeconfigPath, 'utf8') }));
  let operator: Awaited<ReturnType<typeof spawnUntil>> | undefined;
  try {
    const crdFile = join(o.root, EXAMPLE, 'config/crd/bases/etcd.cloud.io_etcdclusters.yaml');
    for (const crd of parseCustomResourceDefinitions(readFileSync(crdFile, 'utf8')))
      await client.apply(crd, { fieldManager: 'bench', force: true });
    // Established: the resource is served.
    for (;;) {
      try {
        await client.api(EtcdCluster, NAMESPACE).list();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    const metricsPort = await freePort();
    operator = await spawnUntil(
      process.execPath,
      [
        join(o.root, EXAMPLE, 'dist/main.js'),
        `--metrics-bind-address=127.0.0.1:${metricsPort}`,
        '--health-probe-bind-address=127.0.0.1:0',
      ],
      /caches synced/,
      30_000,
      { ...process.env, KUBECONFIG: kubeconfigPath, LOG_LEVEL: 'info' },
    );
    const pid = operator.pid;
    const reconciles = async () =>
      metricSum(
        await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(),
        'controller_runtime_reconcile_total',
      );
    const operatorIdleRssMb = mb(rssBytes(pid));

    const list = async () => (await client.api(EtcdCluster, NAMESPACE).list()).items;
    const phase = async (size: number, write: (i: number) => Promise<void>, changes: number) => {
      const cpu0 = cpuMs(pid);
      const rec0 = await reconciles();
      const t0 = performance.now();
      await pool(o.clusters, o.clients, write);
      // Converged: every cluster Running with `size` ready members (polled: one list of the clusters).
      for (;;) {
        const items = await list();
        const done = items.filter(
          (c) => c.status?.phase === 'Running' && c.status?.readyMembers === size && c.status?.size === size,
        ).length;
        if (items.length === o.clusters && done === o.clusters && items.every((c) => c.spec?.size === size))
          break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const seconds = (performance.now() - t0) / 1000;
      const cpu = (cpuMs(pid) - cpu0) / 1000;
      const recs = (await reconciles()) - rec0;
      return {
        seconds: round(seconds),
        clustersPerSecond: round(o.clusters / seconds),
        memberChangesPerSecond: round(changes / seconds),
        reconciles: recs,
        reconcilesPerSecond: round(recs / seconds),
        operatorCpuSeconds: round(cpu),
        operatorCpuMsPerCluster: round((cpu * 1000) / o.clusters),
        operatorRssMb: mb(rssBytes(pid)),
      } satisfies PhaseFigures;
    };

    const create = await phase(
      o.size,
      async (i) => {
        await client.create(cluster(i, o.size));
      },
      o.clusters * o.size,
    );
    const scale =
      o.scaleTo === o.size
        ? undefined
        : await phase(
            o.scaleTo,
            async (i) => {
              await client.patch(cluster(i, o.size), { spec: { size: o.scaleTo } });
            },
            o.clusters * Math.abs(o.scaleTo - o.size),
          );
    return {
      options: { clusters: o.clusters, size: o.size, scaleTo: o.scaleTo, nodes: o.nodes, clients: o.clients },
      create,
      ...(scale && { scale }),
      operatorIdleRssMb,
      operatorPeakRssMb: mb(peakRssBytes(pid)),
    };
  } finally {
    if (operator) await terminate(operator.child);
    await client.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      clusters: { type: 'string', default: '100' },
      size: { type: 'string', default: '3' },
      'scale-to': { type: 'string', default: '5' },
      nodes: { type: 'string', default: '6' },
      clients: { type: 'string', default: '8' },
    },
  });
  const result = await runEtcdClusterReconcile({
    root: resolve(dirname(fileURLToPath(import.meta.url)), '../../..'),
    clusters: Number(values.clusters),
    size: Number(values.size),
    scaleTo: Number(values['scale-to']),
    nodes: Number(values.nodes),
    clients: Number(values.clients),
  });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
