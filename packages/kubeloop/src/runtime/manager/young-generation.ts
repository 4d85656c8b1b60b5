/**
 * A cap on V8's young generation for an operator's process. V8 doubles the young generation
 * (up to 2 × 16 MB of semi-spaces in Node 20) once enough objects survive its scavenges, which
 * building an informer cache always does; it rarely gives the memory back. In the sample
 * operator (1,000 Foos) that was 32 MB of a 115 MB RSS, mostly empty; capped at 4 MB, the RSS
 * was 86 MB for the same CPU (at 2 MB the scavenges cost ~30 % more CPU). The size can only
 * be set on node's command line (`--max-semi-space-size`), but the growth factor is read at
 * each growth: once the young generation has reached the cap, growth is turned off.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

const youngGenerationBytes = () =>
  v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

/**
 * Stops the young generation from growing past `limitMb` (it may reach the first size at or
 * above it). Returns a function that stops watching (the cap, once set, stays).
 *
 * @example
 * ```ts
 * const stop = capYoungGeneration(4);
 * ```
 */
export function capYoungGeneration(limitMb: number): () => void {
  const limit = limitMb * 2 ** 20;
  let observer: PerformanceObserver | undefined;
  const check = () => {
    if (youngGenerationBytes() < limit) return;
    v8.setFlagsFromString('--semi-space-growth-factor=1');
    observer?.disconnect();
    observer = undefined;
  };
  check();
  if (youngGenerationBytes() >= limit) return () => undefined;
  // Growth only follows a garbage collection: look after each one.
  observer = new PerformanceObserver(check);
  observer.observe({ entryTypes: ['gc'] });
  return () => observer?.disconnect();
}

/** V8's flags given on node's command line or in `NODE_OPTIONS`: those an entry point leaves alone. */
function flagGiven(name: string): boolean {
  const re = new RegExp(`^--${name.replace(/-/g, '[-_]')}(=|$)`);
  const fromEnv = (process.env.NODE_OPTIONS ?? '').split(/\s+/);
  return [...process.execArgv, ...fromEnv].some((a) => re.test(a));
}

/**
 * The memory settings of a process that runs an operator, to be applied by its entry point
 * before the operator's modules load (as `kubeloop init`'s `main.ts` does, then imports
 * `start.js`):
 * - the young generation capped at 4 MB ({@link capYoungGeneration}): loading the modules and
 *   filling the informer caches grow it to 32 MB and V8 does not give it back (~12 MB of RSS;
 *   at 2 MB the scavenges cost ~30 % more CPU);
 * - the old generation collected once it has grown by half (`--heap-growing-percent=50`)
 *   instead of V8's up to 4×: with a small young generation more short-lived objects reach the
 *   old one (sample operator, 1,000 Foos: RSS ~102 → ~90 MB, no CPU difference measurable on
 *   the bench).
 *
 * A setting given on node's command line (`--max-semi-space-size`, `--semi-space-growth-factor`,
 * `--heap-growing-percent`) is left as given.
 *
 * @example
 * ```ts
 * // src/main.ts
 * import { tuneOperatorHeap } from 'kubeloop/young-generation';
 * tuneOperatorHeap();
 * await import('./start.js');
 * ```
 */
export function tuneOperatorHeap(): void {
  if (!flagGiven('max-semi-space-size') && !flagGiven('semi-space-growth-factor')) capYoungGeneration(4);
  if (!flagGiven('heap-growing-percent')) v8.setFlagsFromString('--heap-growing-percent=50');
}
