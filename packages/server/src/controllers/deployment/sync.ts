/**
 * The steps of one Deployment sync that find, create and scale its ReplicaSets
 * (pkg/controller/deployment/sync.go): the new ReplicaSet and its revision, proportional
 * scaling, the paused conditions, and the clean-up of old revisions.
 */
import { Deployment, isAlreadyExists, isConflict, isNotFound, type ReplicaSet } from 'kubeloop/client';
import { controllerOf, type ReconcileResult } from 'kubeloop/runtime';
import { controllerRefTo } from '../claim.js';
import { withStatus } from '../status-write.js';
import { writeStatus } from './status.js';
import {
  active,
  byCreation,
  created,
  DESIRED,
  getCondition,
  HASH_LABEL,
  hasProgressDeadline,
  MAX_REPLICAS,
  MAX_REVISION_HISTORY_CHARS,
  newCondition,
  podTemplateHash,
  REVISION,
  REVISION_HISTORY,
  revisionOf,
  SKIPPED_ANNOTATIONS,
  type Sync,
  setCondition,
  specReplicas,
  sum,
  templateKey,
} from './util.js';

/**
 * `checkPausedConditions`: Progressing=Unknown with DeploymentPaused / DeploymentResumed,
 * written at once (as Kubernetes does) so that watchers see it even when the same sync then
 * moves on to another reason.
 */
export async function checkPausedConditions(s: Sync): Promise<void> {
  if (!hasProgressDeadline(s.d)) return;
  const cond = getCondition(s.status, 'Progressing');
  // A reported lack of progress is not overwritten.
  if (cond?.reason === 'ProgressDeadlineExceeded') return;
  const pausedCondExists = cond?.reason === 'DeploymentPaused';
  if (s.d.spec?.paused && !pausedCondExists)
    setCondition(
      s.status,
      newCondition('Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused'),
    );
  else if (!s.d.spec?.paused && pausedCondExists)
    setCondition(
      s.status,
      newCondition('Progressing', 'Unknown', 'DeploymentResumed', 'Deployment is resumed'),
    );
  else return;
  const written = await s.client
    .api(Deployment, s.d.metadata?.namespace)
    .updateStatus(withStatus(s.d, { conditions: s.status.conditions }));
  s.d.status = written.status ?? {};
  s.d.metadata = written.metadata;
}

/**
 * `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (the one whose template is the
 * Deployment's; created when `create`) with its revision brought up to date, and the old ones.
 */
export async function replicaSets(
  s: Sync,
  sets: readonly ReplicaSet[],
  create: boolean,
): Promise<{ newRs: ReplicaSet | undefined; old: ReplicaSet[] }> {
  const target = templateKey(s.d.spec?.template);
  const sorted = [...sets].sort(byCreation);
  const existing = sorted.find((rs) => templateKey(rs.spec?.template) === target);
  const old = sorted.filter((rs) => rs !== existing);
  const newRevision = Math.max(0, ...old.map(revisionOf)) + 1;
  if (existing) return { newRs: await syncExisting(s, existing, newRevision), old };
  if (!create) return { newRs: undefined, old };
  return { newRs: await createNew(s, sets, newRevision), old };
}

