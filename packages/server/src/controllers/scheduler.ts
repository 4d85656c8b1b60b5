/**
 * The scheduler (kube-scheduler's default profile, filters only): binds pods that have no node
 * to a node that passes NodeUnschedulable, TaintToleration, NodeAffinity and NodeResourcesFit,
 * through the `pods/binding` subresource; marks the others `PodScheduled=False`/`Unschedulable`
 * with kube-scheduler's message; records `Scheduled` and `FailedScheduling` events.
 */
import { setMaxListeners } from 'node:events';
import { parseQuantity } from 'kubeloop/api';
import type { Client } from 'kubeloop/client';
import { isConflict, isNotFound, Node, Pod } from 'kubeloop/client';
import { defaultControllerRateLimiter, Informer, objectKey, splitKey, WorkQueue } from 'kubeloop/runtime';
import { ControllerEvents } from './events.js';
import type { ControllerLog } from './log.js';
import { runWorker } from './worker.js';

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

/** The scheduler: informers on pods and nodes, a queue of pods to place, {@link Scheduler.reconcile}. */
export class Scheduler {
  private readonly pods: Informer<Pod>;
  private readonly nodes: Informer<Node>;
  private readonly queue = new WorkQueue<string>({
    name: 'scheduler',
    rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
  });
  private readonly abort = new AbortController();
  /** Pods bound but not yet seen bound in the cache: their requests count on their node (by UID). */
  private readonly assumed = new Map<string, { node: string; pod: Pod }>();
  private worker: Promise<void> | undefined;
  private readonly log: ControllerLog;
  private readonly events: ControllerEvents;

  constructor(
    private readonly client: Client,
    options: { log?: ControllerLog } = {},
  ) {
    this.log = options.log ?? (() => undefined);
    this.events = new ControllerEvents(client, DEFAULT_SCHEDULER, this.log);
    setMaxListeners(0, this.abort.signal);
    this.pods = new Informer(client.api(Pod, ''), {
      indexers: { node: (p) => p.spec?.nodeName || undefined },
    });
    this.nodes = new Informer(client.api(Node), {});
    this.pods.addEventHandler({
      onAdd: (p) => this.observe(p),
      onUpdate: (_o, p) => this.observe(p),
      // A pod gone frees room: pods waiting for some may fit now.
      onDelete: (p) => {
        this.assumed.delete(p.metadata?.uid ?? '');
        if (p.spec?.nodeName) this.retryUnschedulable();
      },
    });
    this.nodes.addEventHandler({
      onAdd: () => this.retryUnschedulable(),
      onUpdate: () => this.retryUnschedulable(),
    });
  }

  start(): void {
    this.pods.start(this.abort.signal);
    this.nodes.start(this.abort.signal);
    this.worker = this.work();
  }

  /** Resolves once the controller's caches hold their first lists (the test environment waits for it). */
  async waitForSync(): Promise<void> {
    await Promise.all([this.pods.waitForSync(), this.nodes.waitForSync()]);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    const closing = this.events.close();
    await this.queue.shutdown();
    await this.worker;
    await Promise.all([this.pods.stop(), this.nodes.stop(), closing]);
  }

  private pending(p: Pod): boolean {
    return (
      !p.spec?.nodeName &&
      !p.metadata?.deletionTimestamp &&
      !terminated(p) &&
      (p.spec?.schedulerName ?? DEFAULT_SCHEDULER) === DEFAULT_SCHEDULER
    );
  }

  private observe(p: Pod): void {
    if (p.spec?.nodeName) {
      this.assumed.delete(p.metadata?.uid ?? '');
      if (terminated(p)) this.retryUnschedulable();
      return;
    }
    if (this.pending(p)) this.queue.add(objectKey(p));
  }

  private retryUnschedulable(): void {
    for (const p of this.pods.store.list()) if (this.pending(p)) this.queue.add(objectKey(p));
  }

  private work(): Promise<void> {
    return runWorker(this.queue, this.abort.signal, (k) => this.reconcile(k), {
      log: this.log,
      message: 'scheduling failed; retrying',
    });
  }

  /** One pod: binds it to a node that fits, or says why none does. */
  async reconcile(key: string): Promise<void> {
    // Wait for both caches: deciding on a partial view of nodes or pods would be wrong.
    if (!this.nodes.hasSynced || !this.pods.hasSynced) {
      await Promise.all([this.nodes.waitForSync(), this.pods.waitForSync()]);
    }
    const { namespace = '', name } = splitKey(key);
    const pod = this.pods.store.get(name, namespace);
    if (!pod || !this.pending(pod) || this.assumed.has(pod.metadata?.uid ?? '')) return;
    const nodes = this.nodes.store
      .list()
      .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    const requests = podRequests(pod);
    const verdicts: Verdict[] = [];
    let best: { node: Node; load: number } | undefined;
    for (const node of nodes) {
      const v = this.check(pod, requests, node);
      verdicts.push(v);
      if (!v.fits) continue;
      const load = this.podsOn(node.metadata?.name ?? '').length;
      if (!best || load < best.load) best = { node, load };
    }
    if (best) {
      const nodeName = best.node.metadata?.name ?? '';
      try {
        await this.client.request('POST', `/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
          body: {
            apiVersion: 'v1',
            kind: 'Binding',
            metadata: { name, namespace, uid: pod.metadata?.uid },
            target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
          },
        });
        this.assumed.set(pod.metadata?.uid ?? '', { node: nodeName, pod });
        this.events.event(
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
      return;
    }
    const message = unschedulableMessage(verdicts);
    const current = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (current?.status === 'False' && current.reason === 'Unschedulable' && current.message === message)
      return;
    const others = (pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
    this.events.event(Pod, pod, 'Warning', 'FailedScheduling', message);
    try {
      await this.client.api(Pod, namespace).patchStatus(
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
  }

  /** Pods that count on a node: bound and not terminated, plus those bound a moment ago. */
  private podsOn(node: string): Pod[] {
    const out = this.pods.store.byIndex('node', node).filter((p) => !terminated(p));
    for (const a of this.assumed.values()) if (a.node === node) out.push(a.pod);
    return out;
  }

  /** The filters of the default profile, in its order; the first that fails decides. */
  private check(pod: Pod, requests: Map<string, number>, node: Node): Verdict {
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
    const onNode = this.podsOn(node.metadata?.name ?? '');
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
}
