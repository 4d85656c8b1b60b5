import { readFileSync } from 'node:fs';

/** Resident set size of process `pid` in bytes (VmRSS of `/proc/<pid>/status`). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** Peak resident set size of process `pid` in bytes (VmHWM of `/proc/<pid>/status`). */
export function peakRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** CPU time (user + system) consumed so far by process `pid`, in milliseconds. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / clockTicksPerSecond;
}

// sysconf(_SC_CLK_TCK) is 100 on every Linux that Node supports.
const clockTicksPerSecond = 100;

/** Resolves after `ms` milliseconds: used only to let a process go idle before reading its RSS. */
export function idle(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A reading of the machine-wide CPU counters of `/proc/stat`, in milliseconds summed over all CPUs. */
export interface MachineCpu {
  busyMs: number;
  totalMs: number;
}

/** Reads the machine-wide CPU counters (to tell how busy other processes kept the machine). */
export function machineCpu(): MachineCpu {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, idleTicks, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  const total = busy + idleTicks! + iowait!;
  return { busyMs: (busy * 1000) / clockTicksPerSecond, totalMs: (total * 1000) / clockTicksPerSecond };
}

/**
 * Measures how much of the machine's CPU capacity processes other than ours used over a period:
 * the bench shares its machine, and a busy neighbour skews every figure.
 */
export class LoadMeter {
  private readonly machine0 = machineCpu();
  private readonly bench0 = process.cpuUsage();
  private childrenMs = 0;

  /** Counts `ms` of CPU used by one of our child processes during the period (read it before it exits). */
  addChild(ms: number): void {
    this.childrenMs += ms;
  }

  /** Percentage of the machine's capacity (all CPUs) used by other processes since construction. */
  otherPercent(): number {
    const m = machineCpu();
    const bench = process.cpuUsage(this.bench0);
    const ours = this.childrenMs + (bench.user + bench.system) / 1000;
    const total = m.totalMs - this.machine0.totalMs;
    return total > 0 ? Math.max(0, (100 * (m.busyMs - this.machine0.busyMs - ours)) / total) : 0;
  }
}