/** `getNewReplicaSet` for an existing ReplicaSet: annotations, revision (and its history), minReadySeconds. */
async function syncExisting(s: Sync, rs: ReplicaSet, newRevision: number): Promise<ReplicaSet> {
  const annotations: Record<string, string> = { ...rs.metadata?.annotations };
  let changed = false;
  for (const [k, v] of Object.entries(s.d.metadata?.annotations ?? {})) {
    if (SKIPPED_ANNOTATIONS.has(k) || annotations[k] === v) continue;
    annotations[k] = v;
    changed = true;
  }
  const oldRevision = annotations[REVISION];
  const oldRevisionInt = oldRevision === undefined || oldRevision === '' ? 0 : Number(oldRevision);
  if (Number.isInteger(oldRevisionInt) && oldRevisionInt < newRevision) {
    annotations[REVISION] = String(newRevision);
    changed = true;
    // Brought back (a rollback): its former revisions are history.
    if (oldRevision !== undefined) {
      const history = annotations[REVISION_HISTORY] ?? '';
      const revisions = history === '' ? [] : history.split(',');
      revisions.push(oldRevision);
      while (revisions.join(',').length > MAX_REVISION_HISTORY_CHARS) revisions.shift();
      annotations[REVISION_HISTORY] = revisions.join(',');
    }
  }
  const minReady = s.d.spec?.minReadySeconds ?? 0;
  let current = rs;
  if (changed || (rs.spec?.minReadySeconds ?? 0) !== minReady) {
    current = await s.api.patch(rs.metadata?.name ?? '', {
      metadata: { annotations },
      spec: { minReadySeconds: minReady },
    });
  }
  await setDeploymentRevision(s, current.metadata?.annotations?.[REVISION]);
  if (hasProgressDeadline(s.d) && !getCondition(s.status, 'Progressing'))
    setCondition(
      s.status,
      newCondition(
        'Progressing',
        'True',
        'FoundNewReplicaSet',
        `Found new replica set "${current.metadata?.name}"`,
      ),
    );
  return current;
}

/** `getNewReplicaSet` when there is none: creates it with its first replicas. */
async function createNew(
  s: Sync,
  sets: readonly ReplicaSet[],
  newRevision: number,
): Promise<ReplicaSet | undefined> {
  const d = s.d;
  const hash = podTemplateHash(d.spec?.template, d.status?.collisionCount ?? 0);
  const template = structuredClone(d.spec?.template ?? {});
  template.metadata = {
    ...template.metadata,
    labels: { ...template.metadata?.labels, [HASH_LABEL]: hash },
  };
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {}))
    if (!SKIPPED_ANNOTATIONS.has(k)) annotations[k] = v;
  annotations[REVISION] = String(newRevision);
  annotations[DESIRED] = String(s.replicas);
  annotations[MAX_REPLICAS] = String(s.replicas + s.maxSurge);
  const replicas = newRsReplicas(s, sets, undefined);
  const name = `${d.metadata?.name}-${hash}`;
  let rs: ReplicaSet;
  try {
    rs = await s.api.create({
      metadata: {
        name,
        labels: { ...d.spec?.template?.metadata?.labels, [HASH_LABEL]: hash },
        annotations,
        ownerReferences: [controllerRefTo(d, 'Deployment')],
      },
      spec: {
        replicas,
        minReadySeconds: d.spec?.minReadySeconds ?? 0,
        selector: {
          ...d.spec?.selector,
          matchLabels: { ...d.spec?.selector?.matchLabels, [HASH_LABEL]: hash },
        },
        template,
      },
    });
  } catch (err) {
    if (!isAlreadyExists(err)) {
      setCondition(
        s.status,
        newCondition(
          'Progressing',
          'False',
          'ReplicaSetCreateError',
          `Failed to create new replica set "${name}": ${String(err)}`,
        ),
      );
      s.events.event(Deployment, d, 'Warning', 'ReplicaSetCreateError', String(err));
      throw err;
    }
    // A ReplicaSet of that name that is not ours (or of another template): a hash collision.
    // The next hash (with collisionCount bumped) avoids it.
    const other = await s.api.get(name);
    if (
      controllerOf(other)?.uid === d.metadata?.uid &&
      templateKey(other.spec?.template) === templateKey(d.spec?.template)
    )
      return other;
    const written = await s.client
      .api(Deployment, d.metadata?.namespace)
      .updateStatus(withStatus(d, { collisionCount: (d.status?.collisionCount ?? 0) + 1 }));
    s.d.metadata = written.metadata;
    return undefined;
  }
  if (replicas > 0)
    s.events.event(
      Deployment,
      d,
      'Normal',
      'ScalingReplicaSet',
      `Scaled up replica set ${name} from 0 to ${replicas}`,
    );
  await setDeploymentRevision(s, String(newRevision));
  if (hasProgressDeadline(d))
    setCondition(
      s.status,
      newCondition('Progressing', 'True', 'NewReplicaSetCreated', `Created new replica set "${name}"`),
    );
  return rs;
}

