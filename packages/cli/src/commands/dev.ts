import { existsSync, type FSWatcher, watch } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type ControlPlane, startControlPlane } from '@kubeloop/server';
import type { Command } from 'commander';
import { Client, type CustomResourceDefinition, type KubeObject } from 'kubeloop/client';
import { watcher } from 'kubeloop/runtime';
import {
  DEV_CERT_DIR,
  type DevWebhooks,
  prepareDevWebhooks,
  withoutWebhookConversion,
} from './dev-webhooks.js';
import { generate, requireProjectCrds } from './manifests.js';
import { type ProjectRbac, prepareOperatorIdentity, readProjectRbac } from './operator-identity.js';
import {
  applyObjects,
  buildProject,
  formatLogLine,
  installCrds,
  type OperatorProcess,
  readSamples,
  startOperator,
} from './project.js';
import { holdYoungGeneration } from './young-generation.js';

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

/** What `kubectl` to try on the project's own kinds, printed once everything runs. */
export function kubectlHints(crds: readonly CustomResourceDefinition[]): string[] {
  if (crds.length === 0) return ['kubectl get all -A'];
  const plurals = crds.map((c) => c.spec.names.plural);
  const first = crds[0];
  return [
    `kubectl get ${plurals.join(',')}${crds.some((c) => c.spec.scope === 'Namespaced') ? ' -A' : ''}`,
    ...(first ? [`kubectl explain ${first.spec.names.plural}.spec`] : []),
  ];
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
      // The project's webhooks, served by the operator with a CA dev makes (none: undefined).
      let hooks: DevWebhooks | undefined;
      let admin: Client | undefined;

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
          args: [...operatorArgs, ...(hooks?.args ?? [])],
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
      /** Registers the webhooks once the operator serves them (its port may be new after a restart). */
      const registerWebhooks = async (op: OperatorProcess | undefined) => {
        if (!hooks || !op || !admin) return;
        if (await hooks.register(admin, op))
          out(`registered ${hooks.summary}, served by the operator at ${hooks.url}`);
        else if (!stopping && operator === op)
          out(
            `the operator did not serve its webhooks at ${hooks.url}: does src/start.ts (src/main.ts) start them (webhookFlags, WebhookServer.setupWithManager)?`,
          );
      };

      const run = async () => {
        await mkdir(join(kubeconfigPath, '..'), { recursive: true });
        const releaseYoungGeneration = holdYoungGeneration();
        cp = await startControlPlane({
          port,
          kubeconfigPath,
          nodes: { count: nodeCount },
          log: (level, msg) => {
            if (level === 'error') process.stderr.write(`[control plane] ${msg}\n`);
          },
        });
        releaseYoungGeneration(cp.settled);
        out(`kubeloop control plane ready at ${cp.url}`);
        out(`  export KUBECONFIG=${kubeconfigPath}`);
        const client = new Client(cp.clientConfig);
        admin = client;

        // The manifests follow the code: config/ is regenerated (when the project generates it,
        // as `kubeloop init` scaffolds it) before anything is installed, and after every change.
        const generates = existsSync(join(dir, 'src/manifests.ts'));
        out(`building ${dir}${generates ? ' and generating config/' : ''}`);
        if (generates) await generate(dir);
        else await buildProject(dir);
        if (stopping) return;
        const projectCrds = async () => {
          const found = await requireProjectCrds(dir);
          if (hooks) return hooks.crds(found);
          return process.env.ENABLE_WEBHOOKS === 'false' ? withoutWebhookConversion(found) : found;
        };
        if (process.env.ENABLE_WEBHOOKS === 'false')
          out('ENABLE_WEBHOOKS=false: the webhooks are neither served nor registered (conversions: None)');
        else {
          hooks = await prepareDevWebhooks(dir, await requireProjectCrds(dir));
          if (hooks)
            out(
              `webhooks: ${hooks.summary}; the operator serves them at ${hooks.url} with a local CA (${join(DEV_CERT_DIR, 'ca.crt')})`,
            );
        }
        let crds = await projectCrds();
        await installCrds(client, crds);
        if (crds.length === 0)
          out(
            'no CRD in config/crd: `kubeloop create api` declares a kind of your own (then it is installed here)',
          );
        else out(`installed ${crds.length} CRD(s): ${crds.map((c) => c.metadata?.name).join(', ')}`);
        const installed = new Map(crds.map((c) => [c.metadata?.name ?? '', JSON.stringify(c.spec)]));
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
        await registerWebhooks(operator);

        // The live view of the project's kinds: one line per change of spec or status.
        const viewed = new Set<string>();
        const view = (crd: CustomResourceDefinition) => {
          if (viewed.has(crd.metadata?.name ?? '')) return;
          viewed.add(crd.metadata?.name ?? '');
          const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
          if (!version) return;
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
        };
        for (const crd of crds) view(crd);

        /** Applies the CRDs that changed since they were installed (new fields are not pruned). */
        const reinstall = async () => {
          crds = await projectCrds();
          const changed = crds.filter(
            (c) => installed.get(c.metadata?.name ?? '') !== JSON.stringify(c.spec),
          );
          if (changed.length === 0) return;
          await installCrds(client, changed);
          for (const c of changed) {
            installed.set(c.metadata?.name ?? '', JSON.stringify(c.spec));
            view(c);
          }
          out(`applied the changed CRD(s): ${changed.map((c) => c.metadata?.name).join(', ')}`);
        };

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
                out(`sources changed: rebuilding${generates ? ' and regenerating config/' : ''}`);
                try {
                  if (generates) await generate(dir);
                  else await buildProject(dir);
                  await reinstall();
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
                  await registerWebhooks(operator);
                } catch (err) {
                  out(`the operator could not start: ${err instanceof Error ? err.message : String(err)}`);
                }
              });
            }, 200);
          });
        }
        out('watching (Ctrl-C to stop); in another terminal:');
        out(`  export KUBECONFIG=${kubeconfigPath}`);
        for (const hint of kubectlHints(crds)) out(`  ${hint}`);
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
      // The configurations first: nothing is left calling a webhook that is about to stop.
      if (hooks && admin) await hooks.unregister(admin).catch(() => undefined);
      await operator?.stop();
      await cp?.stop();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (failure !== undefined) throw failure;
    });
}
