/**
 * The ReplicaSet controller of kube-controller-manager: keeps `spec.replicas` pods of a
 * ReplicaSet's template alive, adopts orphan pods its selector matches and releases those it
 * no longer matches, reports them in its status, and records `SuccessfulCreate` /
 * `SuccessfulDelete` events. The same controller runs ReplicationControllers, as
 * kube-controller-manager's replication controller is its ReplicaSet controller given the
 * core/v1 kind (`replication.NewReplicationManager`): they differ only in their kind and the
 * shape of their selector (a map of labels).
 */
import {
  isEverything,
  isNothing,
  type LabelSelector,
  labelSelectorFromObject,
  labelSelectorFromSet,
  matchesLabels,
} from 'kubeloop/api';
import { isConflict, Pod, ReplicaSet, ReplicationController, type ResourceDescriptor } from 'kubeloop/client';
import {
  type ControllerDefinition,
  controller,
  controllerOf,
  defaultControllerRateLimiter,
  type ReconcileContext,
  type ReconcileResult,
} from 'kubeloop/runtime';
import { adopters, claim, controllerRefTo } from './claim.js';
import type { ControllerEvents } from './events.js';
import { podReady as ready, syncPods } from './pods.js';
import { cachedSelector } from './selectors.js';
import { updateStatus } from './status-write.js';

const active = (p: Pod): boolean =>
  !p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

/**
 * Which pods to delete first when scaling down (Kubernetes' `ActivePods` order, simplified):
 * unscheduled before scheduled, pending before running, not ready before ready, newer before older.
 */
function deletionRank(a: Pod, b: Pod): number {
  const key = (p: Pod): [number, number, number, number] => [
    p.spec?.nodeName ? 1 : 0,
    p.status?.phase === 'Running' ? 1 : p.status?.phase === 'Pending' ? 0 : -1,
    ready(p) ? 1 : 0,
    -Date.parse(p.metadata?.creationTimestamp ?? '') || 0,
  ];
  const ka = key(a);
  const kb = key(b);
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return (ka[i] ?? 0) - (kb[i] ?? 0);
  return 0;
}

/** A kind of pod set the controller runs: ReplicaSets or ReplicationControllers. */
interface SetKind {
  readonly descriptor: typeof ReplicaSet | typeof ReplicationController;
  readonly apiVersion: string;
  /** The events' component (`replicaset-controller`, `replication-controller`). */
  readonly component: string;
  readonly selector: (set: ReplicaSet | ReplicationController) => LabelSelector;
}

const KINDS: Record<'ReplicaSet' | 'ReplicationController', SetKind> = {
  ReplicaSet: {
    descriptor: ReplicaSet,
    apiVersion: 'apps/v1',
    component: 'replicaset-controller',
    selector: (s) => cachedSelector((s as ReplicaSet).spec?.selector),
  },
  ReplicationController: {
    descriptor: ReplicationController,
    apiVersion: 'v1',
    component: 'replication-controller',
    // A map of labels; the API server defaults it to the template's labels.
    selector: (s) => {
      const sel = (s as ReplicationController).spec?.selector;
      return sel && Object.keys(sel).length > 0
        ? labelSelectorFromSet(sel)
        : labelSelectorFromObject(undefined);
    },
  },
};

type PodSet = ReplicaSet | ReplicationController;

/** Options of {@link replicaSetController}. */
export interface ReplicaSetControllerOptions {
  /** Records the core/v1 Events, as `replicaset-controller` (or `replication-controller`). */
  events: ControllerEvents;
  /** The kind run (default ReplicaSet). */
  kind?: 'ReplicaSet' | 'ReplicationController';
}

/** The events' component of each kind (what `kubectl describe` shows as the events' source). */
export const replicaSetEventComponent = (kind: 'ReplicaSet' | 'ReplicationController'): string =>
  KINDS[kind].component;

/**
 * The ReplicaSet controller (`replicaset`), or with `kind: 'ReplicationController'` the
 * replication controller (`replicationcontroller`): owns the pods it creates; an orphan pod
 * reconciles the sets of its namespace whose selector matches its labels.
 */
