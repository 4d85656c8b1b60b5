import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { idle, rssBytes } from './proc.js';
import { median } from './stats.js';

/** The environment variable naming the file where `gc-preload.js` writes its readings. */
const FILE_ENV = 'KUBELOOP_BENCH_GC_FILE';

/**
 * The `node` flags and environment that make a server process collect its garbage on request
 * (see `gc-preload.ts`): pass them as `nodeArgs` and `env` of `startKubeloop`.
 */
export function gcHooks(file: string): { nodeArgs: string[]; env: NodeJS.ProcessEnv } {
  const preload = pathToFileURL(join(import.meta.dirname, 'gc-preload.js')).href;
  return { nodeArgs: ['--expose-gc', `--import=${preload}`], env: { ...process.env, [FILE_ENV]: file } };
}

/** A process's memory right after a full GC. */
export interface MemoryAfterGc {
  /** Median of the RSS samples taken after the GC. */
  rssMb: number;
  rssSamplesMb: number[];
  /** Anonymous, file-backed and shared memory in the RSS at the last sample (`/proc/<pid>/status`). */
  rssAnonMb: number;
  rssFileMb: number;
  rssShmemMb: number;
  /** V8 heap in use after the GC (the process's own `process.memoryUsage().heapUsed`). */
  heapUsedMb: number;
  /** V8 heap committed after the GC: the heap in use plus what V8 keeps for allocation (its young generation above all). */
  heapTotalMb: number;
  /** Memory of C++ objects bound to JavaScript ones, Buffers included. */
  externalMb: number;
}

interface Reading {
  seq: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

function read(file: string): Reading | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Reading) : undefined;
}

/**
 * Asks process `pid` (started with {@link gcHooks} on `file`) for a full GC, waits for its reading,
 * then samples its RSS `samples` times `intervalMs` apart and takes the median: the RSS a moment
 * after a GC still moves as the allocator hands pages back.
 */
export async function memoryAfterGc(
  pid: number,
  file: string,
  samples = 5,
  intervalMs = 200,
): Promise<MemoryAfterGc> {
  const before = read(file)?.seq ?? 0;
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 30_000;
  let reading = read(file);
  while (!reading || reading.seq <= before) {
    if (Date.now() > deadline) throw new Error(`process ${pid} did not report its memory after a GC`);
    await idle(20);
    reading = read(file);
  }
  const rssSamplesMb: number[] = [];
  for (let i = 0; i < samples; i++) {
    if (i > 0) await idle(intervalMs);
    rssSamplesMb.push(rssBytes(pid) / 2 ** 20);
  }
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
  return {
    rssMb: median(rssSamplesMb),
    rssSamplesMb,
    rssAnonMb: kb('RssAnon'),
    rssFileMb: kb('RssFile'),
    rssShmemMb: kb('RssShmem'),
    heapUsedMb: reading.heapUsed / 2 ** 20,
    heapTotalMb: reading.heapTotal / 2 ** 20,
    externalMb: reading.external / 2 ** 20,
  };
}
