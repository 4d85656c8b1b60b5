/**
 * What a server's start costs before it is ready, in counts that a busy machine does not blur,
 * on two builds side by side: the modules it loads (and their source bytes), and the CPU time
 * of its main thread until the ready line (medians of alternating runs).
 *
 *   node bench/dist/benchmarks/startup-modules.js --baseline=/path/to/other/checkout [--runs=6]
 *
 * Both servers run as `kubeloop server --no-controllers`: the built-in controllers load only
 * after ready, so nothing of theirs races the count; what is counted is the server's own start.
 * Modules are listed by a module hook (`module.register`) in runs of their own, since the hook
 * costs the main thread time of its own.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { spawnUntil, terminate } from '../lib/process.js';
import { median } from '../lib/stats.js';

/** The hook: appends the URL of every module loaded to the file named by `$KUBELOOP_MODULE_LOG`. */
const HOOK = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  const r = await next(url, context);
  appendFileSync(process.env.KUBELOOP_MODULE_LOG, url + '\\n');
  return r;
}
`;
const REGISTER = `import { register } from 'node:module';
register('./hook.mjs', import.meta.url);
`;

/** CPU time (user + system) of the main thread of process `pid` so far, in ms. */
function mainThreadCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Starts `root`'s server until ready; returns its main thread's CPU then, and stops it. */
async function start(root: string, dir: string, hook?: string): Promise<number> {
  const args = [
    ...(hook ? ['--import', hook] : []),
    join(root, 'packages/cli/dist/bin.js'),
    'server',
    '--port',
    '0',
    '--no-controllers',
    '--kubeconfig',
    join(dir, 'kubeconfig'),
  ];
  const env = { ...process.env, KUBELOOP_MODULE_LOG: join(dir, 'modules.txt') };
  const s = await spawnUntil(process.execPath, args, /ready at https:\/\//, 60_000, env);
  const cpu = mainThreadCpuMs(s.pid);
  await terminate(s.child);
  return cpu;
}

/** The modules `root`'s server loads before ready (files only), with their source bytes. */
async function modules(root: string, dir: string): Promise<{ count: number; bytes: number }> {
  const log = join(dir, 'modules.txt');
  writeFileSync(log, '');
  await start(root, dir, join(dir, 'register.mjs'));
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter((u) => u.startsWith('file:'))
    .map((u) => fileURLToPath(u))
    .filter((f) => !f.startsWith(dir));
  return { count: files.length, bytes: files.reduce((n, f) => n + statSync(f).size, 0) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { baseline: { type: 'string' }, runs: { type: 'string' } } });
  if (!values.baseline) throw new Error('--baseline=<checkout of the other build> is required');
  const runs = Number(values.runs ?? 6);
  const sides = {
    base: resolve(values.baseline),
    cur: resolve(fileURLToPath(new URL('../../..', import.meta.url))),
  };
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-startup-modules-'));
  try {
    writeFileSync(join(dir, 'hook.mjs'), HOOK);
    writeFileSync(join(dir, 'register.mjs'), REGISTER);
    const loaded = { base: await modules(sides.base, dir), cur: await modules(sides.cur, dir) };
    const cpu: Record<'base' | 'cur', number[]> = { base: [], cur: [] };
    for (let i = 0; i < runs; i++) {
      // ABBA: the machine's drift falls on both sides alike.
      const order: ('base' | 'cur')[] = i % 2 === 0 ? ['base', 'cur'] : ['cur', 'base'];
      for (const side of order) cpu[side].push(await start(sides[side], dir));
    }
    const row = (name: string, b: number, c: number, unit: string) =>
      `${name.padEnd(44)} ${`${b.toFixed(0)} ${unit}`.padStart(12)} ${`${c.toFixed(0)} ${unit}`.padStart(12)}  ${(c / b).toFixed(3)}x`;
    console.log(`baseline: ${sides.base}\ncurrent:  ${sides.cur}\n`);
    console.log(`${'figure'.padEnd(44)} ${'baseline'.padStart(12)} ${'current'.padStart(12)}  ratio`);
    console.log(row('modules loaded before ready', loaded.base.count, loaded.cur.count, ''));
    console.log(row('their source, KB', loaded.base.bytes / 1024, loaded.cur.bytes / 1024, 'KB'));
    console.log(
      row(`main thread CPU until ready (median of ${runs})`, median(cpu.base), median(cpu.cur), 'ms'),
    );
    console.log(
      `\nrerun: npm run build && node bench/dist/benchmarks/startup-modules.js --baseline=${values.baseline} --runs=${runs}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
