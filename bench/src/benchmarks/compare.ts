/**
 * Before and after, side by side in one run: the same server figures measured on two builds of
 * kubeloop, runs alternating so that the machine's noise falls on both alike.
 *
 *   git worktree add /tmp/kubeloop-base <ref> && cp -a node_modules /tmp/kubeloop-base/ \
 *     && (cd /tmp/kubeloop-base && npm run build)
 *   npm run build && node bench/dist/benchmarks/compare.js --baseline=/tmp/kubeloop-base [--runs=5]
 *
 * Figures (medians over the runs): start-to-ready and idle RSS of the default server (built-in
 * controllers on, as `kubeloop server` starts), and creates/s of 16 concurrent clients on a bare
 * server, in memory and with `--data-dir`. A figure regresses when the current build is more than 5 % worse.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { idle, rssBytes } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import { kubeloopTarget } from '../lib/targets.js';
import { type CreateResult, runCreates } from './create.js';

const CLIENTS = 16;
const WARMUP = 1_000;
const CREATES = 10_000;
const IDLE_MS = 2_000;
const TOLERANCE = 0.05;

interface Figures {
  readyMs: number[];
  idleRssMb: number[];
  createsPerSecond: number[];
  durableCreatesPerSecond: number[];
  /** Server CPU per create (memory): steadier than creates/s when the machine is shared. */
  serverCpuMsPerCreate: number[];
}

async function measure(root: string, dir: string, f: Figures): Promise<void> {
  const server = await startKubeloop({ root, kubeconfigPath: join(dir, 'kubeconfig-default') });
  try {
    f.readyMs.push(server.readyMs);
    await idle(IDLE_MS);
    f.idleRssMb.push(rssBytes(server.pid) / 2 ** 20);
  } finally {
    await server.stop();
  }
  const memory = await creates(root, join(dir, 'memory'));
  f.createsPerSecond.push(memory.perSecond);
  f.serverCpuMsPerCreate.push(memory.serverCpuMsPerCreate);
  f.durableCreatesPerSecond.push((await creates(root, join(dir, 'durable'), join(dir, 'data'))).perSecond);
}

/** Creates of 16 clients on a bare server (no controllers), after a warm-up. */
async function creates(root: string, dir: string, dataDir?: string): Promise<CreateResult> {
  const bare = await startKubeloop({
    root,
    kubeconfigPath: join(dir, 'kubeconfig'),
    ...(dataDir !== undefined && { dataDir }),
    args: ['--no-controllers'],
  });
  const target = kubeloopTarget(bare, CLIENTS);
  try {
    for (const ns of ['warmup', 'bench']) await target.prepare(ns);
    await runCreates(target, 'warmup', WARMUP, CLIENTS);
    await target.deleteAll('warmup');
    return await runCreates(target, 'bench', CREATES, CLIENTS);
  } finally {
    await target.close();
    await bare.stop();
  }
}

function row(name: string, unit: string, base: number[], cur: number[], higherIsBetter: boolean): string {
  const b = median(base);
  const c = median(cur);
  const ratio = c / b;
  const worse = higherIsBetter ? ratio < 1 - TOLERANCE : ratio > 1 + TOLERANCE;
  const fmt = (v: number) => v.toFixed(unit === '/s' ? 0 : v < 10 ? 3 : 1);
  return `${name.padEnd(34)} ${`${fmt(b)} ${unit}`.padStart(12)} ${`${fmt(c)} ${unit}`.padStart(12)} ${ratio
    .toFixed(3)
    .padStart(7)}x  ${worse ? 'REGRESSED (> 5 %)' : 'ok'}`;
}

async function main(): Promise<void> {
  const args = new Map(
    process.argv.slice(2).map((a) => {
      const [k, v] = a.replace(/^--/, '').split('=');
      return [k!, v ?? 'true'] as const;
    }),
  );
  const baseline = args.get('baseline');
  if (!baseline) {
    console.error(
      'usage: node bench/dist/benchmarks/compare.js --baseline=<built kubeloop checkout> [--runs=N]',
    );
    process.exit(2);
  }
  const runs = Number(args.get('runs') ?? 5);
  const current = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-compare-'));
  const figures = (): Figures => ({
    readyMs: [],
    idleRssMb: [],
    createsPerSecond: [],
    durableCreatesPerSecond: [],
    serverCpuMsPerCreate: [],
  });
  const base = figures();
  const cur = figures();
  try {
    for (let i = 0; i < runs; i++) {
      // ABBA order: neither build always goes first.
      const order = i % 2 === 0 ? [base, cur] : [cur, base];
      for (const f of order) {
        const which = f === base ? 'base' : 'current';
        await measure(which === 'base' ? resolve(baseline) : current, join(work, `${i}-${which}`), f);
      }
      console.error(
        `run ${i + 1}/${runs}: creates/s base ${base.createsPerSecond.at(-1)!.toFixed(0)}, current ${cur.createsPerSecond.at(-1)!.toFixed(0)}; ` +
          `idle RSS base ${base.idleRssMb.at(-1)!.toFixed(1)} MB, current ${cur.idleRssMb.at(-1)!.toFixed(1)} MB`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log(
    `\nbaseline: ${resolve(baseline)}\ncurrent:  ${current}\nmedians of ${runs} alternating runs\n`,
  );
  console.log(
    `${'figure'.padEnd(34)} ${'baseline'.padStart(12)} ${'current'.padStart(12)} ${'ratio'.padStart(7)}`,
  );
  console.log(row('start-to-ready (default server)', 'ms', base.readyMs, cur.readyMs, false));
  console.log(row('idle RSS (default server)', 'MB', base.idleRssMb, cur.idleRssMb, false));
  console.log(
    row(`creates/s (${CLIENTS} clients, memory)`, '/s', base.createsPerSecond, cur.createsPerSecond, true),
  );
  console.log(
    row('server CPU per create (memory)', 'ms', base.serverCpuMsPerCreate, cur.serverCpuMsPerCreate, false),
  );
  console.log(
    row(
      `creates/s (${CLIENTS} clients, --data-dir)`,
      '/s',
      base.durableCreatesPerSecond,
      cur.durableCreatesPerSecond,
      true,
    ),
  );
}

await main();
