/**
 * The reviews of a large list page, a few at a time. Sent all at once, every review's body is
 * built and written before this server turns back to its event loop, so the webhook gets its
 * first objects only after all of them were encoded (~50 ms for 10,000 objects), and its answers
 * then queue up behind one another. With a few in flight, the webhook converts one review while
 * the next waits on its connection, and this server checks and encodes an answer while the
 * webhook works: the two overlap from the first batch on.
 */

/**
 * Reviews of one list page in flight at once: the one the webhook converts and two waiting, so
 * that it has the next at hand while this server still checks and encodes the answer before.
 */
export const REVIEWS_IN_FLIGHT = 3;

/**
 * Runs `run(0)` … `run(count - 1)`, at most `inFlight` at once, each started in order as an
 * earlier one settles. Resolves to the results in order; rejects with the reason of the first
 * batch (in order) that failed. Once one failed, no further batch starts: every batch before it
 * was started already, so the error reported is the one all batches sent at once would report.
 */
export function inOrderBatches<T>(
  count: number,
  run: (index: number) => Promise<T>,
  inFlight = REVIEWS_IN_FLIGHT,
): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const results: T[] = new Array(count);
    const failures = new Map<number, unknown>();
    let started = 0;
    let settled = 0;
    const startNext = () => {
      if (started >= count || failures.size > 0) return;
      const index = started++;
      run(index).then(
        (value) => {
          results[index] = value;
          done();
        },
        (err: unknown) => {
          failures.set(index, err);
          done();
        },
      );
    };
    const done = () => {
      settled++;
      startNext();
      if (settled < started) return;
      if (failures.size === 0) resolve(results);
      else reject(failures.get(Math.min(...failures.keys())));
    };
    if (count === 0) {
      resolve(results);
      return;
    }
    for (let n = 0; n < Math.min(inFlight, count); n++) startNext();
  });
}
