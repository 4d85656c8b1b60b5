/**
 * The simulated nodes: their Node objects (labels, taints, capacity, Ready conditions, addresses,
 * node info as a kubelet reports them) and their heartbeat Leases in `kube-node-lease`,
 * registered and renewed by a runnable of the built-in controllers' manager.
 */
import { createHash } from 'node:crypto';
import type { Client } from 'kubeloop/client';
import { isAlreadyExists, isNotFound, Lease, Node } from 'kubeloop/client';
import { type Runnable, untilAborted } from 'kubeloop/runtime';
import type { ControllerLog } from '../log.js';
import type { ProcessPodsOptions } from './process-pods.js';

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
  /**
   * Pods whose images this machine can run (`kubeloop.local/<name>` of the local image store,
   * or the images mapped here) run as local processes (see `process-pods.ts`); others are simulated.
   */
  processes?: ProcessPodsOptions;
}

type Obj = Record<string, unknown>;

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
/** A stable hex digest (machine and boot ids, container and image ids). */
export const hash = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Names of the simulated nodes. */
export function nodeNames(o: SimulatedNodesOptions): string[] {
  const prefix = o.namePrefix ?? 'kubeloop-node-';
  return Array.from({ length: o.count ?? 1 }, (_, i) => `${prefix}${i + 1}`);
}

function nodeObject(name: string, i: number, o: SimulatedNodesOptions): Node {
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
        ...o.labels,
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: {
      podCIDR: `10.244.${i}.0/24`,
      podCIDRs: [`10.244.${i}.0/24`],
      ...(o.taints && o.taints.length > 0 && { taints: o.taints }),
    },
  };
}

function nodeStatus(name: string, i: number, o: SimulatedNodesOptions): Obj {
  const capacity = { ...DEFAULT_CAPACITY, ...o.capacity };
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

/** Renews (or creates) each node's Lease, as the kubelet's heartbeat does. */
async function renewLeases(client: Client, names: readonly string[], signal: AbortSignal): Promise<void> {
  const nodes = client.api(Node);
  const leases = client.api(Lease, LEASE_NAMESPACE);
  for (const name of names) {
    if (signal.aborted) return;
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

/**
 * The node half of the kubelet, as a runnable of the manager: registers the nodes (Node and
 * status, then the first Leases) as the caches start — so that the control plane's readiness,
 * which waits for `registered`, covers it — then renews the Leases every
 * `heartbeatIntervalMs` until the manager stops. It writes with `client` (not the manager's
 * tracked client): nothing reads Leases back from the cache.
 */
export function nodeHeartbeat(
  client: Client,
  o: SimulatedNodesOptions,
  log: ControllerLog,
): Runnable & { readonly registered: Promise<void>; stop(): void } {
  const names = nodeNames(o);
  const stopping = new AbortController();
  let heartbeat: NodeJS.Timeout | undefined;
  let done: () => void = () => undefined;
  const registered = new Promise<void>((resolve) => {
    done = resolve;
  });
  const register = async () => {
    const nodes = client.api(Node);
    for (const [i, name] of names.entries()) {
      if (stopping.signal.aborted) return;
      try {
        await nodes.create(nodeObject(name, i, o));
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      if (stopping.signal.aborted) return;
      await nodes.patchStatus(name, { status: nodeStatus(name, i, o) } as Node);
    }
    await renewLeases(client, names, stopping.signal);
    if (stopping.signal.aborted) return;
    heartbeat = setInterval(() => {
      void renewLeases(client, names, stopping.signal).catch((err: unknown) => {
        if (!stopping.signal.aborted) log('warn', 'node lease renewal failed', { error: String(err) });
      });
    }, o.heartbeatIntervalMs ?? 10_000);
    heartbeat.unref();
  };
  const stop = () => {
    stopping.abort();
    clearInterval(heartbeat);
  };
  return {
    name: 'kubelet-nodes',
    needLeaderElection: false,
    registered,
    prepare() {
      register()
        .catch((err: unknown) => {
          if (!stopping.signal.aborted) log('error', 'node registration failed', { error: String(err) });
        })
        .finally(done);
    },
    async start({ signal }) {
      await untilAborted(signal);
      stop();
    },
    // Also called beside the manager: a manager stopped before its caches synced starts no
    // runnable, while the registration runs from its start.
    stop,
  };
}
