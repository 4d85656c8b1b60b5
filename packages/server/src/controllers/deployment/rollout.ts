/**
 * The two rollout strategies of a Deployment (pkg/controller/deployment/rolling.go, recreate.go).
 */
import type { ReplicaSet } from 'kubeloop/client';
import type { ReconcileResult } from 'kubeloop/runtime';
import { writeStatus } from './status.js';
import { cleanup, newRsReplicas, replicaSets, scaleTo } from './sync.js';
import { byCreation, deploymentComplete, type Sync, specReplicas, sum } from './util.js';

/** `rolloutRolling`: surge the new ReplicaSet, else retire old pods as availability allows. */
export async function rolloutRolling(s: Sync, sets: readonly ReplicaSet[]): Promise<ReconcileResult> {
  const { newRs: created, old } = await replicaSets(s, sets, true);
  let newRs = created;
  let oldSets = old;
  const all = () => [...oldSets, ...(newRs ? [newRs] : [])];
  // Scale up, if we can.
  if (newRs && specReplicas(newRs) !== s.replicas) {
    const before = specReplicas(newRs);
    const target = before > s.replicas ? s.replicas : newRsReplicas(s, all(), newRs);
    if (target !== before) {
      newRs = await scaleTo(s, newRs, target);
      return writeStatus(s, all(), newRs, true);
    }
  }
  // Scale down, if we can (`reconcileOldReplicaSets`).
  if (sum(oldSets, specReplicas) > 0) {
    const minAvailable = s.replicas - s.maxUnavailable;
    const newUnavailable = specReplicas(newRs) - (newRs?.status?.availableReplicas ?? 0);
    const maxScaledDown = sum(all(), specReplicas) - minAvailable - newUnavailable;
    if (maxScaledDown > 0) {
      let scaledDown = 0;
      const replace = (rs: ReplicaSet) => {
        oldSets = oldSets.map((o) => (o.metadata?.uid === rs.metadata?.uid ? rs : o));
      };
      // Unhealthy old replicas first (`cleanupUnhealthyReplicas`).
      for (const rs of [...oldSets].sort(byCreation)) {
        if (scaledDown >= maxScaledDown) break;
        const unhealthy = specReplicas(rs) - (rs.status?.availableReplicas ?? 0);
        if (specReplicas(rs) === 0 || unhealthy <= 0) continue;
        const cut = Math.min(maxScaledDown - scaledDown, unhealthy);
        replace(await scaleTo(s, rs, specReplicas(rs) - cut));
        scaledDown += cut;
      }
      // Then available ones, above the minimum (`scaleDownOldReplicaSetsForRollingUpdate`).
      const availableNow = sum(all(), (rs) => rs.status?.availableReplicas);
      if (availableNow > minAvailable) {
        const budget = availableNow - minAvailable;
        let cutTotal = 0;
        for (const rs of [...oldSets].sort(byCreation)) {
          if (cutTotal >= budget) break;
          if (specReplicas(rs) === 0) continue;
          const cut = Math.min(specReplicas(rs), budget - cutTotal);
          replace(await scaleTo(s, rs, specReplicas(rs) - cut));
          cutTotal += cut;
        }
        scaledDown += cutTotal;
      }
      if (scaledDown > 0) return writeStatus(s, all(), newRs, true);
    }
  }
  if (deploymentComplete(s.d, s.d.status ?? {})) await cleanup(s, oldSets);
  return writeStatus(s, all(), newRs, true);
}

/** `rolloutRecreate`: the old ReplicaSets to zero, and once their pods are gone, the new one up. */
export async function rolloutRecreate(s: Sync, sets: readonly ReplicaSet[]): Promise<ReconcileResult> {
  let { newRs, old } = await replicaSets(s, sets, false);
  const all = () => [...old, ...(newRs ? [newRs] : [])];
  let scaledDown = false;
  const next: ReplicaSet[] = [];
  for (const rs of old) {
    if (specReplicas(rs) > 0) {
      next.push(await scaleTo(s, rs, 0));
      scaledDown = true;
    } else next.push(rs);
  }
  old = next;
  // The old pods must be gone (the ReplicaSets count their pods in status) before new ones start.
  if (scaledDown || old.some((rs) => (rs.status?.replicas ?? 0) > 0))
    return writeStatus(s, all(), newRs, true);
  if (!newRs) ({ newRs, old } = await replicaSets(s, sets, true));
  if (newRs && specReplicas(newRs) !== s.replicas) newRs = await scaleTo(s, newRs, s.replicas);
  if (deploymentComplete(s.d, s.d.status ?? {})) await cleanup(s, old);
  return writeStatus(s, all(), newRs, true);
}