/** The Deployment carries the revision of its new ReplicaSet (`kubectl rollout history`). */
async function setDeploymentRevision(s: Sync, revision: string | undefined): Promise<void> {
  if (revision === undefined || s.d.metadata?.annotations?.[REVISION] === revision) return;
  // Through deployments/status, as kube's getNewReplicaSet writes it (UpdateStatus): the status
  // strategy keeps annotations, and the write does not bump the Deployment's generation.
  const updated = await s.client.api(Deployment, s.d.metadata?.namespace).updateStatus({
    ...s.d,
    metadata: { ...s.d.metadata, annotations: { ...s.d.metadata?.annotations, [REVISION]: revision } },
  });
  s.d.metadata = updated.metadata;
}

/** `NewRSNewReplicas`: how many replicas the new ReplicaSet may have now. */
export function newRsReplicas(
  s: Sync,
  all: readonly (ReplicaSet | undefined)[],
  newRs: ReplicaSet | undefined,
): number {
  if (s.d.spec?.strategy?.type === 'Recreate') return s.replicas;
  const current = sum(all, specReplicas);
  const maxTotal = s.replicas + s.maxSurge;
  if (current >= maxTotal) return specReplicas(newRs);
  const up = Math.min(maxTotal - current, s.replicas - specReplicas(newRs));
  return specReplicas(newRs) + up;
}

/** `scaleReplicaSet`: new size and replicas annotations; a `ScalingReplicaSet` event when the size changes. */
export async function scaleTo(
  s: Sync,
  rs: ReplicaSet,
  size: number,
  operation?: 'up' | 'down',
): Promise<ReplicaSet> {
  const from = specReplicas(rs);
  const desired = String(s.replicas);
  const max = String(s.replicas + s.maxSurge);
  const annotations = rs.metadata?.annotations ?? {};
  if (from === size && annotations[DESIRED] === desired && annotations[MAX_REPLICAS] === max) return rs;
  const updated = await s.api.patch(rs.metadata?.name ?? '', {
    metadata: { annotations: { [DESIRED]: desired, [MAX_REPLICAS]: max } },
    spec: { replicas: size },
  });
  if (from !== size)
    s.events.event(
      Deployment,
      s.d,
      'Normal',
      'ScalingReplicaSet',
      `Scaled ${operation ?? (from < size ? 'up' : 'down')} replica set ${rs.metadata?.name} to ${size} from ${from}`,
    );
  return updated;
}

/** `isScalingEvent`: an active ReplicaSet was sized for another `spec.replicas`. */
export async function isScalingEvent(s: Sync, sets: readonly ReplicaSet[]): Promise<boolean> {
  const { newRs, old } = await replicaSets(s, sets, false);
  return active([...old, newRs]).some((rs) => {
    const desired = rs.metadata?.annotations?.[DESIRED];
    return desired !== undefined && Number(desired) !== s.replicas;
  });
}

/** `sync`: scaling only (paused Deployments and changes of `spec.replicas`), then the status. */
export async function sync(s: Sync, sets: readonly ReplicaSet[]): Promise<ReconcileResult> {
  const { newRs, old } = await replicaSets(s, sets, false);
  const all = await scale(s, newRs, old);
  if (s.d.spec?.paused) await cleanup(s, old);
  return writeStatus(s, all.sets, all.newRs, false);
}

