/**
 * Simulated nodes and their kubelet: Node objects with Ready conditions, heartbeat Leases in
 * `kube-node-lease`, and the pods bound to them brought to Running (or to failure, on request).
 * No container runs: the kubelet only writes the status a real one would.
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Client } from 'kubeloop/client';
import { isAlreadyExists, isConflict, isNotFound, Lease, Node, Pod } from 'kubeloop/client';
import { defaultControllerRateLimiter, Informer, objectKey, splitKey, WorkQueue } from 'kubeloop/runtime';
import type { ControllerLog } from '../log.js';
import { SIMULATE_ANNOTATION } from '../simulate.js';
import { runWorker } from '../worker.js';
import type { ObservedContainerStatus, SimulatedRuntime } from './runtime.js';

/** A taint of a simulated node. */
export interface NodeTaint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/**
 * The simulated nodes of a control plane, and how their kubelet behaves.
 *
 * @example
 * ```ts
 * await startControlPlane({ nodes: { count: 3, labels: { zone: 'a' }, timeScale: 0 } });
 * ```
 */
export interface SimulatedNodesOptions {
  /** How many nodes (default 1 for `startControlPlane`, 0 for `startTestEnv`). */
  count?: number;
  /** Names are `<namePrefix><n>`, n from 1 (default `kubeloop-node-`). */
  namePrefix?: string;
  /** Labels added to every node (besides `kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch`). */
  labels?: Record<string, string>;
  taints?: NodeTaint[];
  /** Capacity (= allocatable) of each node (default cpu 4, memory 8Gi, pods 110, ephemeral-storage 100Gi). */
  capacity?: Record<string, string>;
  /** Delay between a pod running and it being Ready (default 0). */
  podReadyDelayMs?: number;
  /**
   * Factor applied to the simulated durations of Kubernetes — deletion grace periods and
   * crash-loop back-offs — so that tests are fast (default 0.001: a 30 s grace period lasts 30 ms,
   * a pod still shows as terminating before it goes).
   */
  timeScale?: number;
  /** Interval of the node Lease renewals (default 10 s, as the kubelet's). */
  heartbeatIntervalMs?: number;
}

export { SIMULATE_ANNOTATION };

type Obj = Record<string, unknown>;
type PodObj = Pod;

const DEFAULT_CAPACITY: Record<string, string> = {
  cpu: '4',
  memory: '8Gi',
  pods: '110',
  'ephemeral-storage': '100Gi',
};
const KUBELET_VERSION = 'v1.32.0-kubeloop';
const LEASE_NAMESPACE = 'kube-node-lease';

const now = (): string => `${new Date().toISOString().slice(0, 19)}Z`;
const microNow = (): string => `${new Date().toISOString().slice(0, 23)}000Z`;
const hash = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Names of the simulated nodes. */
export function nodeNames(o: SimulatedNodesOptions): string[] {
  const prefix = o.namePrefix ?? 'kubeloop-node-';
  return Array.from({ length: o.count ?? 1 }, (_, i) => `${prefix}${i + 1}`);
}

/**
 * The kubelet of every simulated node: registers the nodes, renews their Leases, and runs the
 * status of the pods bound to them. Informer + workqueue + {@link Kubelet.reconcile}.
 */
