/**
 * Simulated nodes and their kubelet: Node objects with Ready conditions, heartbeat Leases in
 * `kube-node-lease` (nodes.ts), and the pods bound to them brought to Running (or to failure, on
 * request), their simulated containers started and stopped in the runtime (runtime.ts) that
 * logs, exec, attach and port-forward read. No container runs on the host: the kubelet writes
 * the status a real one would.
 */
import type { Client } from 'kubeloop/client';
import { isConflict, isNotFound, Pod } from 'kubeloop/client';
import {
  type ControllerDefinition,
  controller,
  defaultControllerRateLimiter,
  objectKey,
  type Runnable,
} from 'kubeloop/runtime';
import type { ControllerLog } from '../log.js';
import { SIMULATE_ANNOTATION } from '../simulate.js';
import { hash, nodeHeartbeat, nodeNames, type SimulatedNodesOptions } from './nodes.js';
import { ProcessPods } from './process-pods.js';
import type { ObservedContainerStatus, SimulatedRuntime } from './runtime.js';
import { serviceProxy } from './service-proxy.js';

export { type NodeTaint, nodeNames, type SimulatedNodesOptions } from './nodes.js';
export type { ProcessPodsOptions } from './process-pods.js';
export { SIMULATE_ANNOTATION };

type Obj = Record<string, unknown>;
type PodObj = Pod;

const now = (): string => `${new Date().toISOString().slice(0, 19)}Z`;

/**
 * The kubelet of every simulated node: registers the nodes and renews their Leases (a
 * runnable), and runs the status of the pods bound to them (a controller of pods, filtered to
 * its nodes, on the manager's shared cache). Give {@link Kubelet.parts} to the manager.
 */
export class Kubelet {
  readonly nodes: readonly string[];
  private readonly nodeIndex = new Map<string, number>();
  private readonly ips = new Map<string, string>();
  private readonly nextIp = new Map<string, number>();
  /** When the kubelet saw each pod's deletion start (by UID). */
  private readonly deletionSeen = new Map<string, number>();
  /** Crash loops: restarts so far and when the next one happens (by UID). */
  private readonly crashes = new Map<string, { restarts: number; nextAt: number }>();
  /** The UID of the pod last synced under each key, to forget it once replaced or gone. */
  private readonly uids = new Map<string, string>();
  private readonly log: ControllerLog;
  private readonly scale: number;
  private readonly heartbeat: ReturnType<typeof nodeHeartbeat>;
  /** The pods whose images this machine runs as processes (./process-pods.ts). */
  readonly processes: ProcessPods | undefined;
  /** The loopback addresses of Services, for process-backed pods (./service-proxy.ts). */
  private readonly proxy: ReturnType<typeof serviceProxy> | undefined;

  constructor(
    client: Client,
    private readonly options: SimulatedNodesOptions & {
      log?: ControllerLog;
      runtime?: SimulatedRuntime;
      /** The API server's URL, for the in-cluster config of process-backed pods (without it, every pod is simulated). */
      apiServer?: string;
    } = {},
  ) {
    this.nodes = nodeNames(options);
    this.nodes.forEach((n, i) => {
      this.nodeIndex.set(n, i);
    });
    this.log = options.log ?? (() => undefined);
    this.scale = options.timeScale ?? 0.001;
    this.heartbeat = nodeHeartbeat(client, options, this.log);
    if (options.runtime && options.apiServer && options.processes?.enabled !== false) {
      this.processes = new ProcessPods({
        client,
        runtime: options.runtime,
        apiServer: options.apiServer,
        options: options.processes ?? {},
        log: this.log,
      });
      options.runtime.backing = this.processes;
      const processes = this.processes;
      this.proxy = serviceProxy(client, this.log, (names) => processes.setClusterNames(names));
    }
  }

  /** Whether this kubelet runs the node. */
  runs(node: string): boolean {
    return this.nodeIndex.has(node);
  }

  /** Resolves once the nodes are registered (or failed to be); the pod cache is the manager's. */
  waitForSync(): Promise<void> {
    return this.heartbeat.registered;
  }

  /** Stops registering and renewing the nodes (at once: no request starts after it). */
  stop(): void {
    this.heartbeat.stop();
  }

  /** Ends the processes of process-backed pods (after {@link stop}, once no reconcile runs). */
  async stopProcesses(): Promise<void> {
    await this.proxy?.stop();
    await this.processes?.stop();
  }

  /** The service proxy's controller, when pods may be process-backed (for the manager). */
  proxyParts(): ControllerDefinition<never>[] {
    return this.proxy ? [this.proxy.controller as unknown as ControllerDefinition<never>] : [];
  }

