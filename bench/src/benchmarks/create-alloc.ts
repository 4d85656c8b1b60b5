/**
 * Allocation and CPU per create, baseline against current, side by side in one run: compare.js's
 * creates figure (a fresh `--no-controllers` server per side and round, 1,000 warm-up creates,
 * deleted, then the timed creates of ConfigMaps from 16 clients), with the bytes V8 allocated per
 * create (`lib/alloc-count-preload.ts`) and the server's CPU per create. Allocation hardly
 * depends on the machine's load, so it tells a change apart where the timings are noisy.
 *
 *   npm run build && node bench/dist/benchmarks/create-alloc.js --baseline=/work/wt/base-ff50f74 [--runs=4] [--creates=5000]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuMs } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import { kubeloopTarget } from '../lib/targets.js';
import { runCreates } from './create.js';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    runs: { type: 'string', default: '4' },
    creates: { type: 'string', default: '5000' },
  },
});
if (!values.baseline) throw new Error('--baseline=<checkout of the baseline, built> is required');
const RUNS = Number(values.runs);
const CREATES = Number(values.creates);
const CLIENTS = 16;
const here = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const preload = pathToFileURL(join(import.meta.dirname, '../lib/alloc-count-preload.js')).href;

interface Round {
  kbPerCreate: number;
  cpuMsPerCreate: number;
  perSecond: number;
}

async function allocated(
  pid: number,
  file: string,
  after: number,
): Promise<{ seq: number; allocated: number }> {
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    if (existsSync(file)) {
      const c = JSON.parse(readFileSync(file, 'utf8')) as { seq: number; allocated: number };
      if (c.seq > after) return c;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function measure(root: string): Promise<Round> {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-create-alloc-'));
  const file = join(dir, 'alloc.json');
  const server = await startKubeloop({
    root,
    kubeconfigPath: join(dir, 'kubeconfig'),
    args: ['--no-controllers'],
    nodeArgs: [`--import=${preload}`],
    env: { ...process.env, KUBELOOP_BENCH_ALLOC_FILE: file },
  });
  const target = kubeloopTarget(server, CLIENTS);
  try {
    for (const ns of ['warmup', 'bench']) await target.prepare(ns);
    await runCreates(target, 'warmup', 1_000, CLIENTS);
    await target.deleteAll('warmup');
    const a0 = await allocated(server.pid, file, 0);
    const cpu0 = cpuMs(server.pid);
    const r = await runCreates(target, 'bench', CREATES, CLIENTS);
    const cpu1 = cpuMs(server.pid);
    const a1 = await allocated(server.pid, file, a0.seq);
    return {
      kbPerCreate: (a1.allocated - a0.allocated) / CREATES / 1024,
      cpuMsPerCreate: (cpu1 - cpu0) / CREATES,
      perSecond: r.perSecond,
    };
  } finally {
    await target.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sides = [
  { name: 'baseline', root: resolve(values.baseline) },
  { name: 'current', root: here },
];
const rounds = new Map<string, Round[]>(sides.map((s) => [s.name, []]));
for (let i = 0; i < RUNS; i++) {
  for (const side of i % 2 === 0 ? sides : [...sides].reverse())
    rounds.get(side.name)!.push(await measure(side.root));
  console.log(`round ${i + 1}/${RUNS} done`);
}
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(
  `\nmedians of ${RUNS} rounds (ABBA), ${CREATES} creates from ${CLIENTS} clients (load average ${load})`,
);
console.log('figure                     baseline     current   ratio');
const figures: [string, (r: Round) => number, string][] = [
  ['allocation per create', (r) => r.kbPerCreate, 'KB'],
  ['server CPU per create', (r) => r.cpuMsPerCreate, 'ms'],
  ['creates/s', (r) => r.perSecond, '/s'],
];
for (const [name, f, unit] of figures) {
  const b = median(rounds.get('baseline')!.map(f));
  const c = median(rounds.get('current')!.map(f));
  console.log(
    `${name.padEnd(24)} ${b.toFixed(unit === '/s' ? 0 : 3).padStart(9)} ${unit}  ${c.toFixed(unit === '/s' ? 0 : 3).padStart(9)} ${unit}  ${(c / b).toFixed(3)}x`,
  );
}
console.log(
  `rerun: npm run build && node bench/dist/benchmarks/create-alloc.js --baseline=${values.baseline} --runs=${RUNS} --creates=${CREATES}`,
);
