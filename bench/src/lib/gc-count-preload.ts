/**
 * Loaded into a server under test with `node --import=<this file>` (see `create-gc.ts`): counts
 * V8's garbage collections (scavenges and full collections, with their pause times) and, on
 * SIGUSR2, writes the counts and the young generation's size as JSON to `$KUBELOOP_BENCH_GC_COUNT_FILE`.
 * Read through no entry point of the server, so that two builds are measured alike.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

const file = process.env.KUBELOOP_BENCH_GC_COUNT_FILE;
if (file) {
  const counts = { scavenges: 0, scavengeMs: 0, fullGcs: 0, fullGcMs: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        counts.scavenges++;
        counts.scavengeMs += e.duration;
      } else {
        counts.fullGcs++;
        counts.fullGcMs += e.duration;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  let seq = 0;
  process.on('SIGUSR2', () => {
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    // Written aside and renamed, so that the bench never reads half a file.
    writeFileSync(
      `${file}.tmp`,
      JSON.stringify({ seq: ++seq, ...counts, youngBytes: young?.space_size ?? 0 }),
    );
    renameSync(`${file}.tmp`, file);
  });
}