export class Kubelet {
  readonly nodes: readonly string[];
  private readonly nodeIndex = new Map<string, number>();
  private readonly pods: Informer<PodObj>;
  private readonly queue = new WorkQueue<string>({
    name: 'kubelet',
    rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
  });
  private readonly abort = new AbortController();
  private readonly ips = new Map<string, string>();
  private readonly nextIp = new Map<string, number>();
  /** When the kubelet saw each pod's deletion start (by UID). */
  private readonly deletionSeen = new Map<string, number>();
  /** Crash loops: restarts so far and when the next one happens (by UID). */
  private readonly crashes = new Map<string, { restarts: number; nextAt: number }>();
  private heartbeat: NodeJS.Timeout | undefined;
  private workers: Promise<void>[] = [];
  private readonly log: ControllerLog;
  private readonly scale: number;
  private registered: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: Client,
    private readonly options: SimulatedNodesOptions & {
      log?: ControllerLog;
      runtime?: SimulatedRuntime;
    } = {},
  ) {
    this.nodes = nodeNames(options);
    this.nodes.forEach((n, i) => {
      this.nodeIndex.set(n, i);
    });
    this.log = options.log ?? (() => undefined);
    this.scale = options.timeScale ?? 0.001;
    setMaxListeners(0, this.abort.signal);
    this.pods = new Informer(client.api(Pod, ''), {});
    this.pods.addEventHandler({
      onAdd: (p) => this.observe(p),
      onUpdate: (_o, p) => this.observe(p),
      onDelete: (p) => this.forgetPod(p),
    });
  }

  /** Whether this kubelet runs the node. */
  runs(node: string): boolean {
    return this.nodeIndex.has(node);
  }

  /** Registers the nodes, then starts heartbeats and the pod loop (in the background). */
  start(): void {
    this.registered = this.registerNodes().catch((err: unknown) => {
      if (!this.abort.signal.aborted) this.log('error', 'node registration failed', { error: String(err) });
    });
    this.pods.start(this.abort.signal);
    for (let i = 0; i < 4; i++) this.workers.push(this.work());
  }

  /** Resolves once the nodes are registered (or failed to be) and the pod cache is filled. */
  async waitForSync(): Promise<void> {
    await Promise.all([this.registered, this.pods.waitForSync()]);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.queue.shutdown();
    await Promise.all(this.workers);
    await this.pods.stop();
  }

  private async registerNodes(): Promise<void> {
    const nodes = this.client.api(Node);
    for (const name of this.nodes) {
      try {
        await nodes.create(this.nodeObject(name));
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      await nodes.patchStatus(name, { status: this.nodeStatus(name) } as Node);
    }
    await this.renewLeases();
    this.heartbeat = setInterval(() => {
      void this.renewLeases().catch((err: unknown) => {
        if (!this.abort.signal.aborted) this.log('warn', 'node lease renewal failed', { error: String(err) });
      });
    }, this.options.heartbeatIntervalMs ?? 10_000);
    this.heartbeat.unref();
  }

  private nodeObject(name: string): Node {
    const i = this.nodeIndex.get(name) ?? 0;
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'beta.kubernetes.io/os': 'linux',
          'beta.kubernetes.io/arch': 'amd64',
          ...this.options.labels,
        },
        annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
      },
      spec: {
        podCIDR: `10.244.${i}.0/24`,
        podCIDRs: [`10.244.${i}.0/24`],
        ...(this.options.taints && this.options.taints.length > 0 && { taints: this.options.taints }),
      },
    };
  }

  private nodeStatus(name: string): Obj {
    const i = this.nodeIndex.get(name) ?? 0;
    const capacity = { ...DEFAULT_CAPACITY, ...this.options.capacity };
    const t = now();
    const cond = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      lastHeartbeatTime: t,
      lastTransitionTime: t,
      reason,
      message,
    });
    return {
      capacity,
      allocatable: capacity,
      conditions: [
        cond(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: `172.18.0.${i + 2}` },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: hash(`machine-${name}`).slice(0, 32),
        systemUUID: hash(`system-${name}`).slice(0, 32),
        bootID: hash(`boot-${name}`).slice(0, 32),
        kernelVersion: '6.0.0-kubeloop',
        osImage: 'kubeloop simulated node',
        containerRuntimeVersion: 'kubeloop://1.0.0',
        kubeletVersion: KUBELET_VERSION,
        kubeProxyVersion: KUBELET_VERSION,
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    };
  }

  private async renewLeases(): Promise<void> {
    const nodes = this.client.api(Node);
    const leases = this.client.api(Lease, LEASE_NAMESPACE);
    for (const name of this.nodes) {
      if (this.abort.signal.aborted) return;
      const renewTime = microNow();
      try {
        await leases.patch(name, { spec: { renewTime } });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        const node = await nodes.get(name);
        await leases.create({
          metadata: {
            name,
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata?.uid ?? '' }],
          },
          spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
        });
      }
    }
  }

  private observe(pod: PodObj): void {
    const node = pod.spec?.nodeName;
    if (node && this.nodeIndex.has(node)) this.queue.add(objectKey(pod));
  }

  private forgetPod(pod: PodObj): void {
    const uid = pod.metadata?.uid ?? '';
    this.ips.delete(uid);
    this.deletionSeen.delete(uid);
    this.crashes.delete(uid);
    this.options.runtime?.forget(uid);
  }

  private work(): Promise<void> {
    return runWorker(
      this.queue,
      this.abort.signal,
      async (k) => {
        const after = await this.reconcile(k);
        return after === undefined ? undefined : { requeueAfterMs: after };
      },
      {
        log: this.log,
        message: 'kubelet pod sync failed; retrying',
      },
    );
  }

  /** One pod: writes the status it should have; returns in how many ms to look again, if at all. */
  async reconcile(key: string): Promise<number | undefined> {
    const { namespace = '', name } = splitKey(key);
    const pod = this.pods.store.get(name, namespace);
    const node = pod?.spec?.nodeName;
    if (!pod || !node || !this.nodeIndex.has(node)) return undefined;
    const uid = pod.metadata?.uid ?? '';
    const pods = this.client.api(Pod, namespace);

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
    this.options.runtime?.observe(pod, status.containerStatuses as ObservedContainerStatus[]);
    if (!this.differs(pod.status as Obj | undefined, status)) return after;
    await pods.patchStatus(name, { status } as PodObj);
    return after;
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
    const hostIP = `172.18.0.${(this.nodeIndex.get(node) ?? 0) + 2}`;
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
      });
    return strip(current) !== strip(desired);
  }
}
