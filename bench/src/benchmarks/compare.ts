/**
 * Before and after, side by side in one run: the same server figures measured on two builds of
 * kubeloop, runs alternating so that the machine's noise falls on both alike.
 *
 *   git worktree add /tmp/kubeloop-base <ref> && cp -a node_modules /tmp/kubeloop-base/ \
 *     && (cd /tmp/kubeloop-base && npm run build)
 *   npm run build && node bench/dist/benchmarks/compare.js --baseline=/tmp/kubeloop-base [--runs=5] [--quick]
 *
 * Figures (medians over the runs, with the spread of the per-round ratios as the noise):
 * - start-to-ready and idle RSS (2 s after ready, and settled) of the default server (built-in controllers on, as `kubeloop server`
 *   starts), against their targets (< 500 ms, < 100 MB);
 * - the built-in controllers at work (`pods.ts`): 50 Deployments × 20 replicas on a server with 20
 *   simulated nodes, pods/s until every pod is Running and every Deployment done, server CPU per
 *   pod, and the server's RSS and V8 heap holding the 1,000 pods, after a full GC;
 * - creates/s of 16 concurrent clients on a bare server, in memory and with `--data-dir`, and the
 *   server CPU per create.
 * A figure regresses when the current build is more than 5 % worse.
 *
 * Both builds are driven only through public entry points (`packages/cli/dist/bin.js server` and
 * the REST API), by the clients of this checkout, so that refactoring either build's internals
 * changes nothing in how it is measured.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuMs, idle, rssBytes } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import { kubeloopTarget } from '../lib/targets.js';
import { type CreateResult, runCreates } from './create.js';
import { runPods } from './pods.js';
import { runReconcile } from './reconcile.js';

const CLIENTS = 16;
const IDLE_MS = 2_000;
/** How long a server idles before its settled RSS is read (V8's memory reducer acts within ~10–15 s). */
const SETTLE_MS = 25_000;
const TOLERANCE = 0.05;

/** The groups of figures, each measured on both builds back to back. */
const GROUPS = ['default', 'pods', 'foos', 'creates', 'durable'] as const;
type Group = (typeof GROUPS)[number];

/** The sizes of one run: the defaults, or the smaller ones of `--quick`. */
interface Sizes {
  runs: number;
  warmup: number;
  creates: number;
  deployments: number;
  replicas: number;
  nodes: number;
  /** Foos per burst of the sample operator's reconcile with the built-in controllers on. */
  foos: number;
}

const FULL: Sizes = {
  runs: 4,
  warmup: 1_000,
  creates: 5_000,
  deployments: 50,
  replicas: 20,
  nodes: 20,
  foos: 100,
};
const QUICK: Sizes = { ...FULL, runs: 2, warmup: 500, creates: 2_000, foos: 50 };

/** One figure: how it is named, printed and judged, and its values on each side, one per round. */
interface Figure {
  name: string;
  unit: 'ms' | 'MB' | '/s';
  higherIsBetter: boolean;
  /** An absolute target of the current build, or `below-baseline`: lower than the baseline's median. */
  target?: { op: '<'; value: number } | 'below-baseline';
  base: number[];
  cur: number[];
}

type Side = 'base' | 'cur';

/** The figures of the comparison, in the order printed. */
function figures(s: Sizes) {
  const f = (
    name: string,
    unit: Figure['unit'],
    higherIsBetter: boolean,
    target?: Figure['target'],
  ): Figure => ({ name, unit, higherIsBetter, ...(target && { target }), base: [], cur: [] });
  const pods = (s.deployments * s.replicas).toLocaleString('en-US');
  const workload = `${pods} pods, ${s.nodes} nodes`;
  return {
    readyMs: f('start-to-ready (default server)', 'ms', false, { op: '<', value: 500 }),
    readyCpuMs: f('CPU until ready (default server)', 'ms', false),
    idleRssMb: f('idle RSS (default server), 2 s after ready', 'MB', false, { op: '<', value: 100 }),
    settledRssMb: f('idle RSS (default server), settled', 'MB', false, { op: '<', value: 100 }),
    podsRssMb: f(`RSS after GC, ${workload}`, 'MB', false, 'below-baseline'),
    podsHeapMb: f(`V8 heap used after GC, ${workload}`, 'MB', false, 'below-baseline'),
    podsPerSecond: f(`reconcile ${s.deployments} Deployments: pods/s to done`, '/s', true),
    podsRunningMs: f(`reconcile ${s.deployments} Deployments: all pods Running`, 'ms', false),
    podsCpuMs: f(`reconcile ${s.deployments} Deployments: server CPU/pod`, 'ms', false),
    foosColdPerSecond: f(`reconcile ${s.foos} Foos, cold: Foos/s to available`, '/s', true),
    foosWarmPerSecond: f(`reconcile ${s.foos} Foos, warm: Foos/s to available`, '/s', true),
    createsPerSecond: f(`creates/s (${CLIENTS} clients, memory)`, '/s', true),
    serverCpuMsPerCreate: f('server CPU per create (memory)', 'ms', false),
    durableCreatesPerSecond: f(`creates/s (${CLIENTS} clients, --data-dir)`, '/s', true),
  };
}

