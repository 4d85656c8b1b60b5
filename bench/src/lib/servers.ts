import { execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Endpoint } from './http.js';
import { freePort, type Started, spawnUntil, terminate } from './process.js';

/** A server under test running as a child process of the bench. */
export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly endpoint: Endpoint;
  /** Spawn-to-ready time of this start. */
  readonly readyMs: number;
  stop(): Promise<void>;
}

/** Options of {@link startKubeloop}. */
export interface KubeloopOptions {
  /** The repository root (holds `packages/cli/dist/bin.js`). */
  root: string;
  /** Where the kubeconfig is written. */
  kubeconfigPath: string;
  /** Durable storage in this directory; in memory when omitted. */
  dataDir?: string;
  /** Write a V8 CPU profile of the server into this directory when it exits. */
  cpuProfDir?: string;
  /** File name of that profile (default: Node's, `CPU.<date>.<pid>…cpuprofile`). */
  cpuProfName?: string;
  /** More flags of `kubeloop server`, e.g. `['--no-controllers']` or `['--nodes', '10']`. */
  args?: readonly string[];
  /** More flags of `node` itself, before the script (e.g. {@link gcPreloadArgs}). */
  nodeArgs?: readonly string[];
  /** Environment of the server process (default: the bench's). */
  env?: NodeJS.ProcessEnv;
}

/** Runs `kubeloop server --port 0` and waits for its `ready` line. */
export async function startKubeloop(o: KubeloopOptions): Promise<ServerProcess> {
  const profArgs = o.cpuProfDir
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${o.cpuProfDir}`,
        ...(o.cpuProfName ? [`--cpu-prof-name=${o.cpuProfName}`] : []),
      ]
    : [];
  const args = [
    ...profArgs,
    ...(o.nodeArgs ?? []),
    join(o.root, 'packages/cli/dist/bin.js'),
    'server',
    '--port',
    '0',
    '--kubeconfig',
    o.kubeconfigPath,
    ...(o.dataDir ? ['--data-dir', o.dataDir] : []),
    ...(o.args ?? []),
  ];
  const started = await spawnUntil(process.execPath, args, /ready at (https:\/\/\S+)/, 30_000, o.env);
  const kubeconfig = readFileSync(o.kubeconfigPath, 'utf8');
  const ca = /certificate-authority-data:\s*(\S+)/.exec(kubeconfig)?.[1];
  const token = /token:\s*(\S+)/.exec(kubeconfig)?.[1];
  if (!ca || !token) throw new Error(`unexpected kubeconfig at ${o.kubeconfigPath}`);
  return wrap(o.dataDir ? 'kubeloop (durable)' : 'kubeloop (memory)', started, {
    base: started.match[1]!,
    ca: Buffer.from(ca, 'base64').toString('utf8'),
    token,
  });
}

/** The etcd binary: `$ETCD` or `etcd` on the PATH; undefined when there is none. */
export function findEtcd(): { path: string; version: string } | undefined {
  const candidates = process.env.ETCD
    ? [process.env.ETCD]
    : (process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'etcd'));
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
    } catch {
      continue;
    }
    try {
      const out = execFileSync(path, ['--version'], { encoding: 'utf8' });
      return { path, version: /etcd Version:\s*(\S+)/.exec(out)?.[1] ?? 'unknown' };
    } catch {
      // Not a working etcd: try the next one.
    }
  }
  return undefined;
}

/**
 * Runs a single-member etcd with its data in `dataDir`, serving the v3 API (and its JSON gateway)
 * on a free loopback port over plain HTTP.
 */
export async function startEtcd(binary: string, dataDir: string): Promise<ServerProcess> {
  const client = `http://127.0.0.1:${await freePort()}`;
  const peer = `http://127.0.0.1:${await freePort()}`;
  const started = await spawnUntil(
    binary,
    [
      '--name',
      'bench',
      '--data-dir',
      dataDir,
      '--listen-client-urls',
      client,
      '--advertise-client-urls',
      client,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `bench=${peer}`,
      // kube-apiserver's usual setting; keeps the log quiet during the bench.
      '--quota-backend-bytes',
      String(8 * 1024 * 1024 * 1024),
    ],
    /ready to serve client requests/,
  );
  return wrap('etcd', started, { base: client });
}

function wrap(name: string, started: Started, endpoint: Endpoint): ServerProcess {
  return {
    name,
    pid: started.pid,
    endpoint,
    readyMs: started.readyMs,
    stop: () => terminate(started.child),
  };
}
