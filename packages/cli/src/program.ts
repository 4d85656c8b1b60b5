import { Command } from 'commander';
import { registerServerCommand } from './commands/server.js';

/**
 * The `kubeloop` command with its subcommands. `dev` and `run` (and the SDK client and runtime
 * they load) are only loaded when the command line may need them, so that `kubeloop server`
 * starts as fast as the control plane allows.
 */
export async function createProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const program = new Command('kubeloop')
    .description('write Kubernetes operators in TypeScript')
    .version('0.1.0')
    .showHelpAfterError();
  registerServerCommand(program);
  if (argv[2] !== 'server') {
    const [dev, run] = await Promise.all([import('./commands/dev.js'), import('./commands/run.js')]);
    dev.registerDevCommand(program);
    run.registerRunCommand(program);
    (await import('./commands/build.js')).registerBuildCommand(program);
  }
  return program;
}