type Figures = ReturnType<typeof figures>;

/** Share of the machine's CPU used by other processes during each timed window (for the reader to judge the noise). */
const otherLoad: number[] = [];

/** Start-to-ready and idle RSS of the default server. */
async function measureDefault(root: string, dir: string, f: Figures, side: Side): Promise<string> {
  const server = await startKubeloop({ root, kubeconfigPath: join(dir, 'kubeconfig-default') });
  try {
    f.readyMs[side].push(server.readyMs);
    // CPU time of all its threads by the ready line: what a start costs, less moved by a busy
    // machine than the wall-clock time (the ready line is read at once, the process then idles).
    f.readyCpuMs[side].push(cpuMs(server.pid));
    await idle(IDLE_MS);
    const rss = rssBytes(server.pid) / 2 ** 20;
    f.idleRssMb[side].push(rss);
    // An idle process keeps the young generation its start grew until V8's memory reducer
    // shrinks it, some seconds into the idleness: what a server that sits idle holds.
    await idle(SETTLE_MS - IDLE_MS);
    const settled = rssBytes(server.pid) / 2 ** 20;
    f.settledRssMb[side].push(settled);
    return `ready in ${server.readyMs.toFixed(0)} ms (CPU ${f.readyCpuMs[side].at(-1)!.toFixed(0)} ms), idle RSS ${rss.toFixed(1)} MB, settled ${settled.toFixed(1)} MB`;
  } finally {
    await server.stop();
  }
}

/** The built-in controllers reconciling Deployments into pods, and the memory holding them. */
async function measurePods(root: string, dir: string, s: Sizes, f: Figures, side: Side): Promise<string> {
  const r = await runPods({ root, dir, deployments: s.deployments, replicas: s.replicas, nodes: s.nodes });
  f.podsRssMb[side].push(r.memory.rssMb);
  f.podsHeapMb[side].push(r.memory.heapUsedMb);
  f.podsPerSecond[side].push(r.podsPerSecond);
  f.podsRunningMs[side].push(r.runningMs);
  f.podsCpuMs[side].push(r.serverCpuMsPerPod);
  otherLoad.push(r.otherCpuPercent);
  const m = r.memory;
  return (
    `${r.podsPerSecond.toFixed(0)} pods/s, after GC RSS ${m.rssMb.toFixed(1)} MB (anon ${m.rssAnonMb.toFixed(1)}, file ${m.rssFileMb.toFixed(1)}), ` +
    `heap ${m.heapUsedMb.toFixed(1)} of ${m.heapTotalMb.toFixed(1)} MB, external ${m.externalMb.toFixed(1)} MB (other processes ${r.otherCpuPercent.toFixed(0)}%)`
  );
}

/**
 * The reconcile benchmark with the built-in controllers on (`reconcile.ts`): each build's own
 * sample-controller operator (`examples/sample-controller/dist/main.js`) against its own server with
 * simulated nodes; a cold burst of Foos, then a warm one, each timed until every Foo reports its
 * replica available (the Deployment, ReplicaSet, scheduler and kubelet all done).
 */
async function measureFoos(root: string, s: Sizes, f: Figures, side: Side): Promise<string> {
  const r = await runReconcile({
    root,
    foos: s.foos,
    clients: CLIENTS,
    workers: 2,
    replicas: 1,
    controllers: true,
    nodes: s.nodes,
    timeoutMs: 300_000,
  });
  const perSecond = (ms: number | undefined) => s.foos / ((ms ?? Number.NaN) / 1000);
  f.foosColdPerSecond[side].push(perSecond(r.cold.availableMs));
  f.foosWarmPerSecond[side].push(perSecond(r.warm.availableMs));
  otherLoad.push(r.cold.otherCpuPercent, r.warm.otherCpuPercent);
  return `cold ${perSecond(r.cold.availableMs).toFixed(1)} Foos/s, warm ${perSecond(r.warm.availableMs).toFixed(1)} Foos/s (other processes ${r.warm.otherCpuPercent.toFixed(0)}%)`;
}

