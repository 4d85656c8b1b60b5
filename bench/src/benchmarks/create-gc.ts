/**
 * Where the CPU of compare.js's creates figure goes, by thread and by garbage collection: the
 * server's CPU per create on its main thread and on its other threads (V8's GC helpers and
 * compiler, libuv), and the scavenges and full collections during the timed creates, for the
 * baseline, the current build, and the current build with V8's young generation free to grow
 * from the start (`--semi-space-growth-factor=2` on node's command line, which `kubeloop server`
 * then leaves alone instead of holding the young generation until the server settled).
 *
 *   npm run build && node bench/dist/benchmarks/create-gc.js --baseline=/work/wt/base-ff50f74 [--runs=3]
 *
 * Each round starts a fresh server per side, as compare.js does (1,000 warm-up creates, deleted,
 * then 5,000 timed creates from 16 clients); sides alternate order round by round.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import { kubeloopTarget } from '../lib/targets.js';
import { runCreates } from './create.js';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    runs: { type: 'string', default: '3' },
    creates: { type: 'string', default: '5000' },
  },
});
if (!values.baseline) throw new Error('--baseline=<checkout of the baseline, built> is required');
const RUNS = Number(values.runs);
const CREATES = Number(values.creates);
const CLIENTS = 16;
const here = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const preload = pathToFileURL(join(import.meta.dirname, '../lib/gc-count-preload.js')).href;

interface Side {
  name: string;
  root: string;
  nodeArgs: string[];
}
const SIDES: Side[] = [
  { name: 'baseline', root: resolve(values.baseline), nodeArgs: [] },
  { name: 'current', root: here, nodeArgs: [] },
  { name: 'current, young gen. free', root: here, nodeArgs: ['--semi-space-growth-factor=2'] },
];

interface GcCounts {
  seq: number;
  scavenges: number;
  scavengeMs: number;
  fullGcs: number;
  fullGcMs: number;
  youngBytes: number;
}

/** CPU ms of the process's main thread and of all its other threads (`/proc/<pid>/task`). */
function threadCpuMs(pid: number): { main: number; other: number } {
  const tick = 10; // USER_HZ = 100
  let main = 0;
  let other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(f[11]) + Number(f[12])) * tick;
    if (tid === String(pid)) main += ms;
    else other += ms;
  }
  return { main, other };
}

async function gcCounts(pid: number, file: string, after: number): Promise<GcCounts> {
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    if (existsSync(file)) {
      const c = JSON.parse(readFileSync(file, 'utf8')) as GcCounts;
      if (c.seq > after) return c;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Round {
  cpuMs: number;
  mainMs: number;
  otherMs: number;
  scavenges: number;
  scavengeMs: number;
  fullGcs: number;
  fullGcMs: number;
  youngMb: number;
}

async function measure(side: Side): Promise<Round> {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-create-gc-'));
  const file = join(dir, 'gc.json');
  const server = await startKubeloop({
    root: side.root,
    kubeconfigPath: join(dir, 'kubeconfig'),
    args: ['--no-controllers'],
    nodeArgs: [`--import=${preload}`, ...side.nodeArgs],
    env: { ...process.env, KUBELOOP_BENCH_GC_COUNT_FILE: file },
  });
  const target = kubeloopTarget(server, CLIENTS);
  try {
    for (const ns of ['warmup', 'bench']) await target.prepare(ns);
    await runCreates(target, 'warmup', 1_000, CLIENTS);
    await target.deleteAll('warmup');
    const gc0 = await gcCounts(server.pid, file, 0);
    const cpu0 = threadCpuMs(server.pid);
    await runCreates(target, 'bench', CREATES, CLIENTS);
    const cpu1 = threadCpuMs(server.pid);
    const gc1 = await gcCounts(server.pid, file, gc0.seq);
    const per = (v: number) => v / CREATES;
    return {
      cpuMs: per(cpu1.main + cpu1.other - cpu0.main - cpu0.other),
      mainMs: per(cpu1.main - cpu0.main),
      otherMs: per(cpu1.other - cpu0.other),
      scavenges: gc1.scavenges - gc0.scavenges,
      scavengeMs: gc1.scavengeMs - gc0.scavengeMs,
      fullGcs: gc1.fullGcs - gc0.fullGcs,
      fullGcMs: gc1.fullGcMs - gc0.fullGcMs,
      youngMb: gc0.youngBytes / 1024 / 1024,
    };
  } finally {
    await target.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rounds = new Map<string, Round[]>(SIDES.map((s) => [s.name, []]));
for (let i = 0; i < RUNS; i++) {
  const order = i % 2 === 0 ? SIDES : [...SIDES].reverse();
  for (const side of order) rounds.get(side.name)!.push(await measure(side));
  console.log(`round ${i + 1}/${RUNS} done`);
}

const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(
  `\nmedians of ${RUNS} rounds, ${CREATES} creates from ${CLIENTS} clients after 1,000 warm-up creates (load average ${load})`,
);
const base = median(rounds.get('baseline')!.map((r) => r.cpuMs));
console.log(
  'side                          CPU/create  ratio   main   other  scavenges (ms)  full GCs (ms)  young gen at start',
);
for (const side of SIDES) {
  const rs = rounds.get(side.name)!;
  const m = (f: (r: Round) => number) => median(rs.map(f));
  console.log(
    `${side.name.padEnd(28)}  ${m((r) => r.cpuMs).toFixed(3)} ms  ${(m((r) => r.cpuMs) / base).toFixed(3)}x  ` +
      `${m((r) => r.mainMs).toFixed(3)}  ${m((r) => r.otherMs).toFixed(3)}  ` +
      `${m((r) => r.scavenges)
        .toFixed(0)
        .padStart(4)} (${m((r) => r.scavengeMs)
        .toFixed(0)
        .padStart(4)})    ` +
      `${m((r) => r.fullGcs)
        .toFixed(0)
        .padStart(3)} (${m((r) => r.fullGcMs)
        .toFixed(0)
        .padStart(4)})    ` +
      `${m((r) => r.youngMb).toFixed(0)} MB`,
  );
}
console.log(
  `rerun: npm run build && node bench/dist/benchmarks/create-gc.js --baseline=${values.baseline} --runs=${RUNS}`,
);
