/**
 * Polls `check` until it returns a truthy value, and returns that value; throws once
 * `timeoutMs` passed, with the last error `check` threw. Tests wait for what they expect this
 * way instead of sleeping a fixed time: a controller's effect takes as long as it takes.
 *
 * @example
 * ```ts
 * const pod = await eventually(async () => {
 *   const p = await client.get(Pod, 'web-0');
 *   return p.status?.phase === 'Running' && p;
 * }, 10_000, 'web-0 to run');
 * ```
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The error a promise rejects with, typed as the test expects it; throws when the promise
 * resolves instead. Reads better than `try`/`catch` when a test checks several fields of the error.
 *
 * @example
 * ```ts
 * const err = await rejection<ApiError>(client.get(ConfigMap, 'missing'));
 * expect([err.code, err.reason]).toEqual([404, 'NotFound']);
 * ```
 */
export async function rejection<E = Error>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (err) {
    return err as E;
  }
  throw new Error('expected the promise to reject');
}
