import { resolve } from 'node:path';
import type { Command } from 'commander';
import { Client } from 'kubeloop/client';
import { buildProject, formatLogLine, installCrds, readProjectCrds, startOperator } from './project.js';

interface RunFlags {
  install: boolean;
  build: boolean;
  kubeconfig?: string;
  pretty: boolean;
}

/** `kubeloop run [dir]`: the operator against the current kubeconfig (a real cluster). */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run an operator against the current kubeconfig (a real cluster)')
    .argument('[dir]', 'the operator project', '.')
    .argument('[args...]', 'arguments of the operator (after --), e.g. -- --leader-elect')
    .option('--install', "install (server-side apply) the project's CRDs from config/crd first", false)
    .option('--no-build', 'run dist/main.js as it is, without compiling first')
    .option('--kubeconfig <path>', 'the kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .option('--no-pretty', 'print the JSON logs as they are')
    .action(async (dirArg: string, args: string[], flags: RunFlags) => {
      const dir = resolve(dirArg);
      const kubeconfig = flags.kubeconfig ? resolve(flags.kubeconfig) : undefined;
      if (flags.install) {
        const client = await Client.load(kubeconfig ? { path: kubeconfig } : {});
        const crds = await readProjectCrds(dir);
        await installCrds(client, crds);
        process.stdout.write(`installed ${crds.map((c) => c.metadata?.name).join(', ') || 'no CRD'}\n`);
      }
      if (flags.build) await buildProject(dir);
      const op = startOperator(dir, {
        ...(kubeconfig && { kubeconfig }),
        args,
        onLine: (line, stream) => {
          if (stream === 'stderr') process.stderr.write(`${line}\n`);
          else process.stdout.write(`${flags.pretty ? formatLogLine(line) : line}\n`);
        },
      });
      // The operator handles the signal itself (graceful shutdown); pass it on and wait.
      const forward = (sig: NodeJS.Signals) => () => op.child.kill(sig);
      const onInt = forward('SIGINT');
      const onTerm = forward('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      const code = await op.exited;
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      process.exitCode = typeof code === 'number' ? code : 0;
    });
}
