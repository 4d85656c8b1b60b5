/**
 * Loaded into a server under test with `node --expose-gc --import=<this file>` (see `gcHooks` in
 * `memory.ts`): on SIGUSR2 it runs full garbage collections and then writes
 * `process.memoryUsage()` as JSON to `$KUBELOOP_BENCH_GC_FILE`. The bench reads a server's memory
 * with no garbage in it this way, through no entry point of the server itself, so that two builds of
 * the server (a baseline and the current one) are measured alike whatever their internals.
 */
import { renameSync, writeFileSync } from 'node:fs';

const file = process.env.KUBELOOP_BENCH_GC_FILE;
const gc = (globalThis as { gc?: () => void }).gc;
if (file && gc) {
  let seq = 0;
  process.on('SIGUSR2', () => {
    // Twice: objects kept alive only by finalizers or weak references of the first pass go in the second.
    // (V8's `gc({ flavor: 'last-resort' })` was tried to also return V8's free pages: on Node 20 it
    // left more in use, not less.) The RSS after this still varies by ±5 % between identical builds
    // (V8 keeps free heap pages committed more or less by chance); the heap in use does not.
    gc();
    gc();
    // Written aside and renamed, so that the bench never reads half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify({ seq: ++seq, ...process.memoryUsage() }));
    renameSync(`${file}.tmp`, file);
  });
}
