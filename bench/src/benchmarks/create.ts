import { objectName } from '../lib/objects.js';
import { cpuMs, LoadMeter } from '../lib/proc.js';
import { msSince, percentile } from '../lib/stats.js';
import type { Target } from '../lib/targets.js';

/** Throughput and latency of concurrent creates. */
export interface CreateResult {
  total: number;
  clients: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** CPU the server process spent per create (user + system). */
  serverCpuMsPerCreate: number;
  /** CPU the bench process (the clients) spent per create. */
  clientCpuMsPerCreate: number;
  /** Size of one create response. */
  responseBytes: number;
  /**
   * Share of the machine's CPU capacity used by processes other than the server and the bench
   * during the run: anything well above zero means the figures were taken on a busy machine.
   */
  otherCpuPercent: number;
}

/**
 * Creates `total` ConfigMaps named `objectName(first..first+total-1)` in `namespace` from
 * `clients` concurrent clients, each sending its next create as soon as its previous one is answered.
 */
export async function runCreates(
  target: Target,
  namespace: string,
  total: number,
  clients: number,
  first = 0,
): Promise<CreateResult> {
  const latencies = new Array<number>(total);
  let next = 0;
  let responseBytes = 0;
  const serverCpu0 = cpuMs(target.server.pid);
  const clientCpu0 = process.cpuUsage();
  const load = new LoadMeter();
  const start = process.hrtime.bigint();
  const client = async () => {
    while (next < total) {
      const i = next++;
      const res = await target.create(namespace, objectName(first + i));
      latencies[i] = res.totalMs;
      responseBytes = res.body.length;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const seconds = msSince(start) / 1000;
  const clientCpu = process.cpuUsage(clientCpu0);
  const serverCpu = cpuMs(target.server.pid) - serverCpu0;
  load.addChild(serverCpu);
  const clientCpuMs = (clientCpu.user + clientCpu.system) / 1000;
  return {
    total,
    clients,
    seconds,
    perSecond: total / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    serverCpuMsPerCreate: serverCpu / total,
    clientCpuMsPerCreate: clientCpuMs / total,
    responseBytes,
    otherCpuPercent: load.otherPercent(),
  };
}

/** Sums blocks of one kind into one result (rates recomputed from the totals). */
export function combineCreates(parts: CreateResult[], latencies: number[]): CreateResult {
  const total = parts.reduce((n, p) => n + p.total, 0);
  const seconds = parts.reduce((n, p) => n + p.seconds, 0);
  const weighted = (f: (p: CreateResult) => number) => parts.reduce((n, p) => n + f(p) * p.total, 0) / total;
  return {
    total,
    clients: parts[0]?.clients ?? 0,
    seconds,
    perSecond: total / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    serverCpuMsPerCreate: weighted((p) => p.serverCpuMsPerCreate),
    clientCpuMsPerCreate: weighted((p) => p.clientCpuMsPerCreate),
    responseBytes: parts[0]?.responseBytes ?? 0,
    otherCpuPercent: parts.reduce((n, p) => n + p.otherCpuPercent * p.seconds, 0) / seconds,
  };
}
