/**
 * The worker loop every built-in controller runs on its queue of keys, as controller-runtime's
 * `processNextWorkItem`: a key is forgotten once synced, retried with the queue's rate limit
 * when its sync fails (unless the controller is stopping), and logged unless the failure is an
 * expected race (a conflict, by default).
 */
import { isConflict } from 'kubeloop/client';
import type { WorkQueue } from 'kubeloop/runtime';
import type { ControllerLog } from './log.js';

/** What a sync asks of the queue: nothing more, a rate-limited retry, or another look later. */
export type SyncResult = undefined | 'retry' | { requeueAfterMs: number };

/** How a worker reports a failed sync. */
export interface WorkerLogging {
  log: ControllerLog;
  /** The log message, e.g. `replicaset sync failed; retrying`. */
  message: string;
  /** Failures not worth a log line (default: conflicts, which the retry resolves). */
  quiet?: (err: unknown) => boolean;
}

/** Processes keys from `queue` with `sync` until the queue shuts down. */
export async function runWorker(
  queue: WorkQueue<string>,
  signal: AbortSignal,
  sync: (key: string) => Promise<SyncResult> | Promise<void>,
  logging: WorkerLogging,
): Promise<void> {
  const quiet = logging.quiet ?? isConflict;
  for (;;) {
    const key = await queue.get();
    if (key === undefined) return;
    try {
      const result = await sync(key);
      if (result === 'retry') queue.addRateLimited(key);
      else {
        queue.forget(key);
        if (result) queue.addAfter(key, result.requeueAfterMs);
      }
    } catch (err) {
      if (!signal.aborted) {
        if (!quiet(err)) logging.log('warn', logging.message, { key, error: String(err) });
        queue.addRateLimited(key);
      }
    } finally {
      queue.done(key);
    }
  }
}
