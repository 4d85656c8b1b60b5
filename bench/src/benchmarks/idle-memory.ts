/**
 * Where an idle server's settled RSS goes, on two builds side by side: the resident pages of
 * each kind of mapping of `/proc/<pid>/smaps`, read after the server has idled as long as
 * compare.ts's "settled" figure waits (medians of alternating runs).
 *
 *   node bench/dist/benchmarks/idle-memory.js --baseline=/path/to/other/checkout [--runs=4] [--no-controllers]
 *
 * The kinds, told apart without instrumenting the server (its own memory stays what it is):
 * - V8 heap: anonymous read-write mappings of exactly 256 KB, V8's page size (old and young
 *   generations, large objects);
 * - V8 code: anonymous read-write-execute mappings (compiled code);
 * - malloc: `[heap]` and the other anonymous mappings (malloc arenas, thread stacks, buffers);
 * - node binary, code and read-only data: pages of the node executable touched so far (the
 *   read-only data holds the sources and code caches of node's built-in modules and ICU's data:
 *   each built-in module loaded adds to it);
 * - other files: shared libraries.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { idle } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';

/** How long a server idles before it is read: as compare.ts's settled RSS. */
const SETTLE_MS = 25_000;

const KINDS = [
  'V8 heap',
  'V8 code',
  'malloc and other anonymous',
  'node binary: code',
  'node binary: read-only data',
  'other files',
] as const;
type Kind = (typeof KINDS)[number];

/** Resident KB of process `pid` by kind of mapping, and in all. */
function residentByKind(pid: number): Record<Kind | 'total', number> {
  const node = realpathSync(process.execPath);
  const out = Object.fromEntries([...KINDS, 'total'].map((k) => [k, 0])) as Record<Kind | 'total', number>;
  let perms = '';
  let path = '';
  let sizeKb = 0;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      perms = head[1]!;
      path = head[2]!;
      continue;
    }
    const size = /^Size:\s+(\d+) kB/.exec(line);
    if (size) sizeKb = Number(size[1]);
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const kb = Number(rss[1]);
    let kind: Kind;
    if (path === node) kind = perms.includes('x') ? 'node binary: code' : 'node binary: read-only data';
    else if (path !== '' && !path.startsWith('[')) kind = 'other files';
    else if (path === '' && perms.startsWith('rwx')) kind = 'V8 code';
    else if (path === '' && perms.startsWith('rw') && sizeKb === 256) kind = 'V8 heap';
    else kind = 'malloc and other anonymous';
    out[kind] += kb;
    out.total += kb;
  }
  return out;
}

/** Starts `root`'s server, lets it idle until settled, reads its mappings, and stops it. */
async function measure(root: string, dir: string, args: string[]): Promise<Record<Kind | 'total', number>> {
  const server = await startKubeloop({ root, kubeconfigPath: join(dir, 'kubeconfig'), args });
  try {
    await idle(SETTLE_MS);
    return residentByKind(server.pid);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      baseline: { type: 'string' },
      runs: { type: 'string' },
      'no-controllers': { type: 'boolean' },
    },
  });
  if (!values.baseline) throw new Error('--baseline=<checkout of the other build> is required');
  const runs = Number(values.runs ?? 4);
  const args = values['no-controllers'] ? ['--no-controllers'] : [];
  const sides = {
    base: resolve(values.baseline),
    cur: resolve(fileURLToPath(new URL('../../..', import.meta.url))),
  };
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-idle-memory-'));
  const read: Record<'base' | 'cur', Record<Kind | 'total', number>[]> = { base: [], cur: [] };
  try {
    for (let i = 0; i < runs; i++) {
      // ABBA: the machine's drift falls on both sides alike.
      const order: ('base' | 'cur')[] = i % 2 === 0 ? ['base', 'cur'] : ['cur', 'base'];
      for (const side of order) read[side].push(await measure(sides[side], dir, args));
      const last = (s: 'base' | 'cur') => (read[s].at(-1)!.total / 1024).toFixed(1);
      console.log(
        `  round ${i + 1}/${runs}: settled RSS baseline ${last('base')} MB, current ${last('cur')} MB`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const mb = (s: 'base' | 'cur', k: Kind | 'total') => median(read[s].map((r) => r[k])) / 1024;
  console.log(`\nbaseline: ${sides.base}\ncurrent:  ${sides.cur}\n`);
  console.log(
    `${'resident, MB (median)'.padEnd(32)} ${'baseline'.padStart(9)} ${'current'.padStart(9)} ${'diff'.padStart(7)}`,
  );
  for (const k of [...KINDS, 'total'] as const) {
    const b = mb('base', k);
    const c = mb('cur', k);
    const diff = `${c - b >= 0 ? '+' : '-'}${Math.abs(c - b).toFixed(1)}`;
    console.log(
      `${k.padEnd(32)} ${b.toFixed(1).padStart(9)} ${c.toFixed(1).padStart(9)} ${diff.padStart(7)}`,
    );
  }
  console.log(
    `\nrerun: npm run build && node bench/dist/benchmarks/idle-memory.js --baseline=${values.baseline} --runs=${runs}${values['no-controllers'] ? ' --no-controllers' : ''}`,
  );
}

await main();
