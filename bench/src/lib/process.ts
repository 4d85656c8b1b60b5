import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

/** A child process started by {@link spawnUntil}, with how long it took to print its ready line. */
export interface Started {
  child: ChildProcess;
  pid: number;
  /** From `spawn()` to the arrival of the ready line. */
  readyMs: number;
  /** The regular expression match of the ready line. */
  match: RegExpExecArray;
  /** Everything the process printed so far (for error messages). */
  output(): string;
}

/**
 * Spawns `command` and waits until a line of its stdout or stderr matches `ready`. Rejects if the
 * process exits first or after `timeoutMs`.
 */
export function spawnUntil(
  command: string,
  args: readonly string[],
  ready: RegExp,
  timeoutMs = 30_000,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Started> {
  return new Promise<Started>((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let log = '';
    let done = false;
    const output = () => log;
    const finish = (err: Error | undefined, match?: RegExpExecArray) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        child.kill('SIGKILL');
        reject(err);
      } else
        resolve({
          child,
          pid: child.pid!,
          readyMs: Number(process.hrtime.bigint() - start) / 1e6,
          match: match!,
          output,
        });
    };
    const timer = setTimeout(
      () => finish(new Error(`${command} not ready after ${timeoutMs} ms:\n${log.slice(-4000)}`)),
      timeoutMs,
    );
    const scan = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      // Bounded: a chatty process (etcd logs every compaction) must not grow the bench's memory.
      log = (log + text).slice(-64 * 1024);
      if (done) return;
      // Complete lines only: a line cut between two chunks could match with a truncated URL.
      for (const line of log.split('\n').slice(0, -1)) {
        const m = ready.exec(line);
        if (m) {
          finish(undefined, m);
          return;
        }
      }
    };
    child.stdout!.on('data', scan);
    child.stderr!.on('data', scan);
    child.on('error', (err) => finish(err));
    child.on('exit', (code, signal) =>
      finish(new Error(`${command} exited (${signal ?? code}) before it was ready:\n${log.slice(-4000)}`)),
    );
  });
}

/** Sends SIGTERM and waits for the exit (SIGKILL after `graceMs`). */
export async function terminate(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A TCP port that was free a moment ago (for servers that cannot pick their own, such as etcd). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const addr = srv.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
