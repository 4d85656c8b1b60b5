/**
 * The StatefulSet controller of kube-controller-manager: pods `<set>-0 … <set>-(n-1)` with stable
 * names and hostnames, one PersistentVolumeClaim per pod and volume claim template (kept when the
 * set scales down), created in order (`OrderedReady`) or all at once (`Parallel`), and rolled out
 * from the highest ordinal down to `partition`.
 */
import { labelSelectorFromObject } from 'kubeloop/api';
import {
  isAlreadyExists,
  isConflict,
  isNotFound,
  PersistentVolumeClaim,
  Pod,
  StatefulSet,
} from 'kubeloop/client';
import {
  type ControllerDefinition,
  controller,
  defaultControllerRateLimiter,
  type ReconcileResult,
} from 'kubeloop/runtime';
import { claim, controllerRefTo } from './claim.js';
import { type ControllerEvents, errorText } from './events.js';
import {
  ControllerRevision,
  createRevision,
  deleteRevision,
  nextRevision,
  REVISION_HASH_LABEL,
  revisionHolds,
  revisionsApi,
  revisionTemplate,
  setRevisionNumber,
  sortRevisions,
  templatePatch,
} from './history.js';
import { ObjectSync } from './object-sync.js';
import { CONTROLLER_UID_FIELD, controllerUid } from './owned-pods.js';
import { withStatus } from './status-write.js';

const REVISION_LABEL = REVISION_HASH_LABEL;
const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

const ready = (p: Pod): boolean =>
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const terminating = (p: Pod) => Boolean(p.metadata?.deletionTimestamp);
const runningAndReady = (p: Pod) => p.status?.phase === 'Running' && ready(p);
const healthy = (p: Pod) => !terminating(p) && runningAndReady(p);
const failed = (p: Pod) => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';

type PodTemplate = NonNullable<NonNullable<StatefulSet['spec']>['template']>;
/** A revision's name (the pods' `controller-revision-hash`) and the template it holds. */
type Revised = Record<'current' | 'update', { name: string; template: PodTemplate }>;

/** The ordinal of a StatefulSet's pod from its name, or -1. */
export function ordinalOf(setName: string, podName: string): number {
  if (!podName.startsWith(`${setName}-`)) return -1;
  const rest = podName.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
}

/** Options of {@link statefulSetController}. */
export interface StatefulSetControllerOptions {
  /** Records the core/v1 Events, as `statefulset-controller`. */
  events: ControllerEvents;
}

/**
 * The StatefulSet controller (`statefulset`): owns the pods it creates (a pod's change reconciles
 * its set); reads the set's pods by controller UID from the manager's one Pod cache, and its
 * ControllerRevisions from the shared revision cache.
 *
 * @example
 * ```ts
 * manager.add(statefulSetController({ events: new ControllerEvents(client, 'statefulset-controller') }));
 * ```
 */
export function statefulSetController(
  options: StatefulSetControllerOptions,
): ControllerDefinition<StatefulSet> {
  return (
    controller(StatefulSet)
      .named('statefulset')
      // One worker: a set is synced by one worker at a time anyway, and pod names are fixed, so
      // creations never race (a repeated one is AlreadyExists).
      .withOptions({
        maxConcurrentReconciles: 1,
        rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
      })
      .owns(Pod)
      .indexField(Pod, CONTROLLER_UID_FIELD, controllerUid)
      .reconcile(async (set, ctx): Promise<ReconcileResult> => {
        try {
          await new StatefulSetSync(ctx, options.events).sync(set);
        } catch (err) {
          // Races the next try resolves (a stale write, a pod of a fixed name not yet seen gone):
          // retried with backoff, without a complaint in the log.
          if (isConflict(err) || isAlreadyExists(err)) return { requeue: true };
          throw err;
        }
        return undefined;
      })
  );
}

