/**
 * The ReplicaSet controller of kube-controller-manager: keeps `spec.replicas` pods of a
 * ReplicaSet's template alive, and reports them in its status.
 */
import { setMaxListeners } from 'node:events';
import { labelSelectorFromObject, matchesLabels } from 'kubeloop/api';
import type { Client } from 'kubeloop/client';
import { isConflict, isNotFound, Pod, ReplicaSet } from 'kubeloop/client';
import { defaultControllerRateLimiter, Informer, objectKey, splitKey, WorkQueue } from 'kubeloop/runtime';
import type { ControllerLog } from './garbage-collector.js';

const CONTROLLER_INDEX = 'controller-uid';

const controllerOf = (p: Pod) => p.metadata?.ownerReferences?.find((r) => r.controller === true);
const active = (p: Pod): boolean =>
  !p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
const ready = (p: Pod): boolean =>
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

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

/** The ReplicaSet controller: informers on ReplicaSets and pods, a queue of ReplicaSets, {@link ReplicaSetController.reconcile}. */
export class ReplicaSetController {
  private readonly sets: Informer<ReplicaSet>;
  private readonly pods: Informer<Pod>;
  private readonly queue = new WorkQueue<string>({
    name: 'replicaset',
    rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
  });
  private readonly abort = new AbortController();
  /**
   * Creations and deletions made but not yet seen in the cache, by ReplicaSet UID (Kubernetes'
   * "expectations"): until they are, the cache undercounts or overcounts, and acting on it would
   * create or delete pods twice.
   */
  private readonly expectations = new Map<string, { adds: number; dels: Set<string>; at: number }>();
  private workers: Promise<void>[] = [];
  private readonly log: ControllerLog;

  constructor(
    private readonly client: Client,
    options: { log?: ControllerLog } = {},
  ) {
    this.log = options.log ?? (() => undefined);
    setMaxListeners(0, this.abort.signal);
    this.sets = new Informer(client.api(ReplicaSet, ''), {});
    this.pods = new Informer(client.api(Pod, ''), {
      indexers: { [CONTROLLER_INDEX]: (p) => controllerOf(p)?.uid },
    });
    this.sets.addEventHandler({
      onAdd: (rs) => this.queue.add(objectKey(rs)),
      onUpdate: (_o, rs) => this.queue.add(objectKey(rs)),
      onDelete: (rs) => this.expectations.delete(rs.metadata?.uid ?? ''),
    });
    this.pods.addEventHandler({
      onAdd: (p) => {
        const ref = controllerOf(p);
        const e = ref && this.expectations.get(ref.uid);
        if (e && e.adds > 0) e.adds -= 1;
        this.enqueueOwner(p);
      },
      onUpdate: (_o, p) => {
        if (p.metadata?.deletionTimestamp) this.observedDeletion(p);
        this.enqueueOwner(p);
      },
      onDelete: (p) => {
        this.observedDeletion(p);
        this.enqueueOwner(p);
      },
    });
  }

  start(): void {
    this.sets.start(this.abort.signal);
    this.pods.start(this.abort.signal);
    for (let i = 0; i < 2; i++) this.workers.push(this.work());
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.queue.shutdown();
    await Promise.all(this.workers);
    await Promise.all([this.sets.stop(), this.pods.stop()]);
  }

  private observedDeletion(p: Pod): void {
    const ref = controllerOf(p);
    if (ref) this.expectations.get(ref.uid)?.dels.delete(p.metadata?.uid ?? '');
  }

