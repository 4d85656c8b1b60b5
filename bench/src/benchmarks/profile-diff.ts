/**
 * Self time of V8 CPU profiles (`.cpuprofile`, e.g. from `compare.js --cpu-prof=DIR`) summed per
 * function or per file, baseline against current, sorted by the change:
 *
 *   node bench/dist/benchmarks/profile-diff.js --base=DIR/0-creates-base-memory.cpuprofile,… \
 *     --cur=DIR/0-creates-cur-memory.cpuprofile,… [--by=file|function] [--top=40]
 *
 * Each side's profiles are summed; times are milliseconds of busy samples (idle left out), and
 * shares are of each side's busy total: on a loaded machine a profile also counts the time the
 * process waited for a CPU where it was preempted, so compare shares more than absolute times.
 * Paths of either checkout are shortened to the package path, so that the same file matches.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `packages/server/dist/http/body.js` from a file URL of any checkout; node's own modules as they are. */
function shortUrl(url: string): string {
  const i = url.search(/\/(packages|bench|examples)\//);
  return i >= 0 ? url.slice(i + 1) : url;
}

/** Busy self time (µs) per key of one side's profiles. */
function selfTimes(files: readonly string[], by: 'file' | 'function'): Map<string, number> {
  const out = new Map<string, number>();
  for (const file of files) {
    const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    const nodes = new Map(p.nodes.map((n) => [n.id, n]));
    for (let i = 0; i < p.samples.length; i++) {
      const node = nodes.get(p.samples[i]!)!;
      const { functionName, url } = node.callFrame;
      if (functionName === '(idle)') continue;
      // A sample stands for the time until the next one.
      const us = p.timeDeltas[i + 1] ?? 0;
      const where = shortUrl(url);
      const key = by === 'file' ? where || functionName : `${functionName || '(anonymous)'} ${where}`;
      out.set(key, (out.get(key) ?? 0) + us);
    }
  }
  return out;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      base: { type: 'string' },
      cur: { type: 'string' },
      by: { type: 'string', default: 'function' },
      top: { type: 'string', default: '40' },
    },
  });
  if (!values.base || !values.cur || (values.by !== 'file' && values.by !== 'function')) {
    console.error(
      'usage: node bench/dist/benchmarks/profile-diff.js --base=A.cpuprofile[,…] --cur=B.cpuprofile[,…] [--by=file|function] [--top=N]',
    );
    process.exit(2);
  }
  const by = values.by;
  const base = selfTimes(values.base.split(','), by);
  const cur = selfTimes(values.cur.split(','), by);
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const tb = total(base);
  const tc = total(cur);
  const rows = [...new Set([...base.keys(), ...cur.keys()])].map((k) => {
    const b = base.get(k) ?? 0;
    const c = cur.get(k) ?? 0;
    return { k, b, c, shareDiff: c / tc - b / tb };
  });
  rows.sort((x, y) => Math.abs(y.shareDiff) - Math.abs(x.shareDiff));
  const ms = (us: number) => (us / 1000).toFixed(1).padStart(9);
  const pct = (v: number) => `${(v * 100).toFixed(2)}%`.padStart(8);
  console.log(`busy: baseline ${ms(tb)} ms, current ${ms(tc)} ms (${(tc / tb).toFixed(3)}x)\n`);
  console.log(
    `${'baseline ms'.padStart(11)} ${'share'.padStart(8)} ${'current ms'.padStart(11)} ${'share'.padStart(8)} ${'Δshare'.padStart(8)}  ${by}`,
  );
  for (const r of rows.slice(0, Number(values.top)))
    console.log(`${ms(r.b)}   ${pct(r.b / tb)} ${ms(r.c)}   ${pct(r.c / tc)} ${pct(r.shareDiff)}  ${r.k}`);
}

main();
