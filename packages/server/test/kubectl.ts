import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ControlPlane, startTestEnv, type TestEnvOptions } from '../src/index.js';

/** The outcome of one kubectl invocation. */
export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A control plane plus a kubectl bound to it (own kubeconfig and discovery cache). */
export interface KubectlEnv {
  cp: ControlPlane;
  kubeconfigPath: string;
  /** Runs kubectl; never throws on a non-zero exit. */
  run(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** Runs kubectl and throws with its stderr unless it exits 0; returns stdout. */
  ok(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<string>;
  /**
   * Starts a long-running kubectl (e.g. `get -w`); `stop()` kills it and returns what it printed.
   * `done` settles when it exits by itself (e.g. `delete --wait` once the object is gone).
   */
  spawn(args: string[]): {
    output: () => string;
    /** What it wrote to stderr so far (with `-v=6`, the requests it made). */
    errorOutput: () => string;
    stop: () => Promise<KubectlResult>;
    done: Promise<KubectlResult>;
  };
  stop(): Promise<void>;
}

export async function startKubectlEnv(options: TestEnvOptions = {}): Promise<KubectlEnv> {
  const cp = await startTestEnv(options);
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-kubectl-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, cp.kubeconfig, { mode: 0o600 });
  const base = ['--kubeconfig', kubeconfigPath, '--cache-dir', join(dir, 'cache')];
  const env = { ...process.env, KUBECONFIG: kubeconfigPath, HOME: dir, KUBECTL_INTERACTIVE_DELETE: 'false' };

  const run = (args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> =>
    new Promise((resolve, reject) => {
      const child = spawn('kubectl', [...base, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
      child.stdin.end(opts.input ?? '');
    });

  return {
    cp,
    kubeconfigPath,
    run,
    async ok(args, opts) {
      const r = await run(args, opts);
      if (r.code !== 0)
        throw new Error(`kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}\n${r.stdout}`);
      return r.stdout;
    },
    spawn(args) {
      const child = spawn('kubectl', [...base, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const closed = new Promise<KubectlResult>((resolve) =>
        child.on('close', (code) => resolve({ code, stdout, stderr })),
      );
      return {
        output: () => stdout,
        errorOutput: () => stderr,
        stop: () => {
          child.kill('SIGTERM');
          return closed;
        },
        done: closed,
      };
    },
    async stop() {
      await cp.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns a truthy value or the deadline passes (no fixed sleeps in tests). */
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
