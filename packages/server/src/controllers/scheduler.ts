/**
 * The scheduler (kube-scheduler's default profile, filters only): binds pods that have no node
 * to a node that passes NodeUnschedulable, TaintToleration, NodeAffinity and NodeResourcesFit,
 * through the `pods/binding` subresource; marks the others `PodScheduled=False`/`Unschedulable`
 * with kube-scheduler's message; records `Scheduled` and `FailedScheduling` events.
 */
import { parseQuantity } from 'kubeloop/api';
import type { Client } from 'kubeloop/client';
import { isConflict, isNotFound, Node, Pod } from 'kubeloop/client';
import {
  type CacheReader,
  type ControllerDefinition,
  controller,
  defaultControllerRateLimiter,
  objectKey,
  type ReconcileRequest,
  type Runnable,
  untilAborted,
} from 'kubeloop/runtime';
import { ControllerEvents } from './events.js';
import type { ControllerLog } from './log.js';

type Requirement = { key: string; operator: string; values?: string[] };
type Taint = { key: string; value?: string; effect: string };
type Toleration = { key?: string; operator?: string; value?: string; effect?: string };

const DEFAULT_SCHEDULER = 'default-scheduler';
const NOT_READY_TAINT: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };
const NOT_HELPFUL = 'Preemption is not helpful for scheduling';
// Kubernetes' own text ends with a period, which the histogram keeps (`…incoming pod., 2 …`).
const NO_VICTIMS = 'No preemption victims found for incoming pod.';

/** A node's verdict for a pod: fits, or why not (and whether preemption could help). */
type Verdict = { fits: true } | { fits: false; reasons: string[]; resolvable: boolean };

/** Milli-units of a quantity (cpu in millicores, memory in thousandths of bytes: only compared). */
function milli(v: unknown): number {
  const q = parseQuantity(v);
  return q ? Number((q.num * 1000n) / q.den) : 0;
}

/** What a pod asks for (Kubernetes' `PodRequests`: containers summed, init containers maxed, plus overhead). */
export function podRequests(pod: Pod): Map<string, number> {
  const sum = new Map<string, number>();
  for (const c of pod.spec?.containers ?? [])
    for (const [r, v] of Object.entries(c.resources?.requests ?? {}))
      sum.set(r, (sum.get(r) ?? 0) + milli(v));
  for (const c of pod.spec?.initContainers ?? [])
    for (const [r, v] of Object.entries(c.resources?.requests ?? {}))
      sum.set(r, Math.max(sum.get(r) ?? 0, milli(v)));
  for (const [r, v] of Object.entries(pod.spec?.overhead ?? {})) sum.set(r, (sum.get(r) ?? 0) + milli(v));
  return sum;
}

function matchesRequirement(labels: Record<string, string>, r: Requirement): boolean {
  const has = Object.hasOwn(labels, r.key);
  const v = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(v ?? '');
    case 'NotIn':
      return !has || !values.includes(v ?? '');
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      const n = Number.parseInt(v ?? '', 10);
      const bound = Number.parseInt(values[0] ?? '', 10);
      if (!has || Number.isNaN(n) || Number.isNaN(bound)) return false;
      return r.operator === 'Gt' ? n > bound : n < bound;
    }
    default:
      return false;
  }
}

/** `nodeSelector` and required node affinity (terms ORed, requirements ANDed). */
export function matchesNodeAffinity(pod: Pod, node: Node): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  const fields = { 'metadata.name': node.metadata?.name ?? '' };
  return (required.nodeSelectorTerms ?? []).some((term) => {
    const exprs = term.matchExpressions ?? [];
    const fieldExprs = term.matchFields ?? [];
    // An empty term matches no node.
    if (exprs.length === 0 && fieldExprs.length === 0) return false;
    return (
      exprs.every((r) => matchesRequirement(labels, r)) &&
      fieldExprs.every((r) => matchesRequirement(fields, r))
    );
  });
}

function tolerates(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.operator === 'Exists') return !t.key || t.key === taint.key;
    return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
  });
}

