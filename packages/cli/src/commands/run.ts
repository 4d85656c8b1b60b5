import { resolve } from 'node:path';
import type { Command } from 'commander';
import { Client, loadKubeconfig } from 'kubeloop/client';
import {
  isKubeloopControlPlane,
  prepareOperatorIdentity,
  readProjectRbac,
  temporaryKubeconfigPath,
} from './operator-identity.js';
import { buildProject, formatLogLine, installCrds, readProjectCrds, startOperator } from './project.js';
import { type RunWebhooks, runWebhooks } from './run-webhooks.js';

interface RunFlags {
  install: boolean;
  build: boolean;
  kubeconfig?: string;
  pretty: boolean;
  asAdmin: boolean;
  webhookUrl?: string;
}

/**
 * `kubeloop run [dir]`: the operator against the current kubeconfig. On a real cluster it runs
 * with the kubeconfig's credentials (as kubebuilder's `make run`); on a kubeloop control plane it
 * runs under the ServiceAccount and RBAC of the project's config/rbac (unless `--as-admin`).
 */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description(
      'run an operator against the current kubeconfig (a real cluster, or a kubeloop control plane)',
    )
    .argument('[dir]', 'the operator project', '.')
    .argument('[args...]', 'arguments of the operator (after --), e.g. -- --leader-elect')
    .option('--install', "install (server-side apply) the project's CRDs from config/crd first", false)
    .option('--no-build', 'run dist/main.js as it is, without compiling first')
    .option('--kubeconfig <path>', 'the kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .option('--no-pretty', 'print the JSON logs as they are')
    .option(
      '--as-admin',
      "on a kubeloop control plane, run the operator with the kubeconfig's credentials instead of under the ServiceAccount and RBAC of its config/rbac",
      false,
    )
    .option(
      '--webhook-url <url>',
      "serve the operator's webhooks on this machine's port 9443 (--webhook-port) and register them with this https URL, which must reach it (without it they are off: ENABLE_WEBHOOKS=false)",
    )
    .action(async (dirArg: string, operands: string[], flags: RunFlags) => {
      // `kubeloop run -- --leader-elect`: commander hands the first word after `--` to [dir];
      // a flag is the operator's, and the project is the current folder.
      const args = dirArg.startsWith('-') ? [dirArg, ...operands] : operands;
      const dir = resolve(dirArg.startsWith('-') ? '.' : dirArg);
      const kubeconfig = flags.kubeconfig ? resolve(flags.kubeconfig) : undefined;
      // Without a readable kubeconfig there is nothing to install nor to detect: the operator
      // finds its own configuration (or says why it cannot), as before.
      const connection = await loadKubeconfig(kubeconfig ? { path: kubeconfig } : {}).catch(
        (err: unknown) => {
          if (flags.install) throw err;
          return undefined;
        },
      );
      let operatorKubeconfig = kubeconfig;
      let removeKubeconfig: (() => Promise<void>) | undefined;
      const client = connection && new Client(connection);
      // What happens to the project's webhooks, said before anything is installed.
      const hooks: RunWebhooks = await runWebhooks(dir, await readProjectCrds(dir), {
        ...(flags.webhookUrl !== undefined && { url: flags.webhookUrl }),
        args,
        out: (line) => process.stdout.write(`${line}\n`),
      });
      try {
        if (flags.install && client) {
          const crds = hooks.crds(await readProjectCrds(dir));
          await installCrds(client, crds);
          process.stdout.write(`installed ${crds.map((c) => c.metadata?.name).join(', ') || 'no CRD'}\n`);
        }
        if (client && connection && !flags.asAdmin && (await isKubeloopControlPlane(client))) {
          const rbac = await readProjectRbac(dir);
          if (rbac) {
            const file = await temporaryKubeconfigPath();
            removeKubeconfig = file.remove;
            const identity = await prepareOperatorIdentity(
              client,
              rbac,
              { server: connection.server, caData: connection.caData },
              file.path,
            );
            operatorKubeconfig = identity.kubeconfig;
            process.stdout.write(
              `running the operator as ${identity.username}, with the RBAC of config/rbac (--as-admin: with the kubeconfig's credentials)\n`,
            );
          } else {
            process.stdout.write(
              "no config/rbac in the project: running the operator with the kubeconfig's credentials\n",
            );
          }
        }
      } catch (err) {
        await removeKubeconfig?.();
        throw err;
      } finally {
        await client?.close();
      }
      try {
        if (flags.build) await buildProject(dir);
        const op = startOperator(dir, {
          ...(operatorKubeconfig && { kubeconfig: operatorKubeconfig }),
          args: [...args, ...hooks.args],
          env: hooks.env,
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
        if (connection) await hooks.register(connection, op);
        const code = await op.exited;
        if (connection) await hooks.unregister(connection);
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
        process.exitCode = typeof code === 'number' ? code : 0;
      } finally {
        await removeKubeconfig?.();
      }
    });
}
