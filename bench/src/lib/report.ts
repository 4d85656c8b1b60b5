import type { Target } from '../reference.js';

/** One line of the results table: a kubeloop figure beside its alternatives. */
export interface Row {
  /** What is measured, e.g. `creates/s, 16 clients`. */
  metric: string;
  /** `memory`, `durable`, … */
  variant: string;
  unit: 'ms' | 's' | 'MB' | '/s';
  better: 'lower' | 'higher';
  ours: number;
  /** The same measurement against etcd in this run; undefined when etcd was not run. */
  etcd?: number;
  /** A quoted kube-apiserver figure (a range when the source gives one). */
  reference?: number | readonly [number, number];
  target?: Target;
  note?: string;
}

/** A {@link Row} with its ratios and verdict, as written to the JSON results. */
export interface RowResult extends Row {
  oursOverEtcd?: number;
  oursOverReference?: number | [number, number];
  result: 'PASS' | 'MISS' | '-';
}

/** Adds the ratios and the PASS/MISS verdict. */
export function evaluate(row: Row): RowResult {
  const out: RowResult = { ...row, result: '-' };
  if (row.etcd !== undefined && row.etcd > 0) out.oursOverEtcd = row.ours / row.etcd;
  if (typeof row.reference === 'number') out.oursOverReference = row.ours / row.reference;
  else if (row.reference) out.oursOverReference = [row.ours / row.reference[0], row.ours / row.reference[1]];
  if (row.target) {
    const ok = row.target.op === '<' ? row.ours < row.target.value : row.ours >= row.target.value;
    out.result = ok ? 'PASS' : 'MISS';
  }
  return out;
}

/** Formats a figure in its unit with a precision suited to its size. */
export function fmt(v: number, unit: Row['unit']): string {
  if (!Number.isFinite(v)) return 'n/a';
  switch (unit) {
    case 'ms':
      return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ms`;
    case 's':
      return `${v < 1 ? v.toFixed(3) : v.toFixed(2)} s`;
    case 'MB':
      return `${v.toFixed(1)} MB`;
    case '/s':
      return `${Math.round(v).toLocaleString('en-US')}/s`;
  }
}

function fmtRatio(r: number | [number, number] | undefined): string {
  if (r === undefined) return '-';
  const one = (x: number) => (x >= 10 ? x.toFixed(1) : x.toPrecision(2));
  if (Array.isArray(r)) return `${one(r[1])}–${one(r[0])}×`;
  return `${one(r)}×`;
}

function fmtReference(row: Row): string {
  if (row.reference === undefined) return '-';
  if (typeof row.reference === 'number') return fmt(row.reference, row.unit);
  return `${fmt(row.reference[0], row.unit).replace(/ \S+$/, '')}–${fmt(row.reference[1], row.unit)}`;
}

/** The results as an aligned text table. */
export function renderTable(rows: readonly RowResult[], etcdLabel: string): string {
  const header = [
    'metric',
    'better',
    'kubeloop',
    etcdLabel,
    'kube-apiserver (ref)',
    'target',
    'ours/etcd',
    'ours/ref',
    'result',
  ];
  const lines = rows.map((r) => [
    `${r.metric} [${r.variant}]`,
    r.better,
    fmt(r.ours, r.unit),
    r.etcd === undefined ? '-' : fmt(r.etcd, r.unit),
    fmtReference(r),
    r.target ? `${r.target.op} ${fmt(r.target.value, r.unit)}` : '-',
    fmtRatio(r.oursOverEtcd),
    fmtRatio(r.oursOverReference),
    r.result,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const render = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [render(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(render)];
  for (const r of rows) if (r.note) out.push(`  · ${r.metric} [${r.variant}]: ${r.note}`);
  return out.join('\n');
}
