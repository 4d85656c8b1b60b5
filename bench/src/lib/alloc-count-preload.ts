/**
 * Loaded into a server under test with `node --import=<this file>` (see `create-alloc.ts`): on
 * SIGUSR2, writes as JSON to `$KUBELOOP_BENCH_ALLOC_FILE` how many bytes V8 allocated since the
 * process started, counted from V8's GC profiler as the heap's growth between collections (plus
 * its growth since the last one). Read through no entry point of the server, so that two builds
 * are measured alike.
 */
import { renameSync, writeFileSync } from 'node:fs';
import v8 from 'node:v8';

const file = process.env.KUBELOOP_BENCH_ALLOC_FILE;
if (file) {
  let allocated = 0;
  let lastAfter = v8.getHeapStatistics().used_heap_size;
  const profiler = new v8.GCProfiler();
  profiler.start();
  let seq = 0;
  process.on('SIGUSR2', () => {
    const { statistics } = profiler.stop();
    for (const s of statistics) {
      allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - lastAfter);
      lastAfter = s.afterGC.heapStatistics.usedHeapSize;
    }
    profiler.start();
    const total = allocated + Math.max(0, v8.getHeapStatistics().used_heap_size - lastAfter);
    // Written aside and renamed, so that the bench never reads half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify({ seq: ++seq, allocated: total }));
    renameSync(`${file}.tmp`, file);
  });
}
