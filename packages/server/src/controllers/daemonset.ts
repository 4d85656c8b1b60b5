/**
 * The DaemonSet controller of kube-controller-manager: one pod of a DaemonSet's template on every
 * eligible node, pinned to its node by required node affinity (as Kubernetes does since 1.12) so
 * that the scheduler binds it; rolled out node by node when the template changes.
 */
import { labelSelectorFromObject } from 'kubeloop/api';
import { DaemonSet, isAlreadyExists, isConflict, isNotFound, Node, Pod } from 'kubeloop/client';
import {
  type ControllerDefinition,
  controller,
  defaultControllerRateLimiter,
  type Predicate,
  type ReconcileResult,
} from 'kubeloop/runtime';
import { claim, controllerRefTo } from './claim.js';
import { podTemplateHash } from './deployment.js';
import type { ControllerEvents } from './events.js';
import {
  ControllerRevision,
  deleteRevision,
  maxRevision,
  REVISION_HASH_LABEL,
  revisionHolds,
  revisionsApi,
  setRevisionNumber,
  sortRevisions,
  templatePatch,
} from './history.js';
import { ObjectSync } from './object-sync.js';
import { CONTROLLER_UID_FIELD, controllerUid } from './owned-pods.js';
import { podReady as ready, syncPods } from './pods.js';
import { matchesNodeAffinity } from './scheduler.js';
import { withStatus } from './status-write.js';

/**
 * The annotation in which the API server keeps a DaemonSet's template generation
 * (`extensions/v1beta1`'s `templateGeneration`; Kubernetes defines it as
 * `apps.DeprecatedTemplateGeneration` in pkg/apis/apps/types.go, and its DaemonSet strategy bumps it).
 */
const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';
const REVISION_LABEL = REVISION_HASH_LABEL;
const GENERATION_LABEL = 'pod-template-generation';

type Taint = { key: string; value?: string; effect: string };
type Toleration = { key?: string; operator?: string; value?: string; effect?: string };

/**
 * The tolerations Kubernetes' DaemonSet controller adds to every daemon pod
 * (`AddOrUpdateDaemonPodTolerations`): daemons keep running on unhealthy or cordoned nodes.
 */
export function daemonPodTolerations(hostNetwork: boolean): Toleration[] {
  const t = (key: string, effect: string): Toleration => ({
    key: `node.kubernetes.io/${key}`,
    operator: 'Exists',
    effect,
  });
  return [
    t('not-ready', 'NoExecute'),
    t('unreachable', 'NoExecute'),
    t('disk-pressure', 'NoSchedule'),
    t('memory-pressure', 'NoSchedule'),
    t('pid-pressure', 'NoSchedule'),
    t('unschedulable', 'NoSchedule'),
    ...(hostNetwork ? [t('network-unavailable', 'NoSchedule')] : []),
  ];
}

function tolerates(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.operator === 'Exists') return !t.key || t.key === taint.key;
    return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
  });
}

const sameToleration = (a: Toleration, b: Toleration) =>
  a.key === b.key && (a.operator ?? 'Equal') === (b.operator ?? 'Equal') && a.effect === b.effect;

function withDaemonTolerations(
  existing: readonly Toleration[] | undefined,
  hostNetwork: boolean,
): Toleration[] {
  const out = [...(existing ?? [])];
  for (const t of daemonPodTolerations(hostNetwork)) if (!out.some((o) => sameToleration(o, t))) out.push(t);
  return out;
}

const terminating = (p: Pod) => Boolean(p.metadata?.deletionTimestamp);
const created = (p: Pod) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;

/** The node a daemon pod is for: its `nodeName`, or before binding, the node of its affinity (`GetTargetNodeName`). */
export function targetNodeName(p: Pod): string | undefined {
  if (p.spec?.nodeName) return p.spec.nodeName;
  const terms =
    p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms)
    for (const f of term.matchFields ?? [])
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
  return undefined;
}

