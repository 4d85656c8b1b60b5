/**
 * The ReplicaSet controller of kube-controller-manager: keeps `spec.replicas` pods of a
 * ReplicaSet's template alive, adopts orphan pods its selector matches and releases those it
 * no longer matches, reports them in its status, and records `SuccessfulCreate` /
 * `SuccessfulDelete` events. The same controller runs ReplicationControllers, as
 * kube-controller-manager's replication controller is its ReplicaSet controller given the
 * core/v1 kind (`replication.NewReplicationManager`): they differ only in their kind and the
 * shape of their selector (a map of labels).
 */
import { setMaxListeners } from 'node:events';
import {
  isEverything,
  isNothing,
  type LabelSelector,
  labelSelectorFromObject,
  labelSelectorFromSet,
  matchesLabels,
} from 'kubeloop/api';
import type { Client } from 'kubeloop/client';
import { isNotFound, Pod, ReplicaSet, ReplicationController } from 'kubeloop/client';
import {
  controllerOf,
  defaultControllerRateLimiter,
  Informer,
  NAMESPACE_INDEX,
  objectKey,
  splitKey,
  WorkQueue,
} from 'kubeloop/runtime';
import { claim, controllerRefTo } from './claim.js';
import { ControllerEvents } from './events.js';
import type { ControllerLog } from './log.js';
import { PodControl, podReady as ready } from './pods.js';
import { runWorker } from './worker.js';

const CONTROLLER_INDEX = 'controller-uid';

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
    selector: (s) => labelSelectorFromObject((s as ReplicaSet).spec?.selector),
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

/** The ReplicaSet controller: informers on ReplicaSets (or ReplicationControllers) and pods, a queue of them, {@link ReplicaSetController.reconcile}. */
export class ReplicaSetController {
  private readonly sets: Informer<PodSet>;
  private readonly pods: Informer<Pod>;
  private readonly queue: WorkQueue<string>;
  private readonly kind: SetKind;
  private readonly kindName: 'ReplicaSet' | 'ReplicationController';
  private readonly abort = new AbortController();
  private readonly control: PodControl;
  private workers: Promise<void>[] = [];
  private readonly log: ControllerLog;
  private readonly events: ControllerEvents;

  constructor(
    private readonly client: Client,
    options: { log?: ControllerLog; kind?: 'ReplicaSet' | 'ReplicationController' } = {},
  ) {
    this.kindName = options.kind ?? 'ReplicaSet';
    this.kind = KINDS[this.kindName];
    this.queue = new WorkQueue<string>({
      name: this.kindName.toLowerCase(),
      rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
    });
    this.log = options.log ?? (() => undefined);
    this.events = new ControllerEvents(client, this.kind.component, this.log);
    this.control = new PodControl(client, this.events, this.kind.descriptor);
    setMaxListeners(0, this.abort.signal);
    this.sets = new Informer<PodSet>(client.api<PodSet>(this.kind.descriptor, ''), {});
    this.pods = new Informer(client.api(Pod, ''), {
      indexers: { [CONTROLLER_INDEX]: (p) => controllerOf(p)?.uid },
    });
    this.sets.addEventHandler({
      onAdd: (rs) => this.queue.add(objectKey(rs)),
      onUpdate: (_o, rs) => this.queue.add(objectKey(rs)),
      onDelete: (rs) => this.control.expectations.forget(rs.metadata?.uid ?? ''),
    });
    const expectations = this.control.expectations;
    this.pods.addEventHandler({
      onAdd: (p) => {
        expectations.observeAdd(p);
        this.enqueueOwner(p);
      },
      onUpdate: (o, p) => {
        expectations.observeUpdate(p);
        this.enqueueOwner(p);
        // A pod that changed controller, or labels, may concern its former owner or new candidates.
        if (controllerOf(o)?.uid !== controllerOf(p)?.uid) this.enqueueOwner(o);
        if (!controllerOf(p) && JSON.stringify(o.metadata?.labels) !== JSON.stringify(p.metadata?.labels))
          this.enqueueOwner(p);
      },
      onDelete: (p) => {
        expectations.observeDelete(p);
        this.enqueueOwner(p);
      },
    });
  }

  start(): void {
    this.sets.start(this.abort.signal);
    this.pods.start(this.abort.signal);
    for (let i = 0; i < 2; i++) this.workers.push(this.work());
  }

  /** Resolves once the controller's caches hold their first lists (the test environment waits for it). */
  async waitForSync(): Promise<void> {
    await Promise.all([this.sets.waitForSync(), this.pods.waitForSync()]);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    const closing = this.events.close();
    await this.queue.shutdown();
    await Promise.all(this.workers);
    await Promise.all([this.sets.stop(), this.pods.stop(), closing]);
  }