const isReady = (node: Node): boolean =>
  (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const terminated = (pod: Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/**
 * kube-scheduler's unschedulable message, e.g. `0/3 nodes are available: 3 node(s) didn't
 * match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not
 * helpful for scheduling.`
 */
export function unschedulableMessage(verdicts: readonly Verdict[]): string {
  const n = verdicts.length;
  if (n === 0) return 'no nodes available to schedule pods';
  const histogram = (items: string[]) => {
    const counts = new Map<string, number>();
    for (const i of items) counts.set(i, (counts.get(i) ?? 0) + 1);
    return [...counts].map(([reason, count]) => `${count} ${reason}`).sort();
  };
  const failed = verdicts.filter((v): v is Extract<Verdict, { fits: false }> => !v.fits);
  const filter = histogram(failed.flatMap((v) => v.reasons));
  const preemption = histogram(failed.map((v) => (v.resolvable ? NO_VICTIMS : NOT_HELPFUL)));
  return `0/${n} nodes are available: ${filter.join(', ')}. preemption: 0/${n} nodes are available: ${preemption.join(', ')}.`;
}

/** The field of the manager's pod cache the scheduler counts a node's pods by. */
export const NODE_NAME_FIELD = 'spec.nodeName';

/** A pod's node, for the {@link NODE_NAME_FIELD} index (unbound pods are not indexed). */
export const podNodeName = (p: Pod): string | undefined => p.spec?.nodeName || undefined;

const bound = (p: Pod): boolean => Boolean(p.spec?.nodeName);

/** Whether the scheduler should place a pod: no node yet, not going away, and ours. */
function pending(p: Pod): boolean {
  return (
    !p.spec?.nodeName &&
    !p.metadata?.deletionTimestamp &&
    !terminated(p) &&
    (p.spec?.schedulerName ?? DEFAULT_SCHEDULER) === DEFAULT_SCHEDULER
  );
}

/**
 * The scheduler as a controller of pods on the manager's shared cache: a pod waiting for a node
 * is reconciled ({@link place}); a node that appears or changes, and a bound pod that ends or
 * goes, frees or adds room, so the pods found unschedulable are tried again (kube-scheduler's
 * unschedulable queue, moved on cluster events). With it, the runnable that flushes its Events
 * when the manager stops.
 */
export function schedulerController(
  client: Client,
  options: { log?: ControllerLog } = {},
): [ControllerDefinition<Pod>, Runnable] {
  const events = new ControllerEvents(client, DEFAULT_SCHEDULER, options.log ?? (() => undefined));
  /** Pods bound but not yet seen bound in the cache: their requests count on their node (by UID). */
  const assumed = new Map<string, { node: string; pod: Pod }>();
  /** Pods no node fit when last tried (by key), tried again when room may have appeared. */
  const unschedulable = new Set<string>();
  const retry = (): ReconcileRequest[] =>
    [...unschedulable].map((key) => {
      const slash = key.indexOf('/');
      return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
    });

  /** Forgets assumed pods the cache now shows bound, or that are gone. */
  const settleAssumed = async (cache: CacheReader) => {
    for (const [uid, a] of assumed) {
      const current = await cache.get(Pod, a.pod.metadata?.name ?? '', a.pod.metadata?.namespace ?? '');
      if (!current || current.metadata?.uid !== uid || bound(current)) assumed.delete(uid);
    }
  };

  const definition = controller(Pod)
    .named('scheduler')
    .withOptions({ rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }) })
    .indexField(Pod, NODE_NAME_FIELD, podNodeName)
    .withPredicates({
      create: pending,
      // A pod found unschedulable and since bound or ending leaves the retry set.
      update: (_old, p) => pending(p) || unschedulable.has(objectKey(p)),
      // Only to forget an unschedulable pod that is gone.
      delete: (p) => unschedulable.has(objectKey(p)),
    })
    .watches(Node, retry, { predicates: [{ delete: () => false }] })
    .watches(Pod, retry, {
      predicates: [
        {
          create: (p) => bound(p) && terminated(p),
          update: (_old, p) => bound(p) && terminated(p),
          delete: bound,
        },
      ],
    })
    .onGone((req) => {
      unschedulable.delete(req.namespace ? `${req.namespace}/${req.name}` : req.name);
    })
    .reconcile(async (pod, { client: api, cache }) => {
      const key = objectKey(pod);
      if (!pending(pod)) {
        unschedulable.delete(key);
        return;
      }
      await settleAssumed(cache);
      if (assumed.has(pod.metadata?.uid ?? '')) return;
      // Retried from now on: a node or pod event during the attempt must bring it back (the
      // queue holds it until this attempt ends), as kube-scheduler moves a pod it is scheduling.
      unschedulable.add(key);
      if (await place(pod, api, cache, assumed, events)) unschedulable.delete(key);
    });

  const flush: Runnable = {
    name: 'scheduler-events',
    needLeaderElection: false,
    async start({ signal }) {
      await untilAborted(signal);
      await events.close();
    },
  };
  return [definition, flush];
}

