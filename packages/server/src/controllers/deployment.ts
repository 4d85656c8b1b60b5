/**
 * The Deployment controller of kube-controller-manager (pkg/controller/deployment): one
 * ReplicaSet per pod template (named `<deployment>-<pod-template-hash>`), rolled out with the
 * RollingUpdate or Recreate strategy; proportional scaling; pause and resume; revisions in
 * `deployment.kubernetes.io/revision` (a ReplicaSet brought back by `kubectl rollout undo`
 * gets the next revision and remembers its old ones in `…/revision-history`); old ReplicaSets
 * beyond `revisionHistoryLimit` deleted; `progressDeadlineSeconds`; the status and conditions
 * `kubectl rollout status` reads; `ScalingReplicaSet` events.
 */
import { isEverything, isNothing } from 'kubeloop/api';
import { Deployment, isConflict, ReplicaSet } from 'kubeloop/client';
import {
  type ControllerDefinition,
  controller,
  defaultControllerRateLimiter,
  type ReconcileContext,
  type ReconcileResult,
} from 'kubeloop/runtime';
import { adopters, claim } from './claim.js';
import { rolloutRecreate, rolloutRolling } from './deployment/rollout.js';
import { writeStatus } from './deployment/status.js';
import { checkPausedConditions, isScalingEvent, replicaSets, sync } from './deployment/sync.js';
import { fenceposts, type Sync } from './deployment/util.js';
import type { ControllerEvents } from './events.js';
import { cachedSelector } from './selectors.js';

export { fenceposts, podTemplateHash } from './deployment/util.js';

/** Options of {@link deploymentController}. */
export interface DeploymentControllerOptions {
  /** Records the core/v1 Events (`ScalingReplicaSet`, …) as `deployment-controller`. */
  events: ControllerEvents;
}

/**
 * The Deployment controller (`deployment`): owns its ReplicaSets; an orphan ReplicaSet
 * reconciles the Deployments of its namespace whose selector matches its labels.
 */
export function deploymentController(options: DeploymentControllerOptions): ControllerDefinition<Deployment> {
  return controller(Deployment)
    .named('deployment')
    .withOptions({
      maxConcurrentReconciles: 2,
      rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
    })
    .owns(ReplicaSet)
    .watches(ReplicaSet, (rs, cache) =>
      adopters(rs, cache, Deployment, (d) => cachedSelector(d.spec?.selector)),
    )
    .reconcile(async (d, ctx) => {
      try {
        // A shallow copy: the sync replaces the copy's metadata and status after its writes and
        // mutates nothing below them (the cached object is frozen; a write into it would throw).
        return await syncDeployment({ ...d }, options.events, ctx);
      } catch (err) {
        // A conflict is a race the next try resolves: retried without a complaint in the log.
        if (isConflict(err)) return { requeue: true };
        throw err;
      }
    });
}

/** One Deployment (`syncDeployment`), a shallow copy of the cached one: its ReplicaSets claimed, one rollout or scaling step, its status. */
async function syncDeployment(
  d: Deployment,
  events: ControllerEvents,
  { client, cache }: ReconcileContext,
): Promise<ReconcileResult> {
  const namespace = d.metadata?.namespace ?? '';
  const api = client.api(ReplicaSet, namespace);
  const selector = cachedSelector(d.spec?.selector);
  // An empty selector would select every ReplicaSet of the namespace: Kubernetes refuses to act.
  if (isEverything(selector) || isNothing(selector)) return undefined;
  const sets = await claim(
    { owner: d, apiVersion: 'apps/v1', kind: 'Deployment', selector },
    await cache.list(ReplicaSet, { namespace }),
    api,
  );
  const s: Sync = {
    d,
    status: structuredClone(d.status ?? {}),
    api,
    replicas: d.spec?.replicas ?? 1,
    ...fenceposts(d),
    client,
    events,
  };

  if (d.metadata?.deletionTimestamp) {
    const { newRs, old } = await replicaSets(s, sets, false);
    return writeStatus(s, [...old, newRs], newRs, false);
  }
  await checkPausedConditions(s);
  if (d.spec?.paused) return sync(s, sets);
  if (await isScalingEvent(s, sets)) return sync(s, sets);
  if (d.spec?.strategy?.type === 'Recreate') return rolloutRecreate(s, sets);
  return rolloutRolling(s, sets);
}