/** One sync of one StatefulSet, with the reconcile's client (writes tracked) and cache. */
class StatefulSetSync extends ObjectSync {
  /**
   * One StatefulSet (`UpdateStatefulSet`): its current and update revisions, at most one step
   * per sync for `OrderedReady` (every step at once for `Parallel`), its status, and its history
   * trimmed to `revisionHistoryLimit`.
   */
  async sync(set: StatefulSet): Promise<void> {
    if (set.metadata?.deletionTimestamp) return;
    const namespace = set.metadata?.namespace ?? '';
    const name = set.metadata?.name ?? '';
    const uid = set.metadata?.uid ?? '';
    const replicas = set.spec?.replicas ?? 1;
    const parallel = set.spec?.podManagementPolicy === 'Parallel';
    const revisions = sortRevisions(
      await claim(
        {
          owner: set,
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          selector: labelSelectorFromObject(set.spec?.selector),
        },
        await this.cache.list(ControllerRevision, { namespace }),
        revisionsApi(this.client, namespace),
      ),
    );
    const { current, update, collisionCount } = await this.getRevisions(set, revisions);
    const currentName = current.metadata?.name ?? '';
    const updateName = update.metadata?.name ?? '';
    const revisionOf = (p: Pod) => p.metadata?.labels?.[REVISION_LABEL];
    const pods = (
      await this.cache.list(Pod, { namespace, fieldSelector: { [CONTROLLER_UID_FIELD]: uid } })
    ).filter((p) => ordinalOf(name, p.metadata?.name ?? '') >= 0);
    const byOrdinal = new Map(pods.map((p) => [ordinalOf(name, p.metadata?.name ?? ''), p]));
    const api = this.client.api(Pod, namespace);
    const del = async (p: Pod) => {
      try {
        await api.delete(p.metadata?.name ?? '', { preconditions: { uid: p.metadata?.uid ?? '' } });
        this.podEvent('delete', set, p.metadata?.name ?? '');
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) {
          this.podEvent('delete', set, p.metadata?.name ?? '', err);
          throw err;
        }
      }
    };

    const templateOf = (r: ControllerRevision) =>
      (revisionTemplate(r) as PodTemplate | undefined) ?? set.spec?.template ?? { metadata: {} };
    const revised: Revised = {
      current: { name: currentName, template: templateOf(current) },
      update: { name: updateName, template: templateOf(update) },
    };
    const deletedForUpdate = await this.steps(set, byOrdinal, replicas, parallel, revised, del);

