/**
 * `metrics.k8s.io/v1beta1` as metrics-server serves it (PodMetrics and NodeMetrics, get and list),
 * from the simulated kubelet's usage figures, so that `kubectl top` and the HorizontalPodAutoscaler
 * work. A pod's usage is its `kubeloop.dev/simulate-cpu` / `kubeloop.dev/simulate-memory`
 * annotation (the pod's total, shared among its containers), else a small figure below its
 * requests; a node's is its pods' plus what the node itself uses.
 */
import { matchesLabels, parseLabelSelector } from 'kubeloop/api';
import { SIMULATE_CPU_ANNOTATION, SIMULATE_MEMORY_ANNOTATION } from '../controllers/simulate.js';
import { builtinBehaviours, defaultBehaviour } from '../registry/builtin-kinds.js';
import type { ResourceType, VirtualContext, VirtualResource } from '../registry/types.js';
import { collectionPrefix, type Store } from '../storage/store.js';

interface PodLike {
  metadata?: {
    uid?: string;
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec?: {
    nodeName?: string;
    containers?: { name: string; resources?: { requests?: Record<string, string> } }[];
  };
  status?: { phase?: string };
}

const UNITS: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};
/** A quantity as a plain number of units; undefined when malformed. */
function amount(q: string | undefined): number | undefined {
  const m = q === undefined ? null : /^(\d+(?:\.\d+)?)(n|u|m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q.trim());
  return m ? Number(m[1]) * (UNITS[m[2] ?? ''] ?? 1) : undefined;
}

/** What a container without an annotation uses: a tenth of its request, or a small constant. */
const IDLE = { cpu: 0.002, memory: 8 * 1024 ** 2 } as const;
/** What a simulated node uses beside its pods (the kubelet, the runtime, the system). */
const NODE_OVERHEAD = { cpu: 0.1, memory: 512 * 1024 ** 2 } as const;

/** Per-container usage in cores and bytes. */
export type ContainerUsage = { name: string; cpu: number; memory: number };

/**
 * Where real usage comes from: the kubelet's reading of a process-backed pod's processes
 * (undefined for a simulated pod, whose usage is made up as below).
 */
export type UsageSource = (pod: { metadata?: { uid?: string } }) => ContainerUsage[] | undefined;

/** Per-container usage of a running pod, in cores and bytes. */
export function podUsage(pod: PodLike, real?: UsageSource): ContainerUsage[] {
  const measured = real?.(pod);
  if (measured) return measured;
  const containers = pod.spec?.containers ?? [];
  const ann = pod.metadata?.annotations ?? {};
  const share = (key: string) => {
    const total = amount(ann[key]);
    return total === undefined ? undefined : total / Math.max(1, containers.length);
  };
  const cpu = share(SIMULATE_CPU_ANNOTATION);
  const memory = share(SIMULATE_MEMORY_ANNOTATION);
  return containers.map((c) => {
    const req = c.resources?.requests ?? {};
    const rc = amount(req.cpu);
    const rm = amount(req.memory);
    return {
      name: c.name,
      cpu: cpu ?? (rc !== undefined ? rc / 10 : IDLE.cpu),
      memory: memory ?? (rm !== undefined ? Math.floor(rm / 10) : IDLE.memory),
    };
  });
}

const cpuText = (cores: number) => `${Math.round(cores * 1e9)}n`;
const memoryText = (bytes: number) => `${Math.ceil(bytes / 1024)}Ki`;
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Pods metrics-server reports: running on a node, not being deleted. */
function runningPods(store: Store, namespace?: string): PodLike[] {
  return store
    .list(collectionPrefix('', 'pods', namespace))
    .items.map((i) => i.object as PodLike)
    .filter((p) => p.status?.phase === 'Running' && p.spec?.nodeName && !p.metadata?.deletionTimestamp);
}

function selected(ctx: VirtualContext, labels: Record<string, string> | undefined): boolean {
  const s = ctx.labelSelector;
  if (!s) return true;
  return matchesLabels(parseLabelSelector(s), labels ?? {});
}

function podMetrics(store: Store, real?: UsageSource): VirtualResource {
  return {
    list: (ctx) =>
      runningPods(store, ctx.namespace)
        .filter((p) => selected(ctx, p.metadata?.labels))
        .map((p) => {
          const t = now();
          return {
            kind: 'PodMetrics',
            apiVersion: 'metrics.k8s.io/v1beta1',
            metadata: {
              name: p.metadata?.name,
              namespace: p.metadata?.namespace,
              creationTimestamp: t,
              ...(p.metadata?.labels && { labels: p.metadata.labels }),
            },
            timestamp: t,
            window: '15s',
            containers: podUsage(p, real).map((c) => ({
              name: c.name,
              usage: { cpu: cpuText(c.cpu), memory: memoryText(c.memory) },
            })),
          };
        }),
  };
}

function nodeMetrics(store: Store, real?: UsageSource): VirtualResource {
  return {
    list: (ctx) => {
      const pods = runningPods(store);
      return store
        .list(collectionPrefix('', 'nodes'))
        .items.map((i) => i.object as { metadata?: { name?: string; labels?: Record<string, string> } })
        .filter((n) => selected(ctx, n.metadata?.labels))
        .map((n) => {
          let cpu = NODE_OVERHEAD.cpu;
          let memory = NODE_OVERHEAD.memory;
          for (const p of pods)
            if (p.spec?.nodeName === n.metadata?.name)
              for (const c of podUsage(p, real)) {
                cpu += c.cpu;
                memory += c.memory;
              }
          const t = now();
          return {
            kind: 'NodeMetrics',
            apiVersion: 'metrics.k8s.io/v1beta1',
            metadata: {
              name: n.metadata?.name,
              creationTimestamp: t,
              ...(n.metadata?.labels && { labels: n.metadata.labels }),
            },
            timestamp: t,
            window: '15s',
            usage: { cpu: cpuText(cpu), memory: memoryText(memory) },
          };
        });
    },
  };
}

function metricsKind(
  resource: string,
  kind: string,
  namespaced: boolean,
  virtual: VirtualResource,
): ResourceType {
  return {
    group: 'metrics.k8s.io',
    version: 'v1beta1',
    resource,
    kind,
    listKind: `${kind}List`,
    singular: '',
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ['get', 'list'],
    subresources: {},
    generation: false,
    nameValidation: 'subdomain',
    allowUnconditionalUpdate: false,
    returnDeletedObject: false,
    behaviour: builtinBehaviours[`metrics.k8s.io/${resource}`] ?? defaultBehaviour,
    virtual,
  };
}

/** The resources of `metrics.k8s.io/v1beta1`, answered from `store`. */
export function metricsKinds(store: Store, real?: UsageSource): ResourceType[] {
  return [
    metricsKind('nodes', 'NodeMetrics', false, nodeMetrics(store, real)),
    metricsKind('pods', 'PodMetrics', true, podMetrics(store, real)),
  ];
}
