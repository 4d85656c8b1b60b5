/**
 * Adoption and release by selector, as Kubernetes' `ControllerRefManager` does for a workload
 * controller: objects that match its selector and have no controller become its own; objects it
 * controls that no longer match are let go.
 */
import { type LabelSelector, matchesLabels } from 'kubeloop/api';
import type { KubeObject, ResourceApi, ResourceDescriptor } from 'kubeloop/client';
import { isInvalid, isNotFound } from 'kubeloop/client';
import { type CacheLister, controllerOf, type ReconcileRequest } from 'kubeloop/runtime';

/** Who claims: the owner object, its API version and kind, and whether it may adopt. */
export interface Claimer {
  owner: KubeObject;
  apiVersion: string;
  kind: string;
  selector: LabelSelector;
}

/**
 * The objects among `candidates` (all of the owner's namespace) that `claimer` controls after
 * adopting orphans that match its selector and releasing owned ones that do not (`ClaimObject`).
 *
 * An owner being deleted adopts nothing; an object being deleted is neither adopted nor released.
 * Patches are strategic merge patches on `metadata.ownerReferences` (merged by `uid`) with a
 * `metadata.uid` precondition, as Kubernetes sends them.
 */
export async function claim<T extends KubeObject>(
  claimer: Claimer,
  candidates: readonly T[],
  api: ResourceApi<T>,
): Promise<T[]> {
  const uid = claimer.owner.metadata?.uid ?? '';
  const ownerDeleting = Boolean(claimer.owner.metadata?.deletionTimestamp);
  const claimed: T[] = [];
  const writes: Promise<void>[] = [];
  for (const obj of candidates) {
    const ref = controllerOf(obj);
    // Another controller's: not matched against the selector at all (most of a namespace's objects).
    if (ref && ref.uid !== uid) continue;
    const matches = matchesLabels(claimer.selector, obj.metadata?.labels);
    const deleting = Boolean(obj.metadata?.deletionTimestamp);
    const name = obj.metadata?.name ?? '';
    if (ref) {
      if (matches || deleting || ownerDeleting) {
        claimed.push(obj);
        continue;
      }
      writes.push(
        api
          .patch(
            name,
            { metadata: { ownerReferences: [{ $patch: 'delete', uid }], uid: obj.metadata?.uid } },
            { type: 'strategic' },
          )
          .then(
            () => undefined,
            (err: unknown) => {
              // Gone, or already being deleted (the uid precondition fails as Invalid): nothing to release.
              if (!isNotFound(err) && !isInvalid(err)) throw err;
            },
          ),
      );
      continue;
    }
    if (!matches || deleting || ownerDeleting) continue;
    writes.push(
      api
        .patch(
          name,
          {
            metadata: {
              ownerReferences: [
                {
                  apiVersion: claimer.apiVersion,
                  kind: claimer.kind,
                  name: claimer.owner.metadata?.name ?? '',
                  uid,
                  controller: true,
                  blockOwnerDeletion: true,
                },
              ],
              uid: obj.metadata?.uid,
            },
          },
          { type: 'strategic' },
        )
        .then(
          (adopted) => {
            claimed.push(adopted);
          },
          (err: unknown) => {
            if (!isNotFound(err) && !isInvalid(err)) throw err;
          },
        ),
    );
  }
  const results = await Promise.allSettled(writes);
  const failure = results.find((r) => r.status === 'rejected');
  if (failure) throw (failure as PromiseRejectedResult).reason;
  return claimed;
}

/** The controller owner reference to `owner` that a workload controller puts on what it creates. */
export function controllerRefTo(owner: KubeObject, kind: string, apiVersion = 'apps/v1') {
  return {
    apiVersion,
    kind,
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * Who may adopt `obj`, as a map function of `watches` answers: nothing for an object with a
 * controller or being deleted, else the owners of `kind` in its namespace whose selector matches
 * its labels (their reconcile then adopts it, or, for an empty selector, refuses to).
 *
 * @example
 * ```ts
 * controller(ReplicaSet).watches(Pod, (pod, cache) => adopters(pod, cache, ReplicaSet, selectorOf));
 * ```
 */
export function adopters<O extends KubeObject>(
  obj: KubeObject,
  cache: CacheLister,
  kind: ResourceDescriptor<O>,
  selectorOf: (owner: O) => LabelSelector,
): ReconcileRequest[] {
  if (controllerOf(obj) || obj.metadata?.deletionTimestamp) return [];
  const namespace = obj.metadata?.namespace ?? '';
  return cache
    .list(kind, { namespace })
    .filter((o) => matchesLabels(selectorOf(o), obj.metadata?.labels))
    .map((o) => ({ namespace, name: o.metadata?.name ?? '' }));
}