/** `scale`: one active ReplicaSet takes every replica; several share a change in proportion to their size. */
async function scale(
  s: Sync,
  newRs: ReplicaSet | undefined,
  oldSets: ReplicaSet[],
): Promise<{ newRs: ReplicaSet | undefined; sets: ReplicaSet[] }> {
  const sets = new Map<string, ReplicaSet>();
  for (const rs of [...oldSets, ...(newRs ? [newRs] : [])]) sets.set(rs.metadata?.uid ?? '', rs);
  const result = () => ({
    newRs: newRs && sets.get(newRs.metadata?.uid ?? ''),
    sets: [...sets.values()],
  });
  const put = (rs: ReplicaSet) => sets.set(rs.metadata?.uid ?? '', rs);
  const all = [...oldSets, ...(newRs ? [newRs] : [])];
  const act = active(all);
  // `FindActiveOrLatest`.
  let activeOrLatest: ReplicaSet | undefined;
  if (act.length === 1) activeOrLatest = act[0];
  else if (act.length === 0) activeOrLatest = newRs ?? [...oldSets].sort(byCreation).at(-1);
  if (activeOrLatest) {
    if (specReplicas(activeOrLatest) !== s.replicas) put(await scaleTo(s, activeOrLatest, s.replicas));
    return result();
  }
  // `IsSaturated`: the new ReplicaSet has them all, available: the old ones go.
  if (
    newRs &&
    specReplicas(newRs) === s.replicas &&
    newRs.metadata?.annotations?.[DESIRED] === String(s.replicas) &&
    (newRs.status?.availableReplicas ?? 0) === s.replicas
  ) {
    for (const rs of active(oldSets)) put(await scaleTo(s, rs, 0));
    return result();
  }
  if (s.d.spec?.strategy?.type === 'Recreate') return result();
  const allowed = s.replicas > 0 ? s.replicas + s.maxSurge : 0;
  const toAdd = allowed - sum(act, specReplicas);
  if (toAdd === 0) return result();
  // Larger first; of equal size, newer first when growing, older first when shrinking.
  act.sort(
    (a, b) =>
      specReplicas(b) - specReplicas(a) || (toAdd > 0 ? created(b) - created(a) : created(a) - created(b)),
  );
  let added = 0;
  const sizes = act.map((rs) => {
    const share = proportion(s, rs, toAdd, added);
    added += share;
    return specReplicas(rs) + share;
  });
  for (const [i, rs] of act.entries()) {
    let size = sizes[i] ?? 0;
    // The leftover goes to the largest.
    if (i === 0) size = Math.max(0, size + toAdd - added);
    put(await scaleTo(s, rs, size, toAdd > 0 ? 'up' : 'down'));
  }
  return result();
}

/** `GetReplicaSetProportion`. */
function proportion(s: Sync, rs: ReplicaSet, toAdd: number, added: number): number {
  if (specReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  if (s.replicas === 0) fraction = -specReplicas(rs);
  else {
    let before = Number(rs.metadata?.annotations?.[MAX_REPLICAS] ?? 0) || 0;
    if (before === 0) before = s.d.status?.replicas ?? 0;
    fraction =
      before === 0
        ? 0
        : Math.round((specReplicas(rs) * (s.replicas + s.maxSurge)) / before) - specReplicas(rs);
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/** `cleanupDeployment`: the oldest ReplicaSets beyond `revisionHistoryLimit` go, if empty. */
export async function cleanup(s: Sync, old: readonly ReplicaSet[]): Promise<void> {
  const limit = s.d.spec?.revisionHistoryLimit;
  if (limit === undefined || limit === null) return;
  const cleanable = old.filter((rs) => !rs.metadata?.deletionTimestamp);
  const diff = cleanable.length - limit;
  if (diff <= 0) return;
  cleanable.sort((a, b) => revisionOf(a) - revisionOf(b) || byCreation(a, b));
  for (const rs of cleanable.slice(0, diff)) {
    if (
      (rs.status?.replicas ?? 0) !== 0 ||
      specReplicas(rs) !== 0 ||
      (rs.metadata?.generation ?? 0) > (rs.status?.observedGeneration ?? 0)
    )
      continue;
    try {
      await s.api.delete(rs.metadata?.name ?? '', { preconditions: { uid: rs.metadata?.uid ?? '' } });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }
}