/**
 * Whether a DaemonSet's pod should run on a node, and whether an existing one may stay
 * (`NodeShouldRunDaemonPod`): the node must match the template's node selector and required
 * affinity, and every NoSchedule/NoExecute taint be tolerated — an existing pod only needs
 * NoExecute taints tolerated.
 */
export function nodeShouldRunDaemonPod(
  ds: DaemonSet,
  node: Node,
): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const spec = ds.spec?.template?.spec;
  const probe: Pod = { spec: { containers: [], ...(spec ?? {}) } };
  if (!matchesNodeAffinity(probe, node)) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = withDaemonTolerations(
    spec?.tolerations as Toleration[] | undefined,
    !!spec?.hostNetwork,
  );
  const taints = (node.spec?.taints ?? []) as Taint[];
  const untolerated = (effect: string) =>
    taints.some((t) => t.effect === effect && !tolerates(tolerations, t));
  const noExecute = untolerated('NoExecute');
  return {
    shouldRun: !noExecute && !untolerated('NoSchedule'),
    shouldContinueRunning: !noExecute,
  };
}

/** `maxUnavailable` (an int or a percentage, rounded up) of `desired`; at least 1, as Kubernetes with maxSurge 0. */
function scaled(v: number | string | undefined, desired: number, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) return Number.parseInt(v, 10) || fallback;
  return Math.ceil((Number(m[1]) * desired) / 100);
}

/** Options of {@link daemonSetController}. */
export interface DaemonSetControllerOptions {
  /** Records the core/v1 Events, as `daemonset-controller`. */
  events: ControllerEvents;
}

/** Node changes that may change where daemons run: labels, taints and the rest of the spec (not status). */
const nodePlacementChanged: Predicate<Node> = {
  update: (o, n) =>
    JSON.stringify([o.metadata?.labels, o.spec]) !== JSON.stringify([n.metadata?.labels, n.spec]),
};

/**
 * The DaemonSet controller (`daemonset`): owns its pods and ControllerRevisions (a change of one
 * reconciles its DaemonSet); a node added, deleted, relabelled or retainted reconciles every
 * DaemonSet. Reads the set's pods by controller UID from the manager's one Pod cache.
 *
 * @example
 * ```ts
 * manager.add(daemonSetController({ events: new ControllerEvents(client, 'daemonset-controller') }));
 * ```
 */
export function daemonSetController(options: DaemonSetControllerOptions): ControllerDefinition<DaemonSet> {
  return (
    controller(DaemonSet)
      .named('daemonset')
      .withOptions({
        maxConcurrentReconciles: 2,
        rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
      })
      .owns(Pod)
      .owns(ControllerRevision)
      // Any node change that may move daemons concerns every DaemonSet (`addNode`, `updateNode`, `deleteNode`).
      .watches(
        Node,
        (_node, cache) =>
          cache
            .list(DaemonSet)
            .map((ds) => ({ namespace: ds.metadata?.namespace ?? '', name: ds.metadata?.name ?? '' })),
        { predicates: [nodePlacementChanged] },
      )
      .indexField(Pod, CONTROLLER_UID_FIELD, controllerUid)
      .reconcile(async (ds, ctx): Promise<ReconcileResult> => {
        try {
          await new DaemonSetSync(ctx, options.events).sync(ds);
        } catch (err) {
          // A conflict is a race the next try resolves: retried without a complaint in the log.
          if (isConflict(err)) return { requeue: true };
          throw err;
        }
        return undefined;
      })
  );
}

/** One sync of one DaemonSet, with the reconcile's client (writes tracked) and cache. */
class DaemonSetSync extends ObjectSync {
  /** The DaemonSet's pods (terminating ones too), from the shared Pod cache's controller index. */
  private pods(ds: DaemonSet): Promise<Pod[]> {
    return this.cache.list(Pod, {
      namespace: ds.metadata?.namespace ?? '',
      fieldSelector: { [CONTROLLER_UID_FIELD]: ds.metadata?.uid ?? '' },
    });
  }

