import { resolve } from 'node:path';
import { startControlPlane } from '@kubeloop/server';
import type { Command } from 'commander';

interface ServerFlags {
  host: string;
  port: string;
  kubeconfig?: string;
  dataDir?: string;
  watchHistory: string;
  nodes: string;
  nodeLabels?: string;
  controllers: boolean;
}

/** `k=v,k2=v2` into a label map. */
function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of text.split(',').filter((p) => p.trim() !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new Error(`--node-labels wants key=value pairs separated by commas, got ${JSON.stringify(pair)}`);
    labels[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return labels;
}

/** `kubeloop server`: runs the local control plane until SIGINT/SIGTERM. */
export function registerServerCommand(program: Command): void {
  program
    .command('server')
    .description('run the local Kubernetes-compatible control plane (kubectl works against it)')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free port)', '6443')
    .option(
      '--kubeconfig <path>',
      'where to write the admin kubeconfig (default: <data-dir>/kubeconfig or .kubeloop/kubeconfig)',
    )
    .option('--data-dir <dir>', 'keep the cluster state in this directory (SQLite); in memory when omitted')
    .option(
      '--watch-history <events>',
      'changes kept for watch resume and consistent pagination (older: 410 Gone)',
      '10000',
    )
    .option(
      '--nodes <count>',
      'simulated nodes (named kubeloop-node-1…) whose kubelet runs the pods bound to them',
      '1',
    )
    .option('--node-labels <k=v,...>', 'labels of every simulated node')
    .option(
      '--no-controllers',
      'a bare API server, as kube-apiserver without kube-controller-manager: no garbage collector, scheduler, kubelet or workload controllers (the namespace and CRD controllers still run)',
    )
    .action(async (flags: ServerFlags) => {
      const port = Number(flags.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new Error(`--port must be an integer between 0 and 65535, got ${JSON.stringify(flags.port)}`);
      }
      const watchHistorySize = Number(flags.watchHistory);
      if (!Number.isInteger(watchHistorySize) || watchHistorySize < 1) {
        throw new Error(
          `--watch-history must be a positive integer, got ${JSON.stringify(flags.watchHistory)}`,
        );
      }
      const nodeCount = Number(flags.nodes);
      if (!Number.isInteger(nodeCount) || nodeCount < 0) {
        throw new Error(`--nodes must be a non-negative integer, got ${JSON.stringify(flags.nodes)}`);
      }
      const nodeLabels = flags.nodeLabels ? parseLabels(flags.nodeLabels) : undefined;
      const dataDir = flags.dataDir ? resolve(flags.dataDir) : undefined;
      const kubeconfigPath = resolve(
        flags.kubeconfig ?? (dataDir ? `${dataDir}/kubeconfig` : '.kubeloop/kubeconfig'),
      );
      const cp = await startControlPlane({
        host: flags.host,
        port,
        kubeconfigPath,
        watchHistorySize,
        nodes: { count: nodeCount, ...(nodeLabels && { labels: nodeLabels }) },
        controllers: flags.controllers,
        ...(dataDir && { dataDir }),
      });
      // Handlers first: a supervisor may signal the moment it reads the ready line.
      const stopped = new Promise<void>((done) => {
        const shutdown = () => {
          process.off('SIGINT', shutdown);
          process.off('SIGTERM', shutdown);
          cp.stop().then(done, (err: unknown) => {
            process.stderr.write(`error while stopping: ${String(err)}\n`);
            process.exitCode = 1;
            done();
          });
        };
        process.on('SIGINT', shutdown);
        process.on('SIGTERM', shutdown);
      });
      process.stdout.write(`kubeloop control plane ready at ${cp.url}\n`);
      process.stdout.write(`  export KUBECONFIG=${kubeconfigPath}\n  kubectl get namespaces\n`);
      await stopped;
    });
}
