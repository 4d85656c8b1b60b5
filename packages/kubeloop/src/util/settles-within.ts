/**
 * Whether `p` settles within `ms` (it rejects as `p` does); an infinite `ms` waits for `p`. The
 * timer is cleared either way, so a stop that finishes early leaves nothing to hold the process.
 *
 * @example
 * ```ts
 * if (!(await settlesWithin(Promise.all(inFlight), graceMs))) log.warn('gave up waiting');
 * ```
 */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  if (!Number.isFinite(ms)) {
    await p;
    return true;
  }
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([p.then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}