  /**
   * One DaemonSet (`syncDaemonSet`): its history brought up to date, pods created and deleted node
   * by node, template changes rolled out, old revisions beyond the limit removed, its status.
   * The cache reflects every pod this controller created or deleted before (the manager's
   * read-your-writes), which Kubernetes' expectations guard against.
   */
  async sync(ds: DaemonSet): Promise<void> {
    if (ds.metadata?.deletionTimestamp) return;
    const { cur, old } = await this.constructHistory(ds);
    const hash =
      cur.metadata?.labels?.[REVISION_LABEL] ??
      podTemplateHash(ds.spec?.template, ds.status?.collisionCount ?? 0);
    // The template generation (from its annotation, as util.GetTemplateGeneration reads it).
    const annotated = Number(ds.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION] ?? Number.NaN);
    const generation = Number.isInteger(annotated) ? annotated : undefined;
    const owned = (await this.pods(ds)).filter((p) => !terminating(p));
    const byNode = new Map<string, Pod[]>();
    for (const p of owned) {
      const n = targetNodeName(p) ?? '';
      byNode.set(n, [...(byNode.get(n) ?? []), p]);
    }
    for (const list of byNode.values()) list.sort((a, b) => created(a) - created(b));
    const nodes = await this.cache.list(Node);
    const verdicts = new Map(nodes.map((n) => [n.metadata?.name ?? '', nodeShouldRunDaemonPod(ds, n)]));
    const isUpdated = (p: Pod) => p.metadata?.labels?.[REVISION_LABEL] === hash;

    const toCreate: string[] = [];
    const toDelete: Pod[] = [];
    for (const [node, v] of verdicts) {
      const pods = byNode.get(node) ?? [];
      if (v.shouldRun && pods.length === 0) toCreate.push(node);
      else if (!v.shouldContinueRunning) toDelete.push(...pods);
      else {
        // Failed daemons are replaced; duplicates (a race) are trimmed to the oldest.
        const failed = pods.filter((p) => p.status?.phase === 'Failed');
        for (const p of failed)
          this.events.event(
            DaemonSet,
            ds,
            'Warning',
            'FailedDaemonPod',
            `Found failed daemon pod ${p.metadata?.namespace}/${p.metadata?.name} on node ${node}, will try to kill it`,
          );
        toDelete.push(...failed);
        const alive = pods.filter((p) => p.status?.phase !== 'Failed');
        if (alive.length > 1) toDelete.push(...alive.slice(1));
        if (v.shouldRun && alive.length === 0) toCreate.push(node);
      }
    }
    // Pods on nodes that no longer exist.
    for (const [node, pods] of byNode) if (!verdicts.has(node)) toDelete.push(...pods);

    if (toCreate.length === 0 && toDelete.length === 0 && ds.spec?.updateStrategy?.type !== 'OnDelete')
      toDelete.push(...this.rollingUpdateVictims(ds, verdicts, byNode, isUpdated));

