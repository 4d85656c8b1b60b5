/**
 * What the controllers that own pods (ReplicaSet, DaemonSet, Job) share: Kubernetes'
 * `ControllerExpectations` (creations and deletions made but not yet seen in the cache) and
 * `PodControl` (create and delete pods of an owner, with `SuccessfulCreate` / `FailedCreate` /
 * `SuccessfulDelete` / `FailedDelete` events).
 */
import type { Client, KubeObject } from 'kubeloop/client';
import { isConflict, isNotFound, Pod } from 'kubeloop/client';
import { controllerOf } from 'kubeloop/runtime';
import { type ControllerEvents, type EventKind, errorText } from './events.js';

/** Whether a pod is Ready. */
export const podReady = (p: Pod): boolean =>
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** Expectations older than this are dropped, in case an event was never seen (Kubernetes: 5 min). */
const EXPECTATIONS_TTL_MS = 60_000;

/**
 * Creations and deletions not yet seen in the informer's cache, by owner UID: until they are,
 * the cache undercounts or overcounts the owner's pods, and acting on it would create or delete
 * pods twice.
 */
export class PodExpectations {
  private readonly map = new Map<string, { adds: number; dels: Set<string>; at: number }>();

  /** Whether the cache reflects every write made for `ownerUid` (or the expectations expired). */
  satisfied(ownerUid: string): boolean {
    const e = this.map.get(ownerUid);
    return !e || (e.adds <= 0 && e.dels.size === 0) || Date.now() - e.at > EXPECTATIONS_TTL_MS;
  }

  /** Records that `adds` pods are being created and `dels` (pod UIDs) deleted for `ownerUid`. */
  expect(ownerUid: string, adds: number, dels: Iterable<string> = []): void {
    this.map.set(ownerUid, { adds, dels: new Set(dels), at: Date.now() });
  }

  /** A creation that failed will never be seen. */
  creationFailed(ownerUid: string): void {
    const e = this.map.get(ownerUid);
    if (e) e.adds -= 1;
  }

  /** A deletion that failed (or found the pod gone) will never be seen. */
  deletionFailed(ownerUid: string, podUid: string): void {
    this.map.get(ownerUid)?.dels.delete(podUid);
  }

  /** Feeds a pod added to the cache. */
  observeAdd(p: Pod): void {
    const ref = controllerOf(p);
    const e = ref && this.map.get(ref.uid);
    if (e && e.adds > 0) e.adds -= 1;
  }

  /** Feeds a pod updated in the cache: terminating counts as deleted. */
  observeUpdate(p: Pod): void {
    if (p.metadata?.deletionTimestamp) this.observeDelete(p);
  }

  /** Feeds a pod deleted from the cache. */
  observeDelete(p: Pod): void {
    const ref = controllerOf(p);
    if (ref) this.deletionFailed(ref.uid, p.metadata?.uid ?? '');
  }

  /** The owner is gone: its expectations too. */
  forget(ownerUid: string): void {
    this.map.delete(ownerUid);
  }
}

/**
 * Creates and deletes the pods of owners of one kind, keeping {@link PodExpectations} and
 * recording the events Kubernetes' `RealPodControl` records on the owner.
 */
export class PodControl {
  readonly expectations = new PodExpectations();

  constructor(
    private readonly client: Client,
    private readonly events: ControllerEvents,
    private readonly ownerKind: EventKind,
  ) {}

  /**
   * Creates `create` and deletes `remove` (each with a UID precondition) at once for `owner`;
   * throws the first failure after all are done. Pods already gone count as deleted.
   */
  async sync(owner: KubeObject, create: readonly Pod[], remove: readonly Pod[] = []): Promise<void> {
    if (create.length === 0 && remove.length === 0) return;
    const uid = owner.metadata?.uid ?? '';
    this.expectations.expect(
      uid,
      create.length,
      remove.map((p) => p.metadata?.uid ?? ''),
    );
    await syncPods(this.client, this.events, this.ownerKind, owner, create, remove, {
      creationFailed: () => this.expectations.creationFailed(uid),
      deletionFailed: (p) => this.expectations.deletionFailed(uid, p.metadata?.uid ?? ''),
    });
  }
}

/** What {@link syncPods} tells its caller about writes that will never show in a cache. */
export interface PodWriteHooks {
  /** A creation failed. */
  creationFailed?(): void;
  /** A deletion failed, or found the pod already gone. */
  deletionFailed?(pod: Pod): void;
}

/**
 * Creates `create` and deletes `remove` (each with a UID precondition) at once for `owner`,
 * recording the events Kubernetes' `RealPodControl` records on the owner (`SuccessfulCreate`,
 * `FailedCreate`, `SuccessfulDelete`, `FailedDelete`); throws the first failure after all are
 * done. Pods already gone count as deleted. A controller on a kubeloop `Manager` passes the
 * reconcile's client, whose writes the manager's cache reflects before its next read (which
 * stands in for {@link PodExpectations}).
 *
 * @example
 * ```ts
 * await syncPods(ctx.client, events, ReplicaSet, rs, [podFor(rs)], []);
 * ```
 */
export async function syncPods(
  client: Client,
  events: ControllerEvents,
  ownerKind: EventKind,
  owner: KubeObject,
  create: readonly Pod[],
  remove: readonly Pod[] = [],
  hooks: PodWriteHooks = {},
): Promise<void> {
  if (create.length === 0 && remove.length === 0) return;
  const api = client.api(Pod, owner.metadata?.namespace ?? '');
  const results = await Promise.allSettled([
    ...create.map(async (pod) => {
      try {
        const created = await api.create(pod);
        events.event(
          ownerKind,
          owner,
          'Normal',
          'SuccessfulCreate',
          `Created pod: ${created.metadata?.name}`,
        );
      } catch (err) {
        hooks.creationFailed?.();
        events.event(ownerKind, owner, 'Warning', 'FailedCreate', `Error creating: ${errorText(err)}`);
        throw err;
      }
    }),
    ...remove.map(async (p) => {
      const name = p.metadata?.name ?? '';
      try {
        await api.delete(name, { preconditions: { uid: p.metadata?.uid ?? '' } });
        events.event(ownerKind, owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`);
      } catch (err) {
        hooks.deletionFailed?.(p);
        if (isNotFound(err) || isConflict(err)) return;
        events.event(ownerKind, owner, 'Warning', 'FailedDelete', `Error deleting: ${errorText(err)}`);
        throw err;
      }
    }),
  ]);
  const failure = results.find((r) => r.status === 'rejected');
  if (failure) throw (failure as PromiseRejectedResult).reason;
}
