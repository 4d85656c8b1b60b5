import { cpuMs, idle, LoadMeter, rssBytes } from '../lib/proc.js';
import { spawnUntil, terminate } from '../lib/process.js';
import type { ServerProcess } from '../lib/servers.js';
import { median } from '../lib/stats.js';

/** Start-to-ready times and idle RSS of repeated fresh starts. */
export interface StartupResult {
  readyMs: number[];
  rssMb: number[];
  medianReadyMs: number;
  medianRssMb: number;
  /** CPU share of other processes meanwhile (see {@link LoadMeter}). */
  otherCpuPercent: number;
}

/**
 * Starts a server `runs` times (each start fresh, from `start`), records its spawn-to-ready time,
 * lets it idle `idleMs` and reads its RSS, then stops it.
 */
export async function measureStartup(
  start: (run: number) => Promise<ServerProcess>,
  runs: number,
  idleMs: number,
): Promise<StartupResult> {
  const readyMs: number[] = [];
  const rssMb: number[] = [];
  const load = new LoadMeter();
  for (let i = 0; i < runs; i++) {
    const server = await start(i);
    try {
      readyMs.push(server.readyMs);
      await idle(idleMs);
      rssMb.push(rssBytes(server.pid) / 2 ** 20);
      load.addChild(cpuMs(server.pid));
    } finally {
      await server.stop();
    }
  }
  return {
    readyMs,
    rssMb,
    medianReadyMs: median(readyMs),
    medianRssMb: median(rssMb),
    otherCpuPercent: load.otherPercent(),
  };
}

/** A bare `node` process: the floor under any Node server's start time and memory. */
export interface NodeFloor {
  /** Median spawn-to-first-output time. */
  readyMs: number;
  /** Median RSS once it printed. */
  rssMb: number;
}

/** Measures {@link NodeFloor} over `runs` starts of `node -e`. */
export async function nodeFloor(runs: number): Promise<NodeFloor> {
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    // Stays alive after printing so that the line, not the exit, ends the measurement.
    const s = await spawnUntil(
      process.execPath,
      ['-e', "console.log('ready'); setTimeout(() => {}, 10000)"],
      /ready/,
    );
    times.push(s.readyMs);
    rss.push(rssBytes(s.pid) / 2 ** 20);
    await terminate(s.child);
  }
  return { readyMs: median(times), rssMb: median(rss) };
}