    // Status from the cache (`computeReplicaStatus`): the writes above come back as events and a new sync.
    const created = pods.filter((p) => (p.status?.phase ?? '') !== '');
    const live = created.filter((p) => !terminating(p));
    const readyCount = created.filter(runningAndReady).length;
    const status = {
      observedGeneration: set.metadata?.generation ?? 0,
      replicas: created.length,
      readyReplicas: readyCount,
      currentReplicas: live.filter((p) => revisionOf(p) === currentName).length - deletedForUpdate,
      updatedReplicas: live.filter((p) => revisionOf(p) === updateName).length,
      currentRevision: currentName,
      updateRevision: updateName,
      collisionCount,
      availableReplicas: readyCount,
    };
    // `completeRollingUpdate`: every pod of the update revision and ready, the update is the current.
    if (
      set.spec?.updateStrategy?.type !== 'OnDelete' &&
      status.updatedReplicas === replicas &&
      status.readyReplicas === replicas &&
      status.replicas === replicas
    ) {
      status.currentReplicas = status.updatedReplicas;
      status.currentRevision = status.updateRevision;
    }
    await this.writeStatus(set, status);
    await this.truncateHistory(set, pods, revisions, [currentName, updateName]);
  }

  /** Writes the status when it differs from the stored one; zero counts that are omitempty are cleared. */
  private async writeStatus(set: StatefulSet, status: Record<string, number | string>): Promise<void> {
    const cur = (set.status ?? {}) as Record<string, unknown>;
    if (Object.entries(status).every(([k, v]) => (cur[k] ?? (typeof v === 'number' ? 0 : '')) === v)) return;
    const patch = Object.fromEntries(
      Object.entries(status).map(([k, v]) => [
        k,
        v === 0 && ['readyReplicas', 'currentReplicas', 'updatedReplicas'].includes(k) ? null : v,
      ]),
    );
    try {
      // A stale set (409) makes the reconcile run again.
      await this.client.api(StatefulSet, set.metadata?.namespace ?? '').updateStatus(withStatus(set, patch));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * `getStatefulSetRevisions`: the update revision is the one holding the set's template — the
   * newest if it does, an older one moved to the next revision number (a rollback), or a new one;
   * the current revision is the one the status names, or the update revision at first.
   */
  private async getRevisions(
    set: StatefulSet,
    revisions: ControllerRevision[],
  ): Promise<{ current: ControllerRevision; update: ControllerRevision; collisionCount: number }> {
    const api = revisionsApi(this.client, set.metadata?.namespace ?? '');
    let collisionCount = set.status?.collisionCount ?? 0;
    const data = templatePatch(set.spec?.template);
    const revision = nextRevision(revisions);
    const equal = revisions.filter((r) => revisionHolds(r, data));
    const lastEqual = equal.at(-1);
    let update: ControllerRevision;
    if (lastEqual && lastEqual === revisions.at(-1)) update = lastEqual;
    else if (lastEqual) update = await setRevisionNumber(api, lastEqual, revision);
    else {
      const annotations = set.metadata?.annotations;
      ({ revision: update, collisionCount } = await createRevision(
        api,
        set.metadata?.name ?? '',
        {
          metadata: {
            labels: { ...set.spec?.template?.metadata?.labels },
            ...(annotations && { annotations }),
            ownerReferences: [controllerRefTo(set, 'StatefulSet')],
          },
          data,
          revision,
        },
        collisionCount,
      ));
    }
    const current = revisions.find((r) => r.metadata?.name === set.status?.currentRevision) ?? update;
    return { current, update, collisionCount };
  }

  /**
   * `truncateHistory`: revisions that are neither current, nor the update, nor of a pod are
   * deleted, lowest revision first, until `revisionHistoryLimit` of them remain.
   */
  private async truncateHistory(
    set: StatefulSet,
    pods: Pod[],
    sorted: ControllerRevision[],
    liveNames: string[],
  ): Promise<void> {
    const live = new Set([...liveNames, ...pods.map((p) => p.metadata?.labels?.[REVISION_LABEL] ?? '')]);
    const history = sorted.filter((r) => !live.has(r.metadata?.name ?? ''));
    const limit = set.spec?.revisionHistoryLimit ?? 10;
    if (limit < 0 || history.length <= limit) return;
    const api = revisionsApi(this.client, set.metadata?.namespace ?? '');
    for (const r of history.slice(0, history.length - limit)) await deleteRevision(api, r);
  }

  private async steps(
    set: StatefulSet,
    byOrdinal: Map<number, Pod>,
    replicas: number,
    parallel: boolean,
    revised: Revised,
    del: (p: Pod) => Promise<void>,
  ): Promise<number> {
    const ordinals = [...byOrdinal.keys()].sort((a, b) => a - b);
    // Failed pods are replaced: delete now, recreate on the sync their deletion triggers.
    for (const i of ordinals) {
      const p = byOrdinal.get(i);
      if (p && failed(p) && !terminating(p)) {
        await del(p);
        if (!parallel) return 0;
      }
    }

    // Scale up: create missing ordinals, in order, each after its predecessors are healthy.
    for (let i = 0; i < replicas; i++) {
      const p = byOrdinal.get(i);
      if (!p) {
        // `newVersionedStatefulSetPod`: below the partition, pods are made of the current revision.
        const partition = set.spec?.updateStrategy?.rollingUpdate?.partition;
        const ofCurrent =
          set.spec?.updateStrategy?.type !== 'OnDelete' && partition !== undefined && i < partition;
        await this.createPod(set, i, ofCurrent ? revised.current : revised.update);
        if (!parallel) return 0;
        continue;
      }
      if (!parallel && !healthy(p)) return 0;
    }

    // Scale down: the highest ordinal first, one at a time once the others are healthy.
    const condemned = ordinals.filter((i) => i >= replicas).reverse();
    for (const i of condemned) {
      const p = byOrdinal.get(i);
      if (!p) continue;
      if (terminating(p)) {
        if (parallel) continue;
        return 0;
      }
      if (!parallel && ordinals.some((j) => j < i && !healthy(byOrdinal.get(j) as Pod))) return 0;
      await del(p);
      if (!parallel) return 0;
    }

    // Rolling update: from the highest ordinal down to the partition, one pod at a time once all
    // the set's pods are healthy; OnDelete leaves it to the user.
    const strategy = set.spec?.updateStrategy;
    if (strategy?.type === 'OnDelete') return 0;
    const partition = strategy?.rollingUpdate?.partition ?? 0;
    const wanted = ordinals.filter((i) => i < replicas);
    if (wanted.some((i) => !healthy(byOrdinal.get(i) as Pod))) return 0;
    for (const i of [...wanted].reverse()) {
      if (i < partition) break;
      const p = byOrdinal.get(i) as Pod;
      if (p.metadata?.labels?.[REVISION_LABEL] !== revised.update.name) {
        await del(p);
        return 1;
      }
    }
    return 0;
  }

  private async createPod(
    set: StatefulSet,
    ordinal: number,
    revision: { name: string; template: PodTemplate },
  ): Promise<void> {
    const name = set.metadata?.name ?? '';
    const namespace = set.metadata?.namespace ?? '';
    const podName = `${name}-${ordinal}`;
    const template = revision.template;
    const spec = template.spec ?? { containers: [] };
    const claims = set.spec?.volumeClaimTemplates ?? [];
    const claimNames = new Set(claims.map((c) => c.metadata?.name ?? ''));
    // Claims first, so that the pod never waits for a claim that nobody creates.
    const pvcs = this.client.api(PersistentVolumeClaim, namespace);
    for (const c of claims) {
      const claimName = `${c.metadata?.name}-${name}-${ordinal}`;
      try {
        await pvcs.create({
          metadata: {
            name: claimName,
            labels: { ...c.metadata?.labels, ...set.spec?.selector?.matchLabels },
            ...(c.metadata?.annotations && { annotations: c.metadata.annotations }),
          },
          spec: c.spec ?? {},
        });
        this.events.event(
          StatefulSet,
          set,
          'Normal',
          'SuccessfulCreate',
          `create Claim ${claimName} Pod ${podName} in StatefulSet ${name} success`,
        );
      } catch (err) {
        if (!isAlreadyExists(err)) {
          this.events.event(
            StatefulSet,
            set,
            'Warning',
            'FailedCreate',
            `create Claim ${claimName} for Pod ${podName} in StatefulSet ${name} failed error: ${errorText(err)}`,
          );
          throw err;
        }
      }
    }
    const pod = {
      metadata: {
        name: podName,
        labels: {
          ...template.metadata?.labels,
          [REVISION_LABEL]: revision.name,
          [POD_NAME_LABEL]: podName,
          [POD_INDEX_LABEL]: String(ordinal),
        },
        ...(template.metadata?.annotations && { annotations: template.metadata.annotations }),
        ownerReferences: [controllerRefTo(set, 'StatefulSet')],
      },
      spec: {
        ...spec,
        hostname: podName,
        ...(set.spec?.serviceName && { subdomain: set.spec.serviceName }),
        ...(claims.length > 0 && {
          volumes: [
            ...(spec.volumes ?? []).filter((v) => !claimNames.has(v.name)),
            ...claims.map((c) => ({
              name: c.metadata?.name ?? '',
              persistentVolumeClaim: { claimName: `${c.metadata?.name}-${name}-${ordinal}` },
            })),
          ],
        }),
      },
    } as Pod;
    try {
      await this.client.api(Pod, namespace).create(pod);
      this.podEvent('create', set, podName);
    } catch (err) {
      if (!isAlreadyExists(err)) this.podEvent('create', set, podName, err);
      throw err;
    }
  }

  /** `recordPodEvent`: `SuccessfulCreate` / `FailedDelete`… with the StatefulSet controller's wording. */
  private podEvent(verb: 'create' | 'delete', set: StatefulSet, pod: string, err?: unknown): void {
    const Verb = verb === 'create' ? 'Create' : 'Delete';
    if (err === undefined)
      this.events.event(
        StatefulSet,
        set,
        'Normal',
        `Successful${Verb}`,
        `${verb} Pod ${pod} in StatefulSet ${set.metadata?.name} successful`,
      );
    else
      this.events.event(
        StatefulSet,
        set,
        'Warning',
        `Failed${Verb}`,
        `${verb} Pod ${pod} in StatefulSet ${set.metadata?.name} failed error: ${errorText(err)}`,
      );
  }
}
