/** Running the built `kubeloop` command as a user does, on scratch projects. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const root = fileURLToPath(new URL('../../../', import.meta.url));
/** The committed bin (npm test builds dist/ first). */
export const bin = join(root, 'packages/cli/bin/kubeloop.js');

/**
 * A scratch folder outside the repository whose `node_modules` is the workspace's (a link): a
 * project there resolves kubeloop, its TypeScript and the `kubeloop` command from the workspace,
 * with no install, and leaves nothing in the repository for the linter to find.
 */
export function scratchDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `kubeloop-${prefix}`)));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Runs `kubeloop …` to its end. */
export function kubeloop(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true', ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A long-running `kubeloop …` (dev, run) with its output collected. */
export function kubeloopProcess(args: readonly string[], cwd: string, options: { terminal?: boolean } = {}) {
  const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
  // In a terminal: a pseudo-terminal of util-linux's `script`, where Ctrl-C (\x03) is what a
  // user's is — SIGINT to every process of the foreground group, kubeloop and what it runs.
  // Without util-linux's script (not a Linux machine), signals go to the process alone.
  const terminal = options.terminal === true && spawnSync('script', ['--version']).status === 0;
  const child: ChildProcess = terminal
    ? spawn(
        'script',
        ['-qec', `stty cols 200; exec ${[process.execPath, bin, ...args].map(quote).join(' ')}`, '/dev/null'],
        {
          cwd,
          stdio: ['pipe', 'pipe', 'pipe'],
          env: { ...process.env, CI: 'true' },
        },
      )
    : spawn(process.execPath, [bin, ...args], {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, CI: 'true' },
      });
  let output = '';
  const waiters: Array<{ re: RegExp; resolve: () => void }> = [];
  const onData = (d: Buffer) => {
    output += d.toString();
    for (const w of waiters.splice(0)) {
      if (w.re.test(output)) w.resolve();
      else waiters.push(w);
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => output,
    /** Resolves once the output matches `re`; rejects if the process exits first. */
    waitFor(re: RegExp): Promise<void> {
      if (re.test(output)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        waiters.push({ re, resolve });
        exited.then((code) => reject(new Error(`kubeloop exited (${code}) before ${re}:\n${output}`)));
      });
    },
    /** Ctrl-C: typed in the terminal, else SIGINT to the process. */
    async stop(): Promise<number | null> {
      if (child.exitCode === null && child.signalCode === null) {
        if (terminal) child.stdin?.write('\x03');
        else child.kill('SIGINT');
      }
      return exited;
    },
  };
}

/** kubectl with a kubeconfig, to its end. */
export function kubectl(kubeconfig: string, args: readonly string[], input?: string) {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], {
    encoding: 'utf8',
    ...(input !== undefined && { input }),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A command to its end, without blocking this process (a control plane of the test runs in it). */
function runAsync(cmd: string, args: readonly string[], options: { cwd?: string; input?: string } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: { ...process.env, CI: 'true' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdin.end(options.input ?? '');
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `kubeloop …` to its end, asynchronously. */
export function kubeloopAsync(args: readonly string[], cwd: string) {
  return runAsync(process.execPath, [bin, ...args], { cwd });
}

/** kubectl with a kubeconfig to its end, asynchronously. */
export function kubectlAsync(kubeconfig: string, args: readonly string[], input?: string) {
  return runAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], input === undefined ? {} : { input });
}
