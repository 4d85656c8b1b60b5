import { Client } from 'kubeloop/client';
import { type Clock, type ControllerDefinition, Manager, type Runnable } from 'kubeloop/runtime';
import { type Logger, pino } from 'pino';
import { appsControllers } from './apps.js';
import { endpointsController } from './endpoints.js';
import { garbageCollector } from './garbage-collector.js';
import {
  ADDON_INSTALLER,
  CONTROLLER_ACCOUNTS,
  CONTROLLER_MANAGER,
  controllerServiceAccount,
  ENDPOINT_SLICE_ACCOUNT,
  type Identity,
  nodeIdentity,
  SCHEDULER,
} from './identities.js';
import type { SignFn } from './kcm/certificates.js';
import { clusterRoleAggregationController } from './kcm/clusterrole-aggregation.js';
import { kubeControllerManager } from './kcm/index.js';
import { type IssueLegacyTokenFn, serviceAccountTokensController } from './kcm/serviceaccount-tokens.js';
import { Kubelet, nodeNames, type SimulatedNodesOptions } from './kubelet/kubelet.js';
import type { SimulatedRuntime } from './kubelet/runtime.js';
import { schedulerController } from './scheduler.js';
import { workloadControllers } from './workloads.js';

type Log = (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/** What {@link startBuiltinControllers} needs: how to reach the API, and which controllers to run. */
export interface BuiltinControllersOptions {
  server: string;
  /** The control plane's loopback socket; without one the controllers use HTTPS. */
  socketPath?: string | undefined;
  /**
   * The bearer token of the controllers where `credentials` is not given (then every component
   * acts as one user).
   */
  token: string;
  /**
   * A bearer token that authenticates as `identity`: each component then acts as its own user
   * (see `identities.ts`), with the permissions the bootstrap policy gives it.
   */
  credentials?(identity: Identity): string;
  caData: string;
  /** Simulated nodes; without any, pods and workloads are left alone (as in envtest). */
  nodes: SimulatedNodesOptions | undefined;
  /** The simulated containers the kubelet starts and stops (for logs, exec and attach). */
  runtime?: SimulatedRuntime;
  log: Log;
  /** The wall clock of the time-driven controllers (CronJob, HPA); tests pass a `FakeClock`. */
  clock?: Clock | undefined;
  /** Signs CertificateSigningRequests with the cluster CA (kube-controller-manager's CSR signer). */
  sign?: SignFn | undefined;
  /** Signs the tokens of legacy service account token Secrets (kube-controller-manager's tokens controller). */
  issueLegacyToken?: IssueLegacyTokenFn | undefined;
}

/** The running built-in controllers. */
export interface BuiltinControllers {
  /** The simulated kubelets, when nodes are simulated. */
  readonly kubelet: Kubelet | undefined;
  /** Resolves once every controller has filled its caches (and the simulated nodes are registered). */
  waitForSync(): Promise<void>;
  /** Stops every controller, then the client. */
  stop(): Promise<void>;
}

/** The manager's pino logger, writing its warnings and errors to the control plane's log. */
function managerLogger(log: Log): Logger {
  return pino(
    { level: 'warn', base: null, timestamp: false },
    {
      write(line: string) {
        try {
          const { level, msg, ...fields } = JSON.parse(line) as Record<string, unknown>;
          log(Number(level) >= 50 ? 'error' : 'warn', String(msg), fields);
        } catch {
          log('warn', line);
        }
      },
    },
  );
}

/**
 * kube-controller-manager, the scheduler and the kubelets of the local control plane: each one a
 * client of the API server, written with `kubeloop/runtime` like a user's operator, run by one
 * `Manager` (one shared cache). They share one client on the control plane's loopback socket
 * (plain HTTP/1.1 on a private Unix socket, still authenticated and admitted like any request),
 * or HTTPS where there is none.
 *
 * This module (and with it the client and the runtime) is loaded only after the API server is
 * ready, so that a start and the memory of a server without controllers stay small.
 */
export function startBuiltinControllers(o: BuiltinControllersOptions): BuiltinControllers {
  const transport = o.socketPath !== undefined ? { socketPath: o.socketPath } : {};
  const clients = new Map<string, Client>();
  /** The client of a component, one per user (every component shares one without `credentials`). */
  const clientFor = (identity: Identity): Client => {
    const key = o.credentials ? identity.username : '';
    let c = clients.get(key);
    if (!c) {
      const token = o.credentials ? o.credentials(identity) : o.token;
      c = new Client({ server: o.server, token, caData: o.caData }, transport);
      clients.set(key, c);
    }
    return c;
  };
  const client = clientFor(CONTROLLER_MANAGER);
  /** A controller of kube-controller-manager writing as its ServiceAccount (its reads stay the shared cache's). */
  const asItself = <T extends ControllerDefinition<never> | Runnable>(part: T): T => {
    if (!('reconcileFn' in part)) return part;
    const def = part as ControllerDefinition<never>;
    const account = CONTROLLER_ACCOUNTS[def.name];
    if (!account) return part;
    return { ...def, options: { ...def.options, client: clientFor(controllerServiceAccount(account)) } } as T;
  };
  const logger = managerLogger(o.log);
  const manager = new Manager({
    client,
    logger,
    name: 'kube-controller-manager',
    healthProbeAddress: false,
    metricsAddress: false,
    handleSignals: false,
    gracefulShutdownTimeoutMs: 0,
  });
  // The collector writes through its own client: it reads only its own metadata caches.
  const gc = garbageCollector(
    clientFor(controllerServiceAccount(CONTROLLER_ACCOUNTS['garbage-collector']!)),
    {
      log: o.log,
    },
  );
  let kubelet: Kubelet | undefined;
  if ((o.nodes?.count ?? 1) > 0) {
    const nodes = nodeNames(o.nodes ?? {});
    const kubeletClient = clientFor(nodeIdentity(nodes[0] ?? 'kubeloop-node'));
    kubelet = new Kubelet(kubeletClient, {
      ...o.nodes,
      log: o.log,
      ...(o.runtime && { runtime: o.runtime }),
      apiServer: o.server,
    });
    const scheduler = clientFor(SCHEDULER);
    const [placement, schedulerEvents] = schedulerController(scheduler, { log: o.log });
    const parts = [
      ...appsControllers(client, { log: o.log }),
      ...workloadControllers(client, { log: o.log }),
      ...kubeControllerManager(client, {
        logger,
        clock: o.clock,
        sign: o.sign,
        installer: clientFor(ADDON_INSTALLER),
      }),
      endpointsController({
        slices: clientFor(controllerServiceAccount(ENDPOINT_SLICE_ACCOUNT)),
      }) as unknown as ControllerDefinition<never>,
    ];
    for (const c of parts) manager.add(asItself(c));
    // The kubelet's pod writes are the node's, like its registration and Leases.
    const [podSync, nodeRunnable] = kubelet.parts();
    manager.add({ ...podSync, options: { ...podSync.options, client: kubeletClient } });
    manager.add(nodeRunnable);
    for (const p of kubelet.proxyParts())
      manager.add({ ...p, options: { ...p.options, client: kubeletClient } });
    manager.add({ ...placement, options: { ...placement.options, client: scheduler } });
    manager.add(schedulerEvents);
  }
  // Like the collector, it needs no nodes: the ClusterRoles it aggregates are the API's alone.
  manager.add(asItself(clusterRoleAggregationController() as unknown as ControllerDefinition<never>));
  // The tokens controller needs no nodes: legacy token Secrets are filled in every cluster.
  if (o.issueLegacyToken) manager.add(serviceAccountTokensController(o.issueLegacyToken, o.caData));
  // Last: its preparation asks the server for discovery.
  manager.add(gc);
  const running = manager.start();
  running.catch((err: unknown) => o.log('error', 'built-in controllers stopped', { err: String(err) }));
  return {
    kubelet,
    async waitForSync() {
      await manager.ready();
      await kubelet?.waitForSync();
      // The collector's own informers, which the manager's readiness does not wait for.
      await gc.initialSync();
    },
    async stop() {
      // All at once: each stop aborts its work before its first await, so none of them starts a
      // request (a new connection) that the stopping server would refuse and report as an error.
      gc.stop();
      kubelet?.stop();
      await manager.stop();
      await running.catch(() => undefined);
      // Process-backed pods end before the client their final writes would use.
      await kubelet?.stopProcesses();
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}