  /** The pod's controller if it is a ReplicaSet; for an orphan, every ReplicaSet that could adopt it. */
  private enqueueOwner(p: Pod): void {
    const ref = controllerOf(p);
    const ns = p.metadata?.namespace ?? '';
    if (ref) {
      if (ref.kind === this.kindName && ref.apiVersion.split('/')[0] === this.kind.apiVersion.split('/')[0])
        this.queue.add(`${ns}/${ref.name}`);
      return;
    }
    if (p.metadata?.deletionTimestamp) return;
    for (const rs of this.sets.store.byIndex(NAMESPACE_INDEX, ns))
      if (matchesLabels(this.kind.selector(rs), p.metadata?.labels)) this.queue.add(objectKey(rs));
  }

  private work(): Promise<void> {
    return runWorker(this.queue, this.abort.signal, (k) => this.reconcile(k), {
      log: this.log,
      message: `${this.kindName.toLowerCase()} sync failed; retrying`,
    });
  }

  /** One ReplicaSet: creates or deletes pods to reach `spec.replicas`, then writes its status. */
  async reconcile(key: string): Promise<void> {
    if (!this.sets.hasSynced || !this.pods.hasSynced)
      await Promise.all([this.sets.waitForSync(), this.pods.waitForSync()]);
    const { namespace = '', name } = splitKey(key);
    const rs = this.sets.store.get(name, namespace);
    if (!rs || rs.metadata?.deletionTimestamp) return;
    const uid = rs.metadata?.uid ?? '';
    const selector = this.kind.selector(rs);
    // An empty selector would claim every pod of the namespace: Kubernetes refuses to act.
    if (isEverything(selector) || isNothing(selector)) return;
    const pods = this.client.api(Pod, namespace);
    const candidates = this.pods.store
      .byIndex(NAMESPACE_INDEX, namespace)
      .filter((p) => !controllerOf(p) || controllerOf(p)?.uid === uid);
    const owned = await claim(
      { owner: rs, apiVersion: this.kind.apiVersion, kind: this.kindName, selector },
      candidates,
      pods,
    );
    const live = owned.filter(active);
    const wanted = rs.spec?.replicas ?? 1;
    if (this.control.expectations.satisfied(uid)) {
      const diff = wanted - live.length;
      const template = rs.spec?.template ?? {};
      const pod: Pod = {
        metadata: {
          generateName: `${name}-`,
          ...(template.metadata?.labels && { labels: template.metadata.labels }),
          ...(template.metadata?.annotations && { annotations: template.metadata.annotations }),
          ownerReferences: [controllerRefTo(rs, this.kindName, this.kind.apiVersion)],
        },
        spec: template.spec ?? { containers: [] },
      };
      if (diff > 0)
        await this.control.sync(
          rs,
          Array.from({ length: diff }, () => pod),
        );
      else if (diff < 0) await this.control.sync(rs, [], [...live].sort(deletionRank).slice(0, -diff));
    }

    const readyCount = live.filter(ready).length;
    // Available: ready for minReadySeconds (`IsPodAvailable`); look again when the next one will be.
    const minReadyMs = (rs.spec?.minReadySeconds ?? 0) * 1000;
    let availableCount = 0;
    let next = Number.POSITIVE_INFINITY;
    for (const p of live.filter(ready)) {
      const since = Date.parse(
        p.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? '',
      );
      const wait = minReadyMs === 0 || Number.isNaN(since) ? 0 : since + minReadyMs - Date.now();
      if (wait <= 0) availableCount += 1;
      else next = Math.min(next, wait);
    }
    if (next !== Number.POSITIVE_INFINITY) this.queue.addAfter(key, next + 5);
    const status = {
      replicas: live.length,
      fullyLabeledReplicas: live.filter((p) => matchesLabels(selector, p.metadata?.labels)).length,
      readyReplicas: readyCount,
      availableReplicas: availableCount,
      observedGeneration: rs.metadata?.generation ?? 0,
    };
    const cur: NonNullable<PodSet['status']> = rs.status ?? { replicas: 0 };
    if (
      (cur.replicas ?? 0) === status.replicas &&
      (cur.fullyLabeledReplicas ?? 0) === status.fullyLabeledReplicas &&
      (cur.readyReplicas ?? 0) === status.readyReplicas &&
      (cur.availableReplicas ?? 0) === status.availableReplicas &&
      (cur.observedGeneration ?? 0) === status.observedGeneration
    )
      return;
    try {
      await this.client.api<PodSet>(this.kind.descriptor, namespace).patchStatus(name, { status } as PodSet);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
