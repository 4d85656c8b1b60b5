import { Command } from 'commander';
import { registerDevCommand } from './commands/dev.js';
import { registerRunCommand } from './commands/run.js';
import { registerServerCommand } from './commands/server.js';

/** The `kubeloop` command with all its subcommands. */
export function createProgram(): Command {
  const program = new Command('kubeloop')
    .description('write Kubernetes operators in TypeScript')
    .version('0.1.0')
    .showHelpAfterError();
  registerServerCommand(program);
  registerDevCommand(program);
  registerRunCommand(program);
  return program;
}
