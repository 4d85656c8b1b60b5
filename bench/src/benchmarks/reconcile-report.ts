import { fmt, type Row } from '../lib/report.js';
import { median } from '../lib/stats.js';
import { REFERENCE, TARGETS } from '../reference.js';
import type { Burst, ReconcileRun } from './reconcile-types.js';

export function reconcileRows(
  off: readonly ReconcileRun[],
  on: readonly ReconcileRun[],
  nodes: number,
): Row[] {
  const rows: Row[] = [];
  const first = off[0] ?? on[0];
  if (!first) return rows;
  const what = `${first.foos.toLocaleString('en-US')} Foos, ${first.clients} clients, ${first.workers} workers`;
  const phases = ['warm', 'cold'] as const;
  const variants = [
    ...phases.map((phase) => ({ runs: off, phase, headline: true, name: `controllers off, ${phase}` })),
    ...phases.map((phase) => ({
      runs: on,
      phase,
      headline: false,
      name: `controllers on, ${nodes} nodes, ${phase}`,
    })),
  ].filter((v) => v.runs.length > 0);
  const med = (runs: readonly ReconcileRun[], phase: 'warm' | 'cold', f: (b: Burst) => number) =>
    median(runs.map((r) => f(r[phase])));
  const seconds = (ms: number) => fmt(ms / 1000, 's');
  for (const { runs, phase, headline, name } of variants) {
    rows.push({
      metric: `reconcile ${what}: all with status + Deployment`,
      variant: name,
      unit: 's',
      better: 'lower',
      ours: med(runs, phase, (b) => b.convergedMs / 1000),
      ...(headline && {
        reference: REFERENCE.reconcile1kFoosSeconds,
        ...(first.foos === 1000 && first.workers === 2 && { target: TARGETS.reconcile1kFoosSeconds }),
      }),
      note:
        `${runs.length === 1 ? '1 run' : `median of ${runs.length} runs: ${runs.map((r) => (r[phase].convergedMs / 1000).toFixed(2)).join(', ')} s`}; creates answered by ${seconds(
          med(runs, phase, (b) => b.createsMs),
        )}; other processes used ${med(runs, phase, (b) => b.otherCpuPercent).toFixed(0)}% of the machine` +
        (runs.some((r) => r[phase].availableMs !== undefined)
          ? `; every Foo at availableReplicas = ${first.replicas} after ${seconds(med(runs, phase, (b) => b.availableMs ?? Number.NaN))}`
          : ''),
    });
  }
  for (const { runs, phase, name } of variants) {
    rows.push({
      metric: 'reconciles/s, until convergence',
      variant: name,
      unit: '/s',
      better: 'higher',
      ours: med(runs, phase, (b) => b.reconcilesPerSecond),
      note: `${med(runs, phase, (b) => b.reconciles)} reconciles (controller_runtime_reconcile_total), ${med(runs, phase, (b) => b.reconcileErrors)} errors`,
    });
  }
  for (const [p, key] of [
    ['p50', 'p50Ms'],
    ['p99', 'p99Ms'],
  ] as const) {
    for (const { runs, phase, name } of variants) {
      rows.push({
        metric: `create→status latency ${p}`,
        variant: name,
        unit: 'ms',
        better: 'lower',
        ours: med(runs, phase, (b) => b.latency[key]),
      });
    }
  }
  for (const { runs, phase, name } of variants) {
    const cpu = (f: (b: Burst) => number) => med(runs, phase, f) / first.foos;
    const operator = cpu((b) => b.operator.cpuMs);
    const server = cpu((b) => b.server.cpuMs);
    const bench = cpu((b) => b.benchCpuMs);
    rows.push({
      metric: 'CPU per Foo, server + operator + bench clients',
      variant: name,
      unit: 'ms',
      better: 'lower',
      ours: operator + server + bench,
      note: `operator ${operator.toFixed(2)} ms, server ${server.toFixed(2)} ms, bench ${bench.toFixed(2)} ms: on two idle cores the burst cannot converge in less than ${seconds(((operator + server + bench) * first.foos) / 2)}`,
    });
  }
  for (const { runs, phase, name } of variants) {
    const holds = phase === 'cold' ? first.foos : 2 * first.foos;
    rows.push({
      metric: 'operator RSS after convergence',
      variant: name,
      unit: 'MB',
      better: 'lower',
      ours: med(runs, phase, (b) => b.operator.rssMb),
      note: `caching ${holds.toLocaleString('en-US')} Foos and Deployments; peak ${fmt(
        med(runs, phase, (b) => b.operator.peakRssMb),
        'MB',
      )}; ${fmt(median(runs.map((r) => r.operatorIdleRssMb)), 'MB')} once leading, before any Foo`,
    });
  }
  return rows;
}