export function replicaSetController(options: ReplicaSetControllerOptions): ControllerDefinition<PodSet> {
  const kindName = options.kind ?? 'ReplicaSet';
  const kind = KINDS[kindName];
  const { events } = options;
  return (
    controller<PodSet>(kind.descriptor as ResourceDescriptor<PodSet>)
      .named(kindName.toLowerCase())
      .withOptions({
        maxConcurrentReconciles: 2,
        rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
      })
      .owns(Pod)
      // An orphan may be adopted by the sets that select it (a pod being deleted is not).
      .watches(Pod, (p, cache) =>
        adopters(p, cache, kind.descriptor as ResourceDescriptor<PodSet>, kind.selector),
      )
      .reconcile(async (set, ctx) => {
        try {
          return await syncSet(set, kindName, kind, events, ctx);
        } catch (err) {
          // A conflict is a race the next try resolves: retried without a complaint in the log.
          if (isConflict(err)) return { requeue: true };
          throw err;
        }
      })
  );
}

/** One set (`syncReplicaSet`): creates or deletes pods to reach `spec.replicas`, then writes its status. */
async function syncSet(
  set: PodSet,
  kindName: 'ReplicaSet' | 'ReplicationController',
  kind: SetKind,
  events: ControllerEvents,
  { client, cache }: ReconcileContext,
): Promise<ReconcileResult> {
  if (set.metadata?.deletionTimestamp) return undefined;
  const namespace = set.metadata?.namespace ?? '';
  const name = set.metadata?.name ?? '';
  const uid = set.metadata?.uid ?? '';
  const selector = kind.selector(set);
  // An empty selector would claim every pod of the namespace: Kubernetes refuses to act.
  if (isEverything(selector) || isNothing(selector)) return undefined;
  // The manager's cache reflects every pod this controller created or deleted before (its
  // read-your-writes), which is what Kubernetes' expectations guard against.
  const candidates = (await cache.list(Pod, { namespace })).filter(
    (p) => !controllerOf(p) || controllerOf(p)?.uid === uid,
  );
  const owned = await claim(
    { owner: set, apiVersion: kind.apiVersion, kind: kindName, selector },
    candidates,
    client.api(Pod, namespace),
  );
  const live = owned.filter(active);
  const wanted = set.spec?.replicas ?? 1;
  const diff = wanted - live.length;
  const template = set.spec?.template ?? {};
  const pod: Pod = {
    metadata: {
      generateName: `${name}-`,
      ...(template.metadata?.labels && { labels: template.metadata.labels }),
      ...(template.metadata?.annotations && { annotations: template.metadata.annotations }),
      ownerReferences: [controllerRefTo(set, kindName, kind.apiVersion)],
    },
    spec: template.spec ?? { containers: [] },
  };
  if (diff > 0)
    await syncPods(
      client,
      events,
      kind.descriptor,
      set,
      Array.from({ length: diff }, () => pod),
    );
  else if (diff < 0)
    await syncPods(client, events, kind.descriptor, set, [], [...live].sort(deletionRank).slice(0, -diff));

  const readyCount = live.filter(ready).length;
  // Available: ready for minReadySeconds (`IsPodAvailable`); look again when the next one will be.
  const minReadyMs = (set.spec?.minReadySeconds ?? 0) * 1000;
  let availableCount = 0;
  let next = Number.POSITIVE_INFINITY;
  for (const p of live.filter(ready)) {
    const since = Date.parse(p.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? '');
    const wait = minReadyMs === 0 || Number.isNaN(since) ? 0 : since + minReadyMs - Date.now();
    if (wait <= 0) availableCount += 1;
    else next = Math.min(next, wait);
  }
  const result: ReconcileResult = next !== Number.POSITIVE_INFINITY ? { requeueAfter: next + 5 } : undefined;
  const status = {
    replicas: live.length,
    fullyLabeledReplicas: live.filter((p) => matchesLabels(selector, p.metadata?.labels)).length,
    readyReplicas: readyCount,
    availableReplicas: availableCount,
    observedGeneration: set.metadata?.generation ?? 0,
  };
  const cur: NonNullable<PodSet['status']> = set.status ?? { replicas: 0 };
  if (
    (cur.replicas ?? 0) === status.replicas &&
    (cur.fullyLabeledReplicas ?? 0) === status.fullyLabeledReplicas &&
    (cur.readyReplicas ?? 0) === status.readyReplicas &&
    (cur.availableReplicas ?? 0) === status.availableReplicas &&
    (cur.observedGeneration ?? 0) === status.observedGeneration
  )
    return result;
  return (await updateStatus(client, kind.descriptor as ResourceDescriptor<PodSet>, set, status)) ?? result;
}
