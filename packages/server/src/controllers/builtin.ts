import { Client } from 'kubeloop/client';
import type { Clock } from 'kubeloop/runtime';
import type { SimulatedRuntime } from '../kubelet/runtime.js';
import type { Registry } from '../registry/registry.js';
import { DaemonSetController } from './daemonset.js';
import { DeploymentController } from './deployment.js';
import { EndpointsController } from './endpoints.js';
import { GarbageCollector } from './garbage-collector.js';
import { JobController } from './job.js';
import type { SignFn } from './kcm/certificates.js';
import { KubeControllerManager } from './kcm/index.js';
import { Kubelet, type SimulatedNodesOptions } from './kubelet.js';
import { ReplicaSetController } from './replicaset.js';
import { Scheduler } from './scheduler.js';
import { StatefulSetController } from './statefulset.js';

type Log = (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/** What {@link startBuiltinControllers} needs: how to reach the API, and which controllers to run. */
export interface BuiltinControllersOptions {
  server: string;
  /** The control plane's loopback socket; without one the controllers use HTTPS. */
  socketPath?: string | undefined;
  /** The controllers' own bearer token (`system:kube-controller-manager`). */
  token: string;
  caData: string;
  registry: Registry;
  /** Simulated nodes; without any, pods and workloads are left alone (as in envtest). */
  nodes: SimulatedNodesOptions | undefined;
  /** The simulated containers the kubelet starts and stops (for logs, exec and attach). */
  runtime?: SimulatedRuntime;
  log: Log;
  /** The wall clock of the time-driven controllers (CronJob, HPA); tests pass a `FakeClock`. */
  clock?: Clock | undefined;
  /** Signs CertificateSigningRequests with the cluster CA (kube-controller-manager's CSR signer). */
  sign?: SignFn | undefined;
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

/**
 * kube-controller-manager, the scheduler and the kubelets of the local control plane: each one a
 * client of the API server, written with `kubeloop/runtime` like a user's operator. They share
 * one client on the control plane's loopback socket (plain HTTP/1.1 on a private Unix socket,
 * still authenticated and admitted like any request), or HTTPS where there is none.
 *
 * This module (and with it the client and the runtime) is loaded only after the API server is
 * ready, so that a start and the memory of a server without controllers stay small.
 */
export function startBuiltinControllers(o: BuiltinControllersOptions): BuiltinControllers {
  const client = new Client(
    { server: o.server, token: o.token, caData: o.caData },
    o.socketPath !== undefined ? { socketPath: o.socketPath } : {},
  );
  const gc = new GarbageCollector(client, o.registry, { log: o.log });
  const running: Array<{ start(): void; stop(): Promise<void>; waitForSync(): Promise<void> }> = [gc];
  let kubelet: Kubelet | undefined;
  if ((o.nodes?.count ?? 1) > 0) {
    kubelet = new Kubelet(client, { ...o.nodes, log: o.log, ...(o.runtime && { runtime: o.runtime }) });
    running.push(
      kubelet,
      new Scheduler(client, { log: o.log }),
      new ReplicaSetController(client, { log: o.log }),
      new DeploymentController(client, { log: o.log }),
      new DaemonSetController(client, { log: o.log }),
      new JobController(client, { log: o.log }),
      new EndpointsController(client, { log: o.log }),
      new StatefulSetController(client, { log: o.log }),
      new ReplicaSetController(client, { log: o.log, kind: 'ReplicationController' }),
      new KubeControllerManager(client, { log: o.log, clock: o.clock, sign: o.sign }),
    );
  }
  for (const c of running) c.start();
  return {
    kubelet,
    async waitForSync() {
      await Promise.all(running.map((c) => c.waitForSync()));
    },
    async stop() {
      // All at once: each stop() aborts its work before its first await, so none of them starts a
      // request (a new connection) that the stopping server would refuse and report as an error.
      await Promise.all(running.map((c) => c.stop()));
      await client.close();
    },
  };
}
