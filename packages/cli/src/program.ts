import { Command } from 'commander';
import { registerServerCommand } from './commands/server.js';

/**
 * The `kubeloop` command with its subcommands. The others (and the SDK client and runtime they
 * load) are only loaded when the command line may need them, so that `kubeloop server` starts as
 * fast as the control plane allows.
 */
export async function createProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const program = new Command('kubeloop')
    .description('write Kubernetes operators in TypeScript')
    .version('0.1.0')
    // The program's own options (--version, --help) only before the subcommand: after it, they
    // are the subcommand's (`create api --version v1` is the API's version, not kubeloop's).
    .enablePositionalOptions()
    .showHelpAfterError();
  registerServerCommand(program);
  if (argv[2] !== 'server') {
    const [dev, run, init, create, manifests] = await Promise.all([
      import('./commands/dev.js'),
      import('./commands/run.js'),
      import('./commands/init.js'),
      import('./commands/create.js'),
      import('./commands/manifests.js'),
    ]);
    init.registerInitCommand(program);
    create.registerCreateCommand(program);
    manifests.registerManifestCommands(program);
    dev.registerDevCommand(program);
    run.registerRunCommand(program);
    (await import('./commands/build.js')).registerBuildCommand(program);
    (await import('./commands/shards.js')).registerShardsCommand(program);
  }
  return program;
}
