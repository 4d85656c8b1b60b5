/** A long-running command (a project's own `kubeloop dev`) with its output collected. */
import { spawn } from 'node:child_process';

export function spawnKubeloop(command: string, args: readonly string[], cwd: string) {
  const child = spawn(command, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true' },
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    output += d.toString();
    for (const l of listeners) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return {
    output: () => output,
    waitFor(re: RegExp): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!re.test(output)) return;
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
        exited.then((code) => reject(new Error(`exited (${code}) before ${re}:\n${output}`)));
      });
    },
    async stop(): Promise<number | null> {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}