/**
 * One pod: binds it to a node that fits, or says why none does (`PodScheduled=False` and a
 * `FailedScheduling` event). Returns whether a node fit.
 */
async function place(
  pod: Pod,
  client: Client,
  cache: CacheReader,
  assumed: Map<string, { node: string; pod: Pod }>,
  events: ControllerEvents,
): Promise<boolean> {
  const namespace = pod.metadata?.namespace ?? '';
  const name = pod.metadata?.name ?? '';
  const nodes = (await cache.list(Node)).sort((a, b) =>
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
  /** Pods that count on a node: bound and not terminated, plus those bound a moment ago. */
  const podsOn = async (node: string): Promise<Pod[]> => {
    const out = (await cache.list(Pod, { fieldSelector: { [NODE_NAME_FIELD]: node } })).filter(
      (p) => !terminated(p),
    );
    for (const a of assumed.values()) if (a.node === node) out.push(a.pod);
    return out;
  };
  const requests = podRequests(pod);
  const verdicts: Verdict[] = [];
  let best: { node: Node; load: number } | undefined;
  for (const node of nodes) {
    const onNode = await podsOn(node.metadata?.name ?? '');
    const v = check(pod, requests, node, onNode);
    verdicts.push(v);
    if (!v.fits) continue;
    const load = onNode.length;
    if (!best || load < best.load) best = { node, load };
  }
  if (best) {
    const nodeName = best.node.metadata?.name ?? '';
    try {
      await client.request('POST', `/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace, uid: pod.metadata?.uid },
          target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
        },
      });
      assumed.set(pod.metadata?.uid ?? '', { node: nodeName, pod });
      events.event(
        Pod,
        pod,
        'Normal',
        'Scheduled',
        `Successfully assigned ${namespace}/${name} to ${nodeName}`,
      );
    } catch (err) {
      // Gone, or bound by someone else meanwhile: nothing left to do.
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
    return true;
  }
  const message = unschedulableMessage(verdicts);
  const current = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (current?.status === 'False' && current.reason === 'Unschedulable' && current.message === message)
    return false;
  const others = (pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
  events.event(Pod, pod, 'Warning', 'FailedScheduling', message);
  try {
    await client.api(Pod, namespace).patchStatus(
      name,
      [
        { op: 'test', path: '/metadata/uid', value: pod.metadata?.uid },
        {
          op: 'replace',
          path: '/status/conditions',
          value: [
            ...others,
            {
              type: 'PodScheduled',
              status: 'False',
              lastProbeTime: null,
              lastTransitionTime:
                current?.status === 'False'
                  ? current.lastTransitionTime
                  : `${new Date().toISOString().slice(0, 19)}Z`,
              reason: 'Unschedulable',
              message,
            },
          ],
        },
      ],
      { type: 'json' },
    );
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  return false;
}

/** The filters of the default profile, in its order; the first that fails decides. */
function check(pod: Pod, requests: Map<string, number>, node: Node, onNode: readonly Pod[]): Verdict {
  const tolerations = (pod.spec?.tolerations ?? []) as Toleration[];
  if (node.spec?.unschedulable && !tolerates(tolerations, UNSCHEDULABLE_TAINT))
    return { fits: false, reasons: ['node(s) were unschedulable'], resolvable: false };
  const taints = [...((node.spec?.taints ?? []) as Taint[]), ...(isReady(node) ? [] : [NOT_READY_TAINT])];
  const untolerated = taints.find(
    (t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerates(tolerations, t),
  );
  if (untolerated)
    return {
      fits: false,
      reasons: [`node(s) had untolerated taint {${untolerated.key}: ${untolerated.value ?? ''}}`],
      resolvable: false,
    };
  if (!matchesNodeAffinity(pod, node))
    return {
      fits: false,
      reasons: ["node(s) didn't match Pod's node affinity/selector"],
      resolvable: false,
    };

  const allocatable = node.status?.allocatable ?? {};
  const used = new Map<string, number>();
  for (const p of onNode) for (const [r, v] of podRequests(p)) used.set(r, (used.get(r) ?? 0) + v);
  const reasons: string[] = [];
  if (onNode.length + 1 > milli(allocatable.pods ?? '110') / 1000) reasons.push('Too many pods');
  for (const [r, v] of requests) {
    if (v === 0) continue;
    const free = milli(allocatable[r] ?? '0') - (used.get(r) ?? 0);
    if (v > free) reasons.push(`Insufficient ${r}`);
  }
  return reasons.length > 0 ? { fits: false, reasons, resolvable: true } : { fits: true };
}
