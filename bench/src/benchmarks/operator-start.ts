/**
 * The sample operator's fixed cost on two builds side by side (issue 24): spawned on one Foo,
 * the time until that Foo has its status, the process's CPU then, and its memory at rest
 * (1.5 s later, after a forced GC: V8's heap used and total, RSS) — the part of its memory that
 * does not depend on the number of objects. Medians of alternating runs (ABBA).
 *
 *   npm run build && node bench/dist/benchmarks/operator-start.js --baseline=/path/to/other/checkout [--runs=6]
 *
 * The operator runs as operators.js runs it (2 workers, metrics and probes on loopback ports,
 * `MALLOC_ARENA_MAX=2`, no webhooks) with `--expose-gc` and a preload that, on SIGUSR2, collects
 * and writes `process.memoryUsage()` to a file. One local control plane (`--no-controllers`)
 * serves both builds.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Deployment, isNotFound } from 'kubeloop/client';
import { cpuMs, idle, rssBytes } from '../lib/proc.js';
import { terminate } from '../lib/process.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import { Foo, ignoring, installFooCrd, sampleOperator } from './operators.js';

const PRELOAD = `import { writeFileSync } from 'node:fs';
process.on('SIGUSR2', () => {
  globalThis.gc();
  const m = process.memoryUsage();
  writeFileSync(process.env.OPERATOR_START_MEMORY, JSON.stringify(m));
});
`;

interface Sample {
  ms: number;
  cpuMs: number;
  heapUsedMb: number;
  heapTotalMb: number;
  rssMb: number;
}

/** Spawns `root`'s sample operator until it printed `msg`; returns the child and the time. */
async function spawnOperator(
  root: string,
  dir: string,
  kubeconfig: string,
): Promise<{ child: ChildProcess; ms: number }> {
  const operator = await sampleOperator(root, kubeconfig);
  const start = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', join(dir, 'preload.mjs'), ...operator.args],
    {
      cwd: operator.cwd,
      env: { ...operator.env, OPERATOR_START_MEMORY: join(dir, 'memory.json') },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolvePromise, reject) => {
    let buf = '';
    const exited = (code: number | null) => reject(new Error(`${root}: the operator exited (${code})`));
    child.once('exit', exited);
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      if (buf.includes('"msg":"updated status"')) {
        child.off('exit', exited);
        resolvePromise({ child, ms: Number(process.hrtime.bigint() - start) / 1e6 });
      }
    });
  });
}

async function round(client: Client, root: string, dir: string, kubeconfig: string): Promise<Sample> {
  await ignoring(client.api(Deployment, 'default').delete('start-foo'), isNotFound);
  await ignoring(client.api(Foo, 'default').delete('start-foo'), isNotFound);
  await client.api(Foo, 'default').create({
    apiVersion: 'samplecontroller.k8s.io/v1alpha1',
    kind: 'Foo',
    metadata: { name: 'start-foo' },
    spec: { deploymentName: 'start-foo', replicas: 1 },
  });
  const { child, ms } = await spawnOperator(root, dir, kubeconfig);
  const pid = child.pid!;
  const cpu = cpuMs(pid);
  try {
    // At rest: what is loaded only to start (TypeBox's builders, the kubeconfig's YAML) is let go
    // a second after its last use.
    await idle(1500);
    rmSync(join(dir, 'memory.json'), { force: true });
    child.kill('SIGUSR2');
    let mem: NodeJS.MemoryUsage | undefined;
    for (let i = 0; i < 100 && !mem; i++) {
      try {
        mem = JSON.parse(readFileSync(join(dir, 'memory.json'), 'utf8')) as NodeJS.MemoryUsage;
      } catch {
        await idle(50);
      }
    }
    if (!mem) throw new Error('the operator wrote no memory figures');
    return {
      ms,
      cpuMs: cpu,
      heapUsedMb: mem.heapUsed / 2 ** 20,
      heapTotalMb: mem.heapTotal / 2 ** 20,
      rssMb: rssBytes(pid) / 2 ** 20,
    };
  } finally {
    await terminate(child);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { baseline: { type: 'string' }, runs: { type: 'string' } } });
  if (!values.baseline) throw new Error('--baseline=<checkout of the other build> is required');
  const runs = Number(values.runs ?? 6);
  const sides = {
    base: resolve(values.baseline),
    cur: resolve(fileURLToPath(new URL('../../..', import.meta.url))),
  };
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-operator-start-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(join(dir, 'preload.mjs'), PRELOAD);
  const server = await startKubeloop({
    root: sides.cur,
    kubeconfigPath: kubeconfig,
    args: ['--no-controllers'],
  });
  const client = await Client.fromKubeconfig({ path: kubeconfig });
  const load = [loadavg()[0]!];
  try {
    await installFooCrd(client, sides.cur);
    const samples: Record<'base' | 'cur', Sample[]> = { base: [], cur: [] };
    for (let i = 0; i < runs; i++) {
      const order: ('base' | 'cur')[] = i % 2 === 0 ? ['base', 'cur'] : ['cur', 'base'];
      for (const side of order) samples[side].push(await round(client, sides[side], dir, kubeconfig));
    }
    load.push(loadavg()[0]!);
    const m = (side: 'base' | 'cur', k: keyof Sample) => median(samples[side].map((s) => s[k]));
    const row = (name: string, k: keyof Sample, unit: string, digits: number) => {
      const [b, c] = [m('base', k), m('cur', k)];
      return `${name.padEnd(40)} ${`${b.toFixed(digits)} ${unit}`.padStart(12)} ${`${c.toFixed(digits)} ${unit}`.padStart(12)}  ${(c / b).toFixed(3)}x`;
    };
    console.log(`baseline: ${sides.base}\ncurrent:  ${sides.cur}\n`);
    console.log(`sample operator on 1 Foo, medians of ${runs} alternating runs`);
    console.log(`${'figure'.padEnd(40)} ${'baseline'.padStart(12)} ${'current'.padStart(12)}  ratio`);
    console.log(row('spawn -> Foo has its status', 'ms', 'ms', 0));
    console.log(row('CPU then', 'cpuMs', 'ms', 0));
    console.log(row('heap used at rest (after GC)', 'heapUsedMb', 'MB', 2));
    console.log(row('heap total at rest', 'heapTotalMb', 'MB', 1));
    console.log(row('RSS at rest', 'rssMb', 'MB', 1));
    console.log(`\nload average (1 min) before/after: ${load.map((l) => l.toFixed(2)).join(' / ')}`);
    console.log(
      `rerun: npm run build && node bench/dist/benchmarks/operator-start.js --baseline=${values.baseline} --runs=${runs}`,
    );
  } finally {
    await client.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