/** Creates of 16 clients on a bare server (no controllers), after a warm-up. */
async function measureCreates(
  root: string,
  dir: string,
  s: Sizes,
  f: Figures,
  side: Side,
  durable: boolean,
): Promise<string> {
  const r = await creates(root, dir, s, durable ? join(dir, 'data') : undefined);
  otherLoad.push(r.otherCpuPercent);
  if (durable) f.durableCreatesPerSecond[side].push(r.perSecond);
  else {
    f.createsPerSecond[side].push(r.perSecond);
    f.serverCpuMsPerCreate[side].push(r.serverCpuMsPerCreate);
  }
  return `${r.perSecond.toFixed(0)} creates/s (other processes ${r.otherCpuPercent.toFixed(0)}%)`;
}

/** `--cpu-prof=DIR`: where the servers of the creates figures write their V8 CPU profiles. */
let cpuProfDir: string | undefined;

async function creates(root: string, dir: string, s: Sizes, dataDir?: string): Promise<CreateResult> {
  const bare = await startKubeloop({
    root,
    kubeconfigPath: join(dir, 'kubeconfig'),
    ...(dataDir !== undefined && { dataDir }),
    args: ['--no-controllers'],
    // One profile per server, named after the build and the round's directory.
    ...(cpuProfDir !== undefined && {
      cpuProfDir,
      cpuProfName: `${basename(dir)}-${dataDir === undefined ? 'memory' : 'durable'}.cpuprofile`,
    }),
  });
  const target = kubeloopTarget(bare, CLIENTS);
  try {
    for (const ns of ['warmup', 'bench']) await target.prepare(ns);
    await runCreates(target, 'warmup', s.warmup, CLIENTS);
    await target.deleteAll('warmup');
    return await runCreates(target, 'bench', s.creates, CLIENTS);
  } finally {
    await target.close();
    await bare.stop();
  }
}

const fmtValue = (v: number, unit: Figure['unit']) =>
  `${v.toFixed(v >= 100 ? (unit === '/s' ? 0 : 1) : v < 10 ? 3 : 1)} ${unit}`;

/** The verdict on one figure: its regression check and, if it has one, its target. */
function verdict(fig: Figure): string {
  const b = median(fig.base);
  const c = median(fig.cur);
  const ratio = c / b;
  const worse = fig.higherIsBetter ? ratio < 1 - TOLERANCE : ratio > 1 + TOLERANCE;
  const parts = [worse ? 'REGRESSED (> 5 %)' : 'ok'];
  if (fig.target === 'below-baseline')
    parts.push(c < b ? 'lower than baseline: PASS' : 'lower than baseline: MISS');
  else if (fig.target) {
    const t = `${fig.target.op} ${fmtValue(fig.target.value, fig.unit)}`;
    parts.push(`target ${t}: ${c < fig.target.value ? 'PASS' : 'MISS'}`);
  }
  return parts.join('; ');
}

/**
 * One line of the table: medians, their ratio, the range of the per-round ratios (the two builds
 * measured back to back: how far apart one round can put identical builds), the verdict.
 */