    await syncPods(
      this.client,
      this.events,
      DaemonSet,
      ds,
      toCreate.map((node) => this.podFor(ds, node, hash, generation)),
      toDelete,
    );
    await this.cleanupHistory(ds, old, owned);
    await this.writeStatus(ds, verdicts, byNode, isUpdated);
  }

  /**
   * `constructHistory`: the DaemonSet's revisions (orphans that match its selector adopted), the
   * one of its current template (created, or moved to the newest revision number when an older
   * one matches again, as after `kubectl rollout undo`) and the others.
   */
  private async constructHistory(
    ds: DaemonSet,
  ): Promise<{ cur: ControllerRevision; old: ControllerRevision[] }> {
    const namespace = ds.metadata?.namespace ?? '';
    const api = revisionsApi(this.client, namespace);
    const histories = await claim(
      {
        owner: ds,
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        selector: labelSelectorFromObject(ds.spec?.selector),
      },
      await this.cache.list(ControllerRevision, { namespace }),
      api,
    );
    const data = templatePatch(ds.spec?.template);
    const current: ControllerRevision[] = [];
    const old: ControllerRevision[] = [];
    for (let h of histories) {
      // Revisions of old controllers lack the hash label: their name stands for it.
      if (h.metadata?.labels?.[REVISION_LABEL] === undefined)
        h = await api.patch(h.metadata?.name ?? '', {
          metadata: { labels: { [REVISION_LABEL]: h.metadata?.name ?? '' } },
        });
      (revisionHolds(h, data) ? current : old).push(h);
    }
    const currRevision = maxRevision(old) + 1;
    let cur: ControllerRevision;
    if (current.length === 0) cur = await this.snapshot(ds, data, currRevision);
    else {
      cur = await this.dedupCurHistories(ds, current);
      if ((cur.revision ?? 0) < currRevision) cur = await setRevisionNumber(api, cur, currRevision);
    }
    return { cur, old };
  }

  /** `snapshot`: a new revision of the DaemonSet's template, named after the template's hash. */
  private async snapshot(ds: DaemonSet, data: unknown, revision: number): Promise<ControllerRevision> {
    const namespace = ds.metadata?.namespace ?? '';
    const api = revisionsApi(this.client, namespace);
    const hash = podTemplateHash(ds.spec?.template, ds.status?.collisionCount ?? 0);
    const name = `${ds.metadata?.name}-${hash}`;
    try {
      return await api.create({
        metadata: {
          name,
          labels: { ...ds.spec?.template?.metadata?.labels, [REVISION_LABEL]: hash },
          ...(ds.metadata?.annotations && { annotations: ds.metadata.annotations }),
          ownerReferences: [controllerRefTo(ds, 'DaemonSet')],
        },
        data,
        revision,
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const existing = await api.get(name);
    if (revisionHolds(existing, data)) return existing;
    // Another template took the name: a new collision count gives a new hash (on the next sync).
    const fresh = await this.client.api(DaemonSet, namespace).get(ds.metadata?.name ?? '');
    const collisionCount = (fresh.status?.collisionCount ?? 0) + 1;
    await this.client.api(DaemonSet, namespace).updateStatus(withStatus(fresh, { collisionCount }));
    throw new Error(
      `hash collision for DaemonSet ${namespace}/${ds.metadata?.name}: revision ${name} exists`,
    );
  }

  /** `dedupCurHistories`: of several revisions of the current template, the newest stays; pods move to it. */
  private async dedupCurHistories(ds: DaemonSet, current: ControllerRevision[]): Promise<ControllerRevision> {
    const keep = sortRevisions(current).at(-1) as ControllerRevision;
    if (current.length === 1) return keep;
    const namespace = ds.metadata?.namespace ?? '';
    const keepHash = keep.metadata?.labels?.[REVISION_LABEL] ?? '';
    const pods = this.client.api(Pod, namespace);
    for (const p of await this.pods(ds))
      if (p.metadata?.labels?.[REVISION_LABEL] !== keepHash)
        await pods.patch(p.metadata?.name ?? '', { metadata: { labels: { [REVISION_LABEL]: keepHash } } });
    const api = revisionsApi(this.client, namespace);
    for (const cr of current) if (cr !== keep) await deleteRevision(api, cr);
    return keep;
  }

  /** `cleanupHistory`: old revisions beyond `revisionHistoryLimit`, oldest first, unless a pod still runs them. */
  private async cleanupHistory(ds: DaemonSet, old: ControllerRevision[], pods: Pod[]): Promise<void> {
    const limit = ds.spec?.revisionHistoryLimit ?? 10;
    let toKill = old.length - limit;
    if (toKill <= 0) return;
    const liveHashes = new Set(pods.map((p) => p.metadata?.labels?.[REVISION_LABEL]).filter(Boolean));
    const api = revisionsApi(this.client, ds.metadata?.namespace ?? '');
    for (const cr of sortRevisions(old)) {
      if (toKill <= 0) break;
      if (liveHashes.has(cr.metadata?.labels?.[REVISION_LABEL])) continue;
      await deleteRevision(api, cr);
      toKill -= 1;
    }
  }

  /**
   * Old pods to delete in this round of a rolling update (maxSurge 0): unavailable old pods at
   * once, available ones while fewer than `maxUnavailable` nodes are without an available daemon.
   */
  private rollingUpdateVictims(
    ds: DaemonSet,
    verdicts: Map<string, { shouldRun: boolean }>,
    byNode: Map<string, Pod[]>,
    isUpdated: (p: Pod) => boolean,
  ): Pod[] {
    const desired = [...verdicts.values()].filter((v) => v.shouldRun).length;
    const max = Math.max(
      1,
      scaled(
        ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable as number | string | undefined,
        desired,
        1,
      ),
    );
    let unavailable = 0;
    const oldAvailable: Pod[] = [];
    const victims: Pod[] = [];
    for (const [node, v] of verdicts) {
      if (!v.shouldRun) continue;
      const pod = byNode.get(node)?.[0];
      if (!pod || !ready(pod)) {
        unavailable += 1;
        if (pod && !isUpdated(pod)) victims.push(pod);
      } else if (!isUpdated(pod)) oldAvailable.push(pod);
    }
    oldAvailable.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    for (const p of oldAvailable) {
      if (unavailable >= max) break;
      victims.push(p);
      unavailable += 1;
    }
    return victims;
  }

  private podFor(ds: DaemonSet, node: string, hash: string, generation: number | undefined): Pod {
    const template = ds.spec?.template ?? {};
    const spec = template.spec ?? { containers: [] };
    const affinity = spec.affinity ?? {};
    return {
      metadata: {
        generateName: `${ds.metadata?.name}-`,
        labels: {
          ...template.metadata?.labels,
          [REVISION_LABEL]: hash,
          ...(generation !== undefined && { [GENERATION_LABEL]: String(generation) }),
        },
        ...(template.metadata?.annotations && { annotations: template.metadata.annotations }),
        ownerReferences: [controllerRefTo(ds, 'DaemonSet')],
      },
      spec: {
        ...spec,
        // `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required terms become this node alone.
        affinity: {
          ...affinity,
          nodeAffinity: {
            ...affinity.nodeAffinity,
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] },
              ],
            },
          },
        },
        tolerations: withDaemonTolerations(spec.tolerations as Toleration[] | undefined, !!spec.hostNetwork),
      },
    } as Pod;
  }

  private async writeStatus(
    ds: DaemonSet,
    verdicts: Map<string, { shouldRun: boolean }>,
    byNode: Map<string, Pod[]>,
    isUpdated: (p: Pod) => boolean,
  ): Promise<void> {
    let desired = 0;
    let current = 0;
    let misscheduled = 0;
    let readyCount = 0;
    let updated = 0;
    for (const [node, v] of verdicts) {
      // The oldest daemon pod meant for the node, bound or not yet (`updateDaemonSetStatus`).
      const pod = byNode.get(node)?.[0];
      if (v.shouldRun) {
        desired += 1;
        if (!pod) continue;
        current += 1;
        if (ready(pod)) readyCount += 1;
        if (isUpdated(pod)) updated += 1;
      } else if (pod) misscheduled += 1;
    }
    const want: Record<string, number> = {
      currentNumberScheduled: current,
      desiredNumberScheduled: desired,
      numberMisscheduled: misscheduled,
      numberReady: readyCount,
      numberAvailable: readyCount,
      numberUnavailable: desired - readyCount,
      updatedNumberScheduled: updated,
      observedGeneration: ds.metadata?.generation ?? 0,
    };
    const cur = (ds.status ?? {}) as Record<string, unknown>;
    if (Object.entries(want).every(([k, v]) => (cur[k] ?? 0) === v)) return;
    // Zero counts other than the four required ones are omitted (omitempty): null removes them.
    const required = [
      'currentNumberScheduled',
      'desiredNumberScheduled',
      'numberMisscheduled',
      'numberReady',
    ];
    const status = Object.fromEntries(
      Object.entries(want).map(([k, v]) => [k, v === 0 && !required.includes(k) ? null : v]),
    );
    const _name = ds.metadata?.name ?? '';
    try {
      // A stale DaemonSet (409) makes the reconcile run again.
      await this.client.api(DaemonSet, ds.metadata?.namespace ?? '').updateStatus(withStatus(ds, status));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