  private enqueueOwner(p: Pod): void {
    const ref = controllerOf(p);
    if (ref?.kind === 'ReplicaSet' && ref.apiVersion.startsWith('apps/'))
      this.queue.add(`${p.metadata?.namespace ?? ''}/${ref.name}`);
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcile(key);
        this.queue.forget(key);
      } catch (err) {
        if (!this.abort.signal.aborted) {
          if (!isConflict(err))
            this.log('warn', 'replicaset sync failed; retrying', { key, error: String(err) });
          this.queue.addRateLimited(key);
        }
      } finally {
        this.queue.done(key);
      }
    }
  }

  /** One ReplicaSet: creates or deletes pods to reach `spec.replicas`, then writes its status. */
  async reconcile(key: string): Promise<void> {
    if (!this.sets.hasSynced || !this.pods.hasSynced)
      await Promise.all([this.sets.waitForSync(), this.pods.waitForSync()]);
    const { namespace = '', name } = splitKey(key);
    const rs = this.sets.store.get(name, namespace);
    if (!rs || rs.metadata?.deletionTimestamp) return;
    const uid = rs.metadata?.uid ?? '';
    const owned = this.pods.store
      .byIndex(CONTROLLER_INDEX, uid)
      .filter((p) => p.metadata?.namespace === namespace);
    const live = owned.filter(active);
    const wanted = rs.spec?.replicas ?? 1;
    const e = this.expectations.get(uid);
    // Expectations expire (as Kubernetes' do after 5 min) in case an event was never seen.
    const settled = !e || (e.adds <= 0 && e.dels.size === 0) || Date.now() - e.at > 60_000;
    const pods = this.client.api(Pod, namespace);

    if (settled) {
      const diff = wanted - live.length;
      if (diff > 0) {
        const exp = { adds: diff, dels: new Set<string>(), at: Date.now() };
        this.expectations.set(uid, exp);
        const template = rs.spec?.template ?? {};
        const results = await Promise.allSettled(
          Array.from({ length: diff }, () =>
            pods.create({
              metadata: {
                generateName: `${name}-`,
                ...(template.metadata?.labels && { labels: template.metadata.labels }),
                ...(template.metadata?.annotations && { annotations: template.metadata.annotations }),
                ownerReferences: [
                  {
                    apiVersion: 'apps/v1',
                    kind: 'ReplicaSet',
                    name,
                    uid,
                    controller: true,
                    blockOwnerDeletion: true,
                  },
                ],
              },
              spec: template.spec ?? { containers: [] },
            }),
          ),
        );
        const failed = results.filter((r) => r.status === 'rejected');
        exp.adds -= failed.length;
        if (failed[0]) throw (failed[0] as PromiseRejectedResult).reason;
      } else if (diff < 0) {
        const victims = [...live].sort(deletionRank).slice(0, -diff);
        const exp = { adds: 0, dels: new Set(victims.map((p) => p.metadata?.uid ?? '')), at: Date.now() };
        this.expectations.set(uid, exp);
        for (const p of victims) {
          try {
            await pods.delete(p.metadata?.name ?? '', { preconditions: { uid: p.metadata?.uid ?? '' } });
          } catch (err) {
            exp.dels.delete(p.metadata?.uid ?? '');
            if (!isNotFound(err) && !isConflict(err)) throw err;
          }
        }
      }
    }

    const selector = labelSelectorFromObject(rs.spec?.selector);
    const readyCount = live.filter(ready).length;
    const status = {
      replicas: live.length,
      fullyLabeledReplicas: live.filter((p) => matchesLabels(selector, p.metadata?.labels)).length,
      readyReplicas: readyCount,
      availableReplicas: readyCount,
      observedGeneration: rs.metadata?.generation ?? 0,
    };
    const cur: NonNullable<ReplicaSet['status']> = rs.status ?? { replicas: 0 };
    if (
      (cur.replicas ?? 0) === status.replicas &&
      (cur.fullyLabeledReplicas ?? 0) === status.fullyLabeledReplicas &&
      (cur.readyReplicas ?? 0) === status.readyReplicas &&
      (cur.availableReplicas ?? 0) === status.availableReplicas &&
      (cur.observedGeneration ?? 0) === status.observedGeneration
    )
      return;
    try {
      await this.client.api(ReplicaSet, namespace).patchStatus(name, { status } as ReplicaSet);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
