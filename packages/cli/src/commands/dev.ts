import { type FSWatcher, watch } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type ControlPlane, startControlPlane } from '@kubeloop/server';
import type { Command } from 'commander';
import { Client, type KubeObject } from 'kubeloop/client';
import { watcher } from 'kubeloop/runtime';
import { type ProjectRbac, prepareOperatorIdentity, readProjectRbac } from './operator-identity.js';
import {
  applyObjects,
  buildProject,
  formatLogLine,
  installCrds,
  type OperatorProcess,
  readProjectCrds,
  readSamples,
  startOperator,
} from './project.js';

interface DevFlags {
  port: string;
  nodes: string;
  kubeconfig: string;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  samples: boolean;
  watch: boolean;
  asAdmin: boolean;
}

/** `spec.replicas=1 status.availableReplicas=1`-like summary of an object's state. */
export function describeState(obj: KubeObject & { spec?: unknown; status?: unknown }): string {
  const flat = (prefix: string, v: unknown, out: string[]) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) flat(`${prefix}.${k}`, x, out);
    } else if (v !== undefined) out.push(`${prefix}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
    return out;
  };
  return [...flat('spec', obj.spec, []), ...flat('status', obj.status, [])].join(' ');
}

/**
 * `kubeloop dev [dir]`: the inner loop of an operator — a local control plane, the project's
 * CRDs, the operator (rebuilt and restarted when its sources change), its samples, and a live
 * view of what it does; Ctrl-C stops it all.
 */
export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description(
      'develop an operator: start a local control plane, install the CRDs, run the operator (restarting it on changes) and apply its samples',
    )
    .argument('[dir]', 'the operator project', '.')
    .option('--port <port>', 'port of the local control plane (0 picks a free port)', '6443')
    .option('--nodes <count>', 'simulated nodes running the pods', '1')
    .option('--kubeconfig <path>', 'where to write the kubeconfig', '.kubeloop/kubeconfig')
    .option('--metrics-bind-address <addr>', "the operator's /metrics address", '127.0.0.1:8080')
    .option(
      '--health-probe-bind-address <addr>',
      "the operator's /healthz and /readyz address",
      '127.0.0.1:8081',
    )
    .option('--no-samples', 'do not apply config/samples')
    .option('--no-watch', 'do not rebuild and restart the operator when its sources change')
    .option(
      '--as-admin',
      "run the operator as the control plane's admin instead of under the ServiceAccount and RBAC of its config/rbac",
      false,
    )
    .action(async (dirArg: string, flags: DevFlags) => {
      const dir = resolve(dirArg);
      const port = Number(flags.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new Error(`--port must be an integer between 0 and 65535, got ${JSON.stringify(flags.port)}`);
      }
      const nodeCount = Number(flags.nodes);
      if (!Number.isInteger(nodeCount) || nodeCount < 0) {
        throw new Error(`--nodes must be a non-negative integer, got ${JSON.stringify(flags.nodes)}`);
      }
      const kubeconfigPath = resolve(flags.kubeconfig);
      const out = (line: string) => process.stdout.write(`${line}\n`);
      const ac = new AbortController();
      let cp: ControlPlane | undefined;
      let operator: OperatorProcess | undefined;
      let sources: FSWatcher | undefined;
      let stopping = false;

      // Handlers first, so that a Ctrl-C during the start still cleans up.
      let wake: () => void = () => undefined;
      const interrupted = new Promise<void>((r) => {
        wake = r;
      });
      const onSignal = () => {
        stopping = true;
        wake();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);

      const operatorArgs = [
        `--metrics-bind-address=${flags.metricsBindAddress}`,
        `--health-probe-bind-address=${flags.healthProbeBindAddress}`,
      ];
      // The operator's own identity (unless --as-admin): its ServiceAccount, with the RBAC its
      // manifests declare, so that a missing permission shows here and not first in a cluster.
      let rbac: ProjectRbac | undefined;
      const operatorKubeconfig = join(dirname(kubeconfigPath), 'operator.kubeconfig');
      const credentials = async (): Promise<string> => {
        if (!rbac || !cp) return kubeconfigPath;
        // Applied again at every (re)start: regenerated manifests take effect with the new build.
        const fresh = (await readProjectRbac(dir)) ?? rbac;
        const client = new Client(cp.clientConfig);
        try {
          await prepareOperatorIdentity(
            client,
            fresh,
            { server: cp.clientConfig.server, caData: cp.clientConfig.caData },
            operatorKubeconfig,
          );
        } finally {
          await client.close();
        }
        return operatorKubeconfig;
      };
      const launch = async (): Promise<OperatorProcess | undefined> => {
        const kubeconfig = await credentials();
        // Ctrl-C while the credentials were made: nothing to start (nor to leak).
        if (stopping) return undefined;
        const op = startOperator(dir, {
          kubeconfig,
          args: operatorArgs,
          onLine: (line, stream) =>
            stream === 'stdout'
              ? out(`[operator] ${formatLogLine(line)}`)
              : process.stderr.write(`[operator] ${line}\n`),
        });
        op.exited.then((code) => {
          if (!stopping && operator === op)
            out(`[operator] exited (${code}); waiting for a change to restart it`);
        });
        return op;
      };

      const run = async () => {
        await mkdir(join(kubeconfigPath, '..'), { recursive: true });
        cp = await startControlPlane({
          port,
          kubeconfigPath,
          nodes: { count: nodeCount },
          log: (level, msg) => {
            if (level === 'error') process.stderr.write(`[control plane] ${msg}\n`);
          },
        });
        out(`kubeloop control plane ready at ${cp.url}`);
        out(`  export KUBECONFIG=${kubeconfigPath}`);
        const client = new Client(cp.clientConfig);

        const crds = await readProjectCrds(dir);
        await installCrds(client, crds);
        out(`installed ${crds.length} CRD(s): ${crds.map((c) => c.metadata?.name).join(', ') || '(none)'}`);
        if (stopping) return;

        out(`building ${dir}`);
        await buildProject(dir);
        if (stopping) return;
        if (!flags.asAdmin) {
          rbac = await readProjectRbac(dir);
          if (rbac) {
            const { namespace, name } = rbac.serviceAccount;
            out(
              `running the operator as system:serviceaccount:${namespace}:${name}, with the RBAC of config/rbac (--as-admin: as admin)`,
            );
            out(`  its kubeconfig: ${operatorKubeconfig}`);
          } else {
            out(
              'no config/rbac in the project: running the operator as admin (generate its manifests first)',
            );
          }
        }
        operator = await launch();

        // The live view of the project's kinds: one line per change of spec or status.
        for (const crd of crds) {
          const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
          if (!version) continue;
          const kind = crd.spec.names.kind;
          const api = client.api<KubeObject>({
            group: crd.spec.group,
            version: version.name,
            kind,
            plural: crd.spec.names.plural,
            namespaced: crd.spec.scope === 'Namespaced',
          });
          void (async () => {
            const seen = new Map<string, string>();
            for await (const ev of watcher(api, { signal: ac.signal })) {
              if (ev.type === 'SYNCED') continue;
              const ns = ev.object.metadata?.namespace;
              const key = `${ns ? `${ns}/` : ''}${ev.object.metadata?.name ?? ''}`;
              if (ev.type === 'DELETED') {
                seen.delete(key);
                out(`[${kind}] ${key} deleted`);
                continue;
              }
              const state = describeState(ev.object);
              if (seen.get(key) === state) continue;
              seen.set(key, state);
              out(`[${kind}] ${key}  ${state}`);
            }
          })().catch((err: unknown) => {
            if (!ac.signal.aborted) process.stderr.write(`watch of ${kind} failed: ${String(err)}\n`);
          });
        }

        if (flags.samples) {
          const applied = await applyObjects(client, await readSamples(dir));
          for (const s of applied)
            out(`applied ${s.kind} ${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`);
        }

        if (flags.watch && !stopping) {
          let timer: NodeJS.Timeout | undefined;
          let rebuilding = Promise.resolve();
          sources = watch(join(dir, 'src'), { recursive: true }, () => {
            clearTimeout(timer);
            // Editors write in bursts: one rebuild for a burst.
            timer = setTimeout(() => {
              rebuilding = rebuilding.then(async () => {
                if (stopping) return;
                out('sources changed: rebuilding');
                try {
                  await buildProject(dir);
                } catch (err) {
                  out(err instanceof Error ? err.message : String(err));
                  return;
                }
                if (stopping) return;
                const old = operator;
                operator = undefined;
                await old?.stop();
                if (stopping) return;
                out('restarting the operator');
                try {
                  operator = await launch();
                } catch (err) {
                  out(`the operator could not start: ${err instanceof Error ? err.message : String(err)}`);
                }
              });
            }, 200);
          });
        }
        out('watching (Ctrl-C to stop); in another terminal:');
        out(`  export KUBECONFIG=${kubeconfigPath}`);
        out('  kubectl get foos,deployments,pods');
      };

      let failure: unknown;
      try {
        await Promise.race([run(), interrupted]);
        await interrupted;
      } catch (err) {
        failure = err;
      }
      stopping = true;
      out('stopping');
      sources?.close();
      ac.abort();
      await operator?.stop();
      await cp?.stop();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (failure !== undefined) throw failure;
    });
}
