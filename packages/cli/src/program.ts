import { Command } from 'commander';
import { registerServerCommand } from './commands/server.js';

/** The module registering each command (`server` is always registered). */
const COMMAND_MODULES: Record<string, string> = {
  server: 'server',
  init: 'init',
  create: 'create',
  generate: 'manifests',
  manifests: 'manifests',
  install: 'manifests',
  uninstall: 'manifests',
  deploy: 'manifests',
  undeploy: 'manifests',
  dev: 'dev',
  run: 'run',
  build: 'build',
  shards: 'shards',
};

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
  // Only the module of the command given is loaded (each costs a few hundred ms of imports);
  // for help, or a command not listed here, all of them.
  const only = COMMAND_MODULES[argv[2] ?? ''];
  const wanted = (m: string) => only === undefined || only === m;
  if (wanted('init')) (await import('./commands/init.js')).registerInitCommand(program);
  if (wanted('create')) (await import('./commands/create.js')).registerCreateCommand(program);
  if (wanted('manifests')) (await import('./commands/manifests.js')).registerManifestCommands(program);
  if (wanted('dev')) (await import('./commands/dev.js')).registerDevCommand(program);
  if (wanted('run')) (await import('./commands/run.js')).registerRunCommand(program);
  if (wanted('build')) (await import('./commands/build.js')).registerBuildCommand(program);
  if (wanted('shards')) (await import('./commands/shards.js')).registerShardsCommand(program);
  return program;
}
