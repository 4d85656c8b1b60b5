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
