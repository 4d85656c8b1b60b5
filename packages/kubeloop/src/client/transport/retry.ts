/**
 * When and how long to wait before sending a request again: 429 always (the server did not
 * process it) after its `Retry-After`; 5xx answers and broken connections only for reads,
 * which are safe to repeat; refused connections always (the request never left). Otherwise
 * capped exponential backoff with full jitter.
 */
import { ApiError } from '../../api/status.js';
import { NetworkError } from './errors.js';

/** Retry settings of a client; `retry: false` turns retries off. */
export interface RetryOptions {
  /** Retries after the first attempt (default 5). */
  maxRetries?: number;
  /** First backoff step (default 100 ms); doubles with each retry. */
  baseDelayMs?: number;
  /** Cap of one wait, including a server's `Retry-After` (default 30 s). */
  maxDelayMs?: number;
  /** Called before each wait; for logs and tests. */
  onRetry?: (info: RetryInfo) => void;
}

/** What {@link RetryOptions.onRetry} is told. */
export interface RetryInfo {
  method: string;
  url: string;
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  error: ApiError | NetworkError;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a failed attempt may be sent again. */
export function isRetryable(method: string, error: unknown): boolean {
  if (error instanceof ApiError) {
    if (error.code === 429) return true;
    return error.code >= 500 && IDEMPOTENT.has(method);
  }
  if (error instanceof NetworkError) {
    if (error.kind === 'connect') return true;
    return error.kind === 'reset' && IDEMPOTENT.has(method);
  }
  return false;
}

/** Milliseconds to wait before retry number `attempt` (1-based). */
export function retryDelayMs(
  attempt: number,
  error: unknown,
  opts: { baseDelayMs: number; maxDelayMs: number },
  random: () => number = Math.random,
): number {
  if (error instanceof ApiError && error.retryAfter !== undefined) {
    return Math.min(error.retryAfter * 1000, opts.maxDelayMs);
  }
  const ceiling = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 && !signal?.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
