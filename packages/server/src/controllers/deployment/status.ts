/**
 * The status of a Deployment (`calculateStatus`, `syncRolloutStatus`), and when to look again at
 * a rollout before its progress deadline passes (pkg/controller/deployment/progress.go).
 */
import { Deployment, isNotFound, type ReplicaSet } from 'kubeloop/client';
import type { ReconcileResult } from 'kubeloop/runtime';
import { withStatus } from '../status-write.js';
import {
  comparable,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  getCondition,
  hasProgressDeadline,
  newCondition,
  omitZeros,
  removeCondition,
  type Status,
  type Sync,
  setCondition,
  specReplicas,
  sum,
  untilDeadline,
} from './util.js';

/**
 * `calculateStatus`, and with `rollout` the Progressing condition of `syncRolloutStatus`;
 * written when it differs from the stored status. A rollout that is neither complete nor timed
 * out is looked at again when its deadline passes.
 */
export async function writeStatus(
  s: Sync,
  sets: readonly (ReplicaSet | undefined)[],
  newRs: ReplicaSet | undefined,
  rollout: boolean,
): Promise<ReconcileResult> {
  const d = s.d;
  const all = sets.filter((rs): rs is ReplicaSet => !!rs);
  const available = sum(all, (rs) => rs.status?.availableReplicas);
  const status: Status = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: sum(all, (rs) => rs.status?.replicas),
    updatedReplicas: newRs?.status?.replicas ?? 0,
    readyReplicas: sum(all, (rs) => rs.status?.readyReplicas),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, sum(all, specReplicas) - available),
    ...(s.status.conditions && { conditions: s.status.conditions }),
    ...(d.status?.collisionCount !== undefined && { collisionCount: d.status.collisionCount }),
  };
  if (available >= s.replicas - s.maxUnavailable)
    setCondition(
      status,
      newCondition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
    );
  else
    setCondition(
      status,
      newCondition(
        'Available',
        'False',
        'MinimumReplicasUnavailable',
        'Deployment does not have minimum availability.',
      ),
    );

  if (rollout) {
    if (!hasProgressDeadline(d)) removeCondition(status, 'Progressing');
    const current = getCondition(s.status, 'Progressing');
    const completeBefore =
      status.replicas === status.updatedReplicas && current?.reason === 'NewReplicaSetAvailable';
    if (hasProgressDeadline(d) && !completeBefore) {
      const rsName = newRs?.metadata?.name;
      if (deploymentComplete(d, status)) {
        setCondition(
          status,
          newCondition(
            'Progressing',
            'True',
            'NewReplicaSetAvailable',
            rsName
              ? `ReplicaSet "${rsName}" has successfully progressed.`
              : `Deployment "${d.metadata?.name}" has successfully progressed.`,
          ),
        );
      } else if (deploymentProgressing(d, status)) {
        const c = newCondition(
          'Progressing',
          'True',
          'ReplicaSetUpdated',
          rsName
            ? `ReplicaSet "${rsName}" is progressing.`
            : `Deployment "${d.metadata?.name}" is progressing.`,
        );
        // Progress refreshes lastUpdateTime even with the same reason.
        if (current?.status === 'True') c.lastTransitionTime = current.lastTransitionTime;
        removeCondition(status, 'Progressing');
        setCondition(status, c);
      } else if (deploymentTimedOut(d, status)) {
        setCondition(
          status,
          newCondition(
            'Progressing',
            'False',
            'ProgressDeadlineExceeded',
            rsName
              ? `ReplicaSet "${rsName}" has timed out progressing.`
              : `Deployment "${d.metadata?.name}" has timed out progressing.`,
          ),
        );
      }
    }
  }

  if (comparable(status) === comparable(d.status ?? {})) return rollout ? requeueStuck(s, status) : undefined;
  try {
    // A stale Deployment (409) makes the reconcile run again.
    await s.client
      .api(Deployment, d.metadata?.namespace)
      .updateStatus(withStatus(d, omitZeros(status) as Record<string, unknown>, { replace: true }));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** `requeueStuckDeployment`: look again when the progress deadline passes. */
function requeueStuck(s: Sync, status: Status): ReconcileResult {
  const c = getCondition(status, 'Progressing');
  if (!c || c.reason === 'NewReplicaSetAvailable' || c.reason === 'ProgressDeadlineExceeded')
    return undefined;
  if (deploymentComplete(s.d, status)) return undefined;
  const after = untilDeadline(s.d, status);
  if (after === undefined) return undefined;
  return { requeueAfter: Math.max(0, after) + 5 };
}