  /** The kubelet's pod controller and its node runnable, for the manager. */
  parts(): [ControllerDefinition<Pod>, Runnable] {
    const ours = (p: PodObj) => this.runs(p.spec?.nodeName ?? '');
    const pods = controller(Pod)
      .named('kubelet')
      .withOptions({
        maxConcurrentReconciles: 4,
        rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
      })
      .withPredicates({ create: ours, update: (_old, p) => ours(p), delete: ours })
      .onGone((req, _ctx, last) => {
        const key = req.namespace ? `${req.namespace}/${req.name}` : req.name;
        // The pod last synced under the key, and the one last seen deleted (when it was never synced).
        for (const uid of new Set([this.uids.get(key), last?.metadata?.uid])) if (uid) this.forgetPod(uid);
        this.uids.delete(key);
      })
      .reconcile(async (pod, { client }) => {
        const after = await this.sync(pod, client);
        return after === undefined ? undefined : { requeueAfter: after };
      });
    return [pods, this.heartbeat];
  }

  private forgetPod(uid: string): void {
    this.ips.delete(uid);
    this.deletionSeen.delete(uid);
    this.crashes.delete(uid);
    this.processes?.forget(uid);
    this.options.runtime?.forget(uid);
  }

  /** One pod: writes the status it should have; returns in how many ms to look again, if at all. */
  private async sync(pod: PodObj, client: Client): Promise<number | undefined> {
    const node = pod.spec?.nodeName;
    if (!node || !this.nodeIndex.has(node)) return undefined;
    const key = objectKey(pod);
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const uid = pod.metadata?.uid ?? '';
    // A pod of the same name replaced the one last seen: that one is gone.
    const previous = this.uids.get(key);
    if (previous !== undefined && previous !== uid) this.forgetPod(previous);
    this.uids.set(key, uid);
    const pods = client.api(Pod, namespace);
    if (this.processes?.backs(pod)) {
      // Its processes drive its status, termination and removal.
      this.processes.sync(pod, this.hostIP(node));
      return undefined;
    }

    if (pod.metadata?.deletionTimestamp) {
      this.options.runtime?.stop(uid);
      const grace = pod.metadata.deletionGracePeriodSeconds ?? 0;
      const seen = this.deletionSeen.get(uid) ?? Date.now();
      this.deletionSeen.set(uid, seen);
      const left = seen + grace * 1000 * this.scale - Date.now();
      if (left > 0) return left;
      try {
        await pods.delete(name, { gracePeriodSeconds: 0, preconditions: { uid } });
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
      return undefined;
    }
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return undefined;

    const { status, after } = this.desiredStatus(pod, node);
    // The simulated containers start, crash and exit as the status says (their logs follow).
    this.options.runtime?.observe(pod, [
      ...(status.containerStatuses as ObservedContainerStatus[]),
      ...((status.ephemeralContainerStatuses ?? []) as ObservedContainerStatus[]),
    ]);
    if (!this.differs(pod.status as Obj | undefined, status)) return after;
    await pods.patchStatus(name, { status } as PodObj);
    return after;
  }

  private hostIP(node: string): string {
    return `172.18.0.${(this.nodeIndex.get(node) ?? 0) + 2}`;
  }

  private podIp(pod: PodObj, node: string): string {
    const uid = pod.metadata?.uid ?? '';
    const known = pod.status?.podIP ?? this.ips.get(uid);
    if (known) return known;
    const n = (this.nextIp.get(node) ?? 1) + 1;
    this.nextIp.set(node, n > 254 ? 1 : n);
    const ip = `10.244.${this.nodeIndex.get(node) ?? 0}.${n}`;
    this.ips.set(uid, ip);
    return ip;
  }

  private desiredStatus(pod: PodObj, node: string): { status: Obj; after: number | undefined } {
    const mode = pod.metadata?.annotations?.[SIMULATE_ANNOTATION];
    const t = now();
    const startTime = pod.status?.startTime ?? t;
    const hostIP = this.hostIP(node);
    const podIP = this.podIp(pod, node);
    const containers = pod.spec?.containers ?? [];
    const uid = pod.metadata?.uid ?? '';
    const previous = new Map((pod.status?.conditions ?? []).map((c) => [c.type, c]));
    const condition = (type: string, status: 'True' | 'False', reason?: string, message?: string): Obj => {
      const old = previous.get(type);
      return {
        type,
        status,
        lastProbeTime: null,
        lastTransitionTime: old && old.status === status ? old.lastTransitionTime : t,
        ...(reason && { reason }),
        ...(message && { message }),
      };
    };
    const base = (c: { name: string; image?: string }) => ({
      name: c.name,
      image: c.image ?? '',
      imageID: `kubeloop://${c.image ?? ''}@sha256:${hash(c.image ?? '')}`,
      containerID: `kubeloop://${hash(`${uid}/${c.name}`)}`,
    });
    let phase = 'Running';
    let ready = false;
    let after: number | undefined;
    let containerStatuses: Obj[];
    let notReady: { reason: string; message?: string } | undefined;

    if (mode === 'fail' || mode === 'succeed') {
      const exitCode = mode === 'fail' ? 1 : 0;
      phase = mode === 'fail' ? 'Failed' : 'Succeeded';
      containerStatuses = containers.map((c) => ({
        ...base(c),
        ready: false,
        started: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode,
            reason: exitCode ? 'Error' : 'Completed',
            startedAt: startTime,
            finishedAt: t,
          },
        },
      }));
      notReady = { reason: mode === 'fail' ? 'PodFailed' : 'PodCompleted' };
    } else if (mode === 'crashloop') {
      const crash = this.crashes.get(uid) ?? { restarts: 0, nextAt: Date.now() + this.backoff(0) };
      if (Date.now() >= crash.nextAt) {
        crash.restarts += 1;
        crash.nextAt = Date.now() + this.backoff(crash.restarts);
      }
      this.crashes.set(uid, crash);
      after = Math.max(1, crash.nextAt - Date.now());
      const backoffSeconds = Math.min(300, 10 * 2 ** Math.max(0, crash.restarts - 1));
      containerStatuses = containers.map((c) => ({
        ...base(c),
        ready: false,
        started: false,
        restartCount: crash.restarts,
        state: {
          waiting: {
            reason: 'CrashLoopBackOff',
            message: `back-off ${backoffSeconds}s restarting failed container=${c.name} pod=${pod.metadata?.name}_${pod.metadata?.namespace}(${uid})`,
          },
        },
        lastState: {
          terminated: {
            exitCode: 1,
            reason: 'Error',
            startedAt: startTime,
            finishedAt: t,
            containerID: base(c).containerID,
          },
        },
      }));
    } else {
      const readyAt = Date.parse(startTime) + (this.options.podReadyDelayMs ?? 0);
      ready = mode !== 'never-ready' && Date.now() >= readyAt;
      if (!ready && mode !== 'never-ready') after = Math.max(1, readyAt - Date.now());
      containerStatuses = containers.map((c) => ({
        ...base(c),
        ready,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: startTime } },
      }));
    }
    // Ephemeral containers (kubectl debug) run beside a running pod's containers, never ready.
    const startedAt = new Map(
      (pod.status?.ephemeralContainerStatuses ?? []).map((c) => [c.name, c.state?.running?.startedAt]),
    );
    const ephemeralContainerStatuses =
      phase === 'Running'
        ? (pod.spec?.ephemeralContainers ?? []).map((c) => ({
            ...base(c),
            ready: false,
            started: true,
            restartCount: 0,
            state: { running: { startedAt: startedAt.get(c.name) ?? t } },
          }))
        : [];
    if (!ready && !notReady) {
      const names = containers.map((c) => c.name).join(' ');
      notReady = { reason: 'ContainersNotReady', message: `containers with unready status: [${names}]` };
    }
    const readyCond = ready
      ? condition('Ready', 'True')
      : condition('Ready', 'False', notReady?.reason, notReady?.message);
    const containersReady = ready
      ? condition('ContainersReady', 'True')
      : condition('ContainersReady', 'False', notReady?.reason, notReady?.message);
    return {
      status: {
        phase,
        conditions: [
          condition('PodReadyToStartContainers', phase === 'Running' ? 'True' : 'False'),
          condition('Initialized', 'True'),
          readyCond,
          containersReady,
          condition('PodScheduled', 'True'),
        ],
        hostIP,
        hostIPs: [{ ip: hostIP }],
        podIP,
        podIPs: [{ ip: podIP }],
        startTime,
        containerStatuses,
        ...(ephemeralContainerStatuses.length > 0 && { ephemeralContainerStatuses }),
      },
      after,
    };
  }

  /** The crash-loop back-off of Kubernetes (10 s doubling to 5 min), scaled. */
  private backoff(restarts: number): number {
    return Math.max(1, Math.min(300, 10 * 2 ** restarts) * 1000 * this.scale);
  }

  /** Whether writing `desired` would change what a client sees (times of equal states aside). */
  private differs(current: Obj | undefined, desired: Obj): boolean {
    if (!current) return true;
    const strip = (s: Obj | undefined): string =>
      JSON.stringify({
        phase: s?.phase,
        podIP: s?.podIP,
        conditions: ((s?.conditions as Obj[] | undefined) ?? []).map((c) => [c.type, c.status, c.reason]),
        containers: ((s?.containerStatuses as Obj[] | undefined) ?? []).map((c) => [
          c.name,
          c.ready,
          c.restartCount,
          Object.keys((c.state as Obj | undefined) ?? {}),
        ]),
        ephemeral: ((s?.ephemeralContainerStatuses as Obj[] | undefined) ?? []).map((c) => [
          c.name,
          Object.keys((c.state as Obj | undefined) ?? {}),
        ]),
      });
    return strip(current) !== strip(desired);
  }
}