function row(fig: Figure): string {
  const b = median(fig.base);
  const c = median(fig.cur);
  const pairs = fig.base.map((v, i) => fig.cur[i]! / v).filter(Number.isFinite);
  const spread = pairs.length > 1 ? `${Math.min(...pairs).toFixed(2)}–${Math.max(...pairs).toFixed(2)}` : '-';
  return `${fig.name.padEnd(44)} ${fmtValue(b, fig.unit).padStart(12)} ${fmtValue(c, fig.unit).padStart(12)} ${`${(c / b).toFixed(3)}x`.padStart(7)} ${spread.padStart(10)}  ${verdict(fig)}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      baseline: { type: 'string' },
      runs: { type: 'string' },
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      json: { type: 'string' },
      'cpu-prof': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help || !values.baseline) {
    console.error(
      [
        'usage: node bench/dist/benchmarks/compare.js --baseline=<built kubeloop checkout> [options]',
        `  --runs=N      rounds, each measuring both builds back to back, alternating which goes first (default ${FULL.runs}, --quick ${QUICK.runs})`,
        `  --quick       fewer rounds, creates and Foos (${QUICK.runs} rounds, ${QUICK.creates} creates, ${QUICK.foos} Foos); the pods figure keeps its size`,
        `  --only=G,...  some of the groups: ${GROUPS.join(', ')}`,
        '  --json=FILE   also write every value of every round to FILE',
        '  --cpu-prof=DIR  the servers of the creates and durable figures write V8 CPU profiles into DIR',
        '                (<round>-<group>-<base|cur>-<memory|durable>.cpuprofile; the whole run of each server)',
      ].join('\n'),
    );
    process.exit(values.help ? 0 : 2);
  }
  const sizes: Sizes = { ...(values.quick ? QUICK : FULL) };
  if (values.runs !== undefined) {
    sizes.runs = Number(values.runs);
    if (!Number.isInteger(sizes.runs) || sizes.runs < 1) throw new Error(`--runs must be a positive integer`);
  }
  if (values['cpu-prof'] !== undefined) {
    cpuProfDir = resolve(values['cpu-prof']);
    mkdirSync(cpuProfDir, { recursive: true });
  }
  const baseline = resolve(values.baseline);
  const current = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const rerun = `npm run build && node bench/dist/benchmarks/compare.js --baseline=${baseline} --runs=${sizes.runs}${values.quick ? ' --quick' : ''}${values.only ? ` --only=${values.only}` : ''}${cpuProfDir ? ` --cpu-prof=${cpuProfDir}` : ''}`;
  console.log(`rerun: ${rerun}`);
  const f = figures(sizes);
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-compare-'));
  const started = Date.now();
  const measures: Record<Group, (root: string, dir: string, side: Side) => Promise<string>> = {
    default: (root, dir, side) => measureDefault(root, dir, f, side),
    pods: (root, dir, side) => measurePods(root, dir, sizes, f, side),
    foos: (root, _dir, side) => measureFoos(root, sizes, f, side),
    creates: (root, dir, side) => measureCreates(root, dir, sizes, f, side, false),
    durable: (root, dir, side) => measureCreates(root, dir, sizes, f, side, true),
  };
  const only = values.only?.split(',') ?? GROUPS;
  for (const g of only)
    if (!(GROUPS as readonly string[]).includes(g)) throw new Error(`--only: unknown group ${g}`);
  const groups = GROUPS.filter((g) => only.includes(g)).map((g) => [g, measures[g]] as const);
  try {
    for (let i = 0; i < sizes.runs; i++) {
      // Each group measures both builds back to back, in ABBA order: neither always goes first,
      // and the two values of a round meet the same state of a shared machine.
      const order: Side[] = i % 2 === 0 ? ['base', 'cur'] : ['cur', 'base'];
      for (const [name, measure] of groups) {
        const notes: string[] = [];
        for (const side of order) {
          const dir = join(work, `${i}-${name.replace(/\W+/g, '-')}-${side}`);
          mkdirSync(dir, { recursive: true });
          const note = await measure(side === 'base' ? baseline : current, dir, side);
          notes.push(`${side === 'base' ? 'baseline' : 'current'} ${note}`);
        }
        console.error(`  round ${i + 1}/${sizes.runs} ${name}: ${notes.join('; ')}`);
      }
      console.error(
        `round ${i + 1}/${sizes.runs} done after ${((Date.now() - started) / 1000).toFixed(0)} s`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`\nbaseline: ${baseline}\ncurrent:  ${current}`);
  console.log(
    `medians of ${sizes.runs} rounds (ABBA), ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
      `ratio = current / baseline; per-round = the range of the ratios of single rounds (the noise)\n`,
  );
  console.log(
    `${'figure'.padEnd(44)} ${'baseline'.padStart(12)} ${'current'.padStart(12)} ${'ratio'.padStart(7)} ${'per-round'.padStart(10)}  verdict`,
  );
  for (const fig of Object.values(f)) if (fig.base.length > 0) console.log(row(fig));
  if (f.podsPerSecond.base.length > 0)
    console.log(
      `\nreconcile: ${sizes.deployments} Deployments × ${sizes.replicas} replicas created by 4 clients on \`kubeloop server --nodes ${sizes.nodes}\`, ` +
        'timed until every pod is Running and every Deployment reports all replicas updated and available; ' +
        'memory read after that, 2 s idle and a full GC (`--expose-gc`, median of 5 RSS samples)',
    );
  if (f.foosWarmPerSecond.base.length > 0)
    console.log(
      `reconcile Foos: each build's sample operator (2 workers) and \`kubeloop server --nodes ${sizes.nodes}\`; ${sizes.foos} Foos ` +
        `(replicas 1) from ${CLIENTS} clients, a cold burst then a warm one, each timed until every Foo reports availableReplicas = 1`,
    );
  if (otherLoad.length > 0)
    console.log(
      `other processes used ${median(otherLoad).toFixed(0)}% of the machine during the timed windows (median; max ${Math.max(...otherLoad).toFixed(0)}%): ` +
        'rerun on a quieter machine when this is high',
    );
  if (values.json) {
    writeFileSync(values.json, `${JSON.stringify({ baseline, current, sizes, figures: f }, null, 2)}\n`);
    console.log(`values: ${values.json}`);
  }
  console.log(`rerun: ${rerun}`);
}

await main();
