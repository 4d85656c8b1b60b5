/**
 * V8's young generation, held at its first size while a control plane of this process starts.
 *
 * What a start allocates mostly stays: modules, the bootstrap objects, the built-in controllers'
 * caches. V8 takes the survivors of its scavenges as a sign to double the young generation, and
 * did so four times during a start (2 → 32 MB, ~10 MB of RSS); it gives the space back only when
 * its memory reducer finds the process idle, 10–25 s later, or never on a busy machine. Held,
 * the survivors move to the old generation sooner, which they belong to anyway, for the same CPU.
 * Growth is allowed again once the server has settled, so that a request load grows the young
 * generation as before.
 *
 * It changes a V8 flag of the whole process (growth is read at each growth), so only the CLI's
 * own processes, where the control plane is what runs (`kubeloop server`, `kubeloop dev`), do it;
 * not a test runner or an app embedding the server. A growth factor set on node's command line
 * is left alone.
 */
import v8 from 'node:v8';

/** V8's default growth factor of the young generation (`--semi-space-growth-factor`). */
const DEFAULT_GROWTH_FACTOR = 2;
/** Growth is allowed again after this long, whether or not the server said it settled. */
const MAX_HOLD_MS = 15_000;

/**
 * Holds the young generation at its size until the promise given to the returned function
 * settles (or {@link MAX_HOLD_MS} passed).
 *
 * @example
 * ```ts
 * const release = holdYoungGeneration();
 * const cp = await startControlPlane(options);
 * release(cp.settled);
 * ```
 */
export function holdYoungGeneration(): (settled: Promise<unknown>) => void {
  const userSet = process.execArgv.some((a) => /^--semi[-_]space[-_]growth[-_]factor/.test(a));
  if (userSet) return () => undefined;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearTimeout(timer);
    v8.setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  };
  const timer = setTimeout(release, MAX_HOLD_MS);
  timer.unref();
  return (settled) => {
    settled.then(release, release);
  };
}
