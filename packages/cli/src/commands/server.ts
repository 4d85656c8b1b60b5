import { resolve } from 'node:path';
import type { Command } from 'commander';
import { holdYoungGeneration } from './young-generation.js';

interface ServerFlags {
  host: string;
  port: string;
  kubeconfig?: string;
  dataDir?: string;
  watchHistory: string;
  compactionInterval: string;
  nodes: string;
  nodeLabels?: string;
  controllers: boolean;
  authorizationMode: string;
  auditPolicyFile?: string;
  auditLogPath?: string;
  auditLogMaxsize: string;
  auditLogMaxbackup: string;
  auditLogMaxage: string;
}

/** A non-negative integer flag, or the flag's error. */
function count(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${flag} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return n;
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

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go-style duration (`5m`, `1m30s`, `250ms`, `0`) in milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  if (text.trim() === '0') return 0;
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text.trim()) return undefined;
  return Math.round(parts.reduce((ms, p) => ms + Number(p[1]) * DURATION_UNITS[p[2]!]!, 0));
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
      'changes kept in memory for watch resume and consistent pagination (older: 410 Gone; with --data-dir, read from disk back to the last compaction)',
      '10000',
    )
    .option(
      '--compaction-interval <duration>',
      "with --data-dir: compact the history on disk this often, to the revision of the previous compaction, as kube-apiserver's --etcd-compaction-interval (watches resume from the last 1–2 intervals, also after a restart; older: 410 Gone); 0 never compacts",
      '5m',
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
    .option(
      '--authorization-mode <mode>',
      "kube-apiserver's --authorization-mode: RBAC (Roles and bindings decide) or AlwaysAllow (everyone may do anything); members of system:masters may always",
      'RBAC',
    )
    .option(
      '--audit-policy-file <path>',
      "kube-apiserver's --audit-policy-file: an audit.k8s.io/v1 Policy choosing which requests are audited and at which level",
    )
    .option(
      '--audit-log-path <path>',
      'append audit events to this file as JSON lines (- for standard output); needs --audit-policy-file',
    )
    .option('--audit-log-maxsize <MB>', 'rotate the audit log when it reaches this size (0: never)', '0')
    .option('--audit-log-maxbackup <count>', 'rotated audit logs to keep (0: all)', '0')
    .option('--audit-log-maxage <days>', 'days to keep rotated audit logs (0: no limit)', '0')
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
      const compactionIntervalMs = parseDuration(flags.compactionInterval);
      if (compactionIntervalMs === undefined) {
        throw new Error(
          `--compaction-interval must be a duration such as 5m, 90s or 0, got ${JSON.stringify(flags.compactionInterval)}`,
        );
      }
      const nodeCount = Number(flags.nodes);
      if (!Number.isInteger(nodeCount) || nodeCount < 0) {
        throw new Error(`--nodes must be a non-negative integer, got ${JSON.stringify(flags.nodes)}`);
      }
      const authorizationMode = flags.authorizationMode;
      if (authorizationMode !== 'RBAC' && authorizationMode !== 'AlwaysAllow') {
        throw new Error(
          `--authorization-mode must be RBAC or AlwaysAllow, got ${JSON.stringify(flags.authorizationMode)}`,
        );
      }
      const auditLogMaxSize = count('--audit-log-maxsize', flags.auditLogMaxsize);
      const auditLogMaxBackup = count('--audit-log-maxbackup', flags.auditLogMaxbackup);
      const auditLogMaxAge = count('--audit-log-maxage', flags.auditLogMaxage);
      const nodeLabels = flags.nodeLabels ? parseLabels(flags.nodeLabels) : undefined;
      const dataDir = flags.dataDir ? resolve(flags.dataDir) : undefined;
      const kubeconfigPath = resolve(
        flags.kubeconfig ?? (dataDir ? `${dataDir}/kubeconfig` : '.kubeloop/kubeconfig'),
      );
      // Before the control plane's code loads: its modules are the start's first survivors.
      const releaseYoungGeneration = holdYoungGeneration();
      // Loaded here, not with the command line: every other command starts without the control plane's code.
      const { startControlPlane } = await import('@kubeloop/server');
      const cp = await startControlPlane({
        host: flags.host,
        port,
        kubeconfigPath,
        watchHistorySize,
        compactionIntervalMs,
        nodes: { count: nodeCount, ...(nodeLabels && { labels: nodeLabels }) },
        controllers: flags.controllers,
        authorizationMode,
        ...(dataDir && { dataDir }),
        ...(flags.auditPolicyFile && { auditPolicyFile: resolve(flags.auditPolicyFile) }),
        ...(flags.auditLogPath && {
          auditLogPath: flags.auditLogPath === '-' ? '-' : resolve(flags.auditLogPath),
        }),
        auditLogMaxSize,
        auditLogMaxBackup,
        auditLogMaxAge,
      });
      releaseYoungGeneration(cp.settled);
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
