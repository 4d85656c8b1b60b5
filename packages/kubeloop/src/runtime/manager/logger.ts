/**
 * The manager's default logger.
 */
import { destination, type Logger, pino } from 'pino';

/**
 * pino at `info` (or `LOG_LEVEL`), writing each line to stdout synchronously, as klog and
 * controller-runtime's zap write theirs.
 *
 * Why synchronous: pino's default stream hands each write to libuv's thread pool, and a
 * controller logs a line or two per reconcile, so nearly every line is a write of its own — a
 * request to the pool and its completion cost the event loop about twice what a plain `write(2)`
 * does (the sample operator's 2,000 lines for 1,000 Foos: ~100 ms of CPU less in the operators
 * bench). And a line written before a crash is on its way, not in a buffer.
 *
 * When something replaced `process.stdout.write` (a test runner capturing output), lines go
 * through it, as pino's default does.
 */
export function defaultLogger(): Logger {
  const level = process.env.LOG_LEVEL ?? 'info';
  const stdout = process.stdout;
  if (stdout.write !== Object.getPrototypeOf(stdout).write) return pino({ level });
  return pino({ level }, destination({ dest: stdout.fd ?? 1, sync: true }));
}
