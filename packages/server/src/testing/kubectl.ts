import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { kubeconfigFile } from './kubeconfig-file.js';
import { startTestEnv, type TestEnv, type TestEnvOptions } from './test-env.js';

/** The outcome of one kubectl invocation. */
export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A control plane plus a kubectl bound to it (own kubeconfig, HOME and discovery cache, so
 * parallel test files never share kubectl state). kubectl must be on the PATH.
 */
export interface KubectlEnv {
  cp: TestEnv;
  /** The admin kubeconfig's path, also usable by other clients (the Python client, …). */
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
  /** Stops the control plane and removes the kubeconfig and kubectl's cache. */
  stop(): Promise<void>;
}

/**
 * Starts a {@link startTestEnv} control plane and binds a kubectl to it: what an end-to-end
 * test of an operator drives, as a user would with a real cluster.
 *
 * @example
 * ```ts
 * const env = await startKubectlEnv({ nodes: { count: 1 } }); // a simulated node runs pods
 * await env.ok(['create', 'deployment', 'web', '--image=nginx']);
 * const r = await env.run(['get', 'deployment', 'nope']); // never throws
 * expect(r.code).toBe(1);
 * await env.stop();
 * ```
 */
export async function startKubectlEnv(options: TestEnvOptions = {}): Promise<KubectlEnv> {
  const cp = await startTestEnv(options);
  const { dir, path: kubeconfigPath, remove } = kubeconfigFile(cp, 'kubeloop-kubectl-');
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
      remove();
    },
  };
}

/** A kubectl table (`kubectl get`, `api-resources`): the header and the rows by column name. */
export interface KubectlTable {
  columns: string[];
  rows: Record<string, string>[];
}

/**
 * Reads kubectl's column output. Columns are cut at the header's positions (not at spaces),
 * since headers (`NOMINATED NODE`) and cells (an empty `SHORTNAMES`) may contain or be blanks.
 *
 * @example
 * ```ts
 * const { rows } = parseTable(await env.ok(['get', 'pods']));
 * expect(rows.map((r) => r.STATUS)).toEqual(['Running']);
 * ```
 */
export function parseTable(out: string): KubectlTable {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0] ?? '';
  const starts: number[] = [];
  const columns: string[] = [];
  for (const m of header.matchAll(/\S+(?: \S+)*/g)) {
    starts.push(m.index);
    columns.push(m[0]);
  }
  const rows = lines.slice(1).map((line) => {
    const row: Record<string, string> = {};
    columns.forEach((c, i) => {
      row[c] = line.slice(starts[i], starts[i + 1]).trim();
    });
    return row;
  });
  return { columns, rows };
}

/**
 * Kubernetes objects as a multi-document YAML manifest, e.g. for `kubectl apply -f -`.
 *
 * @example
 * ```ts
 * await env.ok(['apply', '-f', '-'], { input: manifest(configMap, deployment) });
 * ```
 */
export function manifest(...objects: unknown[]): string {
  return objects.map((o) => stringify(o)).join('---\n');
}
