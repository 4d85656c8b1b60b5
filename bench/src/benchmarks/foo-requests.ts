/**
 * The server's work per Foo in the reconcile bench with the built-in controllers on, counted
 * rather than timed (a figure a loaded machine does not blur): the requests the server answered
 * per Foo by verb and resource (`apiserver_request_total`, over a cold and a warm burst until
 * every Foo's Deployment is available), and the server's and the operator's CPU per Foo. For
 * one or more builds one after the other, e.g. the baseline and the current build.
 *
 *   node bench/dist/benchmarks/foo-requests.js [--foos=N] [--nodes=N] [ROOT…]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { HttpClient } from '../lib/http.js';
import { cpuMs } from '../lib/proc.js';
import { terminate } from '../lib/process.js';
import { requestCounts } from '../lib/request-counts.js';
import { startKubeloop } from '../lib/servers.js';
import { burst } from './reconcile.js';
import { installCrd, nodesReady, startOperator } from './reconcile-support.js';
import type { ReconcileOptions } from './reconcile-types.js';

async function measure(root: string, foos: number, nodes: number) {
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-foo-requests-'));
  const kubeconfigPath = join(work, 'kubeconfig');
  const server = await startKubeloop({ root, kubeconfigPath, args: ['--nodes', String(nodes)] });
  const http = new HttpClient(server.endpoint, 16);
  const o: ReconcileOptions = {
    root,
    foos,
    clients: 16,
    workers: 2,
    replicas: 1,
    controllers: true,
    nodes,
    timeoutMs: 300_000,
  };
  const metrics = () => requestCounts(http);
  let operator: Awaited<ReturnType<typeof startOperator>> | undefined;
  try {
    await installCrd(http, root);
    await nodesReady(http, nodes);
    operator = await startOperator(o, kubeconfigPath, join(work, 'operator.log'));
    const before = await metrics();
    const server0 = cpuMs(server.pid);
    const operator0 = cpuMs(operator.pid);
    const session = { o, http, serverPid: server.pid, operator, timeoutMs: 300_000, log: () => undefined };
    await burst(session, 'cold');
    await burst(session, 'warm');
    const serverCpu = cpuMs(server.pid) - server0;
    const operatorCpu = cpuMs(operator.pid) - operator0;
    const after = await metrics();
    const perFoo = [...after]
      .map(([k, n]) => [k, (n - (before.get(k) ?? 0)) / (2 * foos)] as const)
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]);
    return { perFoo, serverCpuMs: serverCpu / (2 * foos), operatorCpuMs: operatorCpu / (2 * foos) };
  } finally {
    http.close();
    if (operator) await terminate(operator.child);
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { foos: { type: 'string', default: '100' }, nodes: { type: 'string', default: '20' } },
    allowPositionals: true,
    strict: true,
  });
  const here = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const roots = positionals.length > 0 ? positionals.map((p) => resolve(p)) : [here];
  const foos = Number(values.foos);
  const nodes = Number(values.nodes);
  console.log(
    `rerun: npm run build && node bench/dist/benchmarks/foo-requests.js --foos=${foos} --nodes=${nodes} ${positionals.join(' ')}`.trim(),
  );
  for (const root of roots) {
    const r = await measure(root, foos, nodes);
    const writes = r.perFoo.filter(([k]) => !/^(GET|LIST|WATCH) /.test(k)).reduce((s, [, n]) => s + n, 0);
    console.log(
      `${root}: per Foo (cold and warm bursts of ${foos}, until available): ${writes.toFixed(1)} writes; ` +
        `server CPU ${r.serverCpuMs.toFixed(1)} ms, operator CPU ${r.operatorCpuMs.toFixed(1)} ms`,
    );
    for (const [k, n] of r.perFoo) console.log(`  ${n.toFixed(2).padStart(6)} ${k}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
