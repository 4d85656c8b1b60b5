/**
 * The Deployment controller of kube-controller-manager (pkg/controller/deployment): one
 * ReplicaSet per pod template (named `<deployment>-<pod-template-hash>`), rolled out with the
 * RollingUpdate or Recreate strategy; proportional scaling; pause and resume; revisions in
 * `deployment.kubernetes.io/revision` (a ReplicaSet brought back by `kubectl rollout undo`
 * gets the next revision and remembers its old ones in `…/revision-history`); old ReplicaSets
 * beyond `revisionHistoryLimit` deleted; `progressDeadlineSeconds`; the status and conditions
 * `kubectl rollout status` reads; `ScalingReplicaSet` events.
 */
import { setMaxListeners } from 'node:events';
import { isEverything, isNothing, labelSelectorFromObject, matchesLabels } from 'kubeloop/api';
import type { Client, ResourceApi } from 'kubeloop/client';
import { Deployment, isAlreadyExists, isConflict, isNotFound, ReplicaSet } from 'kubeloop/client';
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
import { safeEncodeString } from './history.js';
import type { ControllerLog } from './log.js';
import { runWorker } from './worker.js';

const HASH_LABEL = 'pod-template-hash';
const REVISION = 'deployment.kubernetes.io/revision';
const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
const DESIRED = 'deployment.kubernetes.io/desired-replicas';
const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
/** `maxRevHistoryLengthInChars` of kube-controller-manager. */
const MAX_REVISION_HISTORY_CHARS = 2000;
/** Deployment annotations never copied to its ReplicaSets (`annotationsToSkip`). */
const SKIPPED_ANNOTATIONS = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  REVISION_HISTORY,
  DESIRED,
  MAX_REPLICAS,
  'deprecated.deployment.rollback.to',
]);

type Status = NonNullable<Deployment['status']>;
type Condition = NonNullable<Status['conditions']>[number];

/** JSON with sorted keys: equal templates hash equally whatever their key order. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The `pod-template-hash` of a template: FNV-32a, written with Kubernetes' `SafeEncodeString` alphabet. */
export function podTemplateHash(template: unknown, collisionCount = 0): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(stableJson(template) + (collisionCount ? String(collisionCount) : ''))) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return safeEncodeString(String(h));
}

/** An int-or-percent of `replicas` (Kubernetes' `GetScaledValueFromIntOrPercent`). */
function scaled(
  v: number | string | undefined,
  fallback: string,
  replicas: number,
  roundUp: boolean,
): number {
  const x = v ?? fallback;
  if (typeof x === 'number') return x;
  const pct = Number.parseInt(x, 10);
  if (!x.endsWith('%') || Number.isNaN(pct)) return 0;
  const exact = (pct * replicas) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** `ResolveFenceposts`: maxSurge and maxUnavailable of a rolling update (0 and 0 for Recreate). */
export function fenceposts(d: Deployment): { maxSurge: number; maxUnavailable: number } {
  if (d.spec?.strategy?.type === 'Recreate') return { maxSurge: 0, maxUnavailable: 0 };
  const replicas = d.spec?.replicas ?? 1;
  const ru = d.spec?.strategy?.rollingUpdate;
  const maxSurge = scaled(ru?.maxSurge, '25%', replicas, true);
  let maxUnavailable = scaled(ru?.maxUnavailable, '25%', replicas, false);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  // `MaxUnavailable`: never more than the replicas, and none for an empty Deployment.
  if (replicas === 0) maxUnavailable = 0;
  return { maxSurge, maxUnavailable: Math.min(maxUnavailable, replicas) };
}

const revisionOf = (rs: ReplicaSet): number => Number(rs.metadata?.annotations?.[REVISION] ?? 0) || 0;
const specReplicas = (rs: ReplicaSet | undefined): number => rs?.spec?.replicas ?? 0;
const created = (rs: ReplicaSet): number => Date.parse(rs.metadata?.creationTimestamp ?? '') || 0;
const byCreation = (a: ReplicaSet, b: ReplicaSet): number =>
  created(a) - created(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
const active = (sets: readonly (ReplicaSet | undefined)[]): ReplicaSet[] =>
  sets.filter((rs): rs is ReplicaSet => !!rs && specReplicas(rs) > 0);
const sum = (sets: readonly (ReplicaSet | undefined)[], f: (rs: ReplicaSet) => number | undefined) =>
  sets.reduce((n, rs) => n + (rs ? (f(rs) ?? 0) : 0), 0);
const now = (): string => `${new Date().toISOString().slice(0, 19)}Z`;

/** Strips the hash label, so that a ReplicaSet's template compares with its Deployment's (`EqualIgnoreHash`). */
function withoutHash(template: unknown): unknown {
  const t = structuredClone(template ?? {}) as { metadata?: { labels?: Record<string, string> } };
  if (t.metadata?.labels) {
    delete t.metadata.labels[HASH_LABEL];
    if (Object.keys(t.metadata.labels).length === 0) delete t.metadata.labels;
  }
  return t;
}

/** `HasProgressDeadline`: set and not MaxInt32. */
const hasProgressDeadline = (d: Deployment): boolean =>
  typeof d.spec?.progressDeadlineSeconds === 'number' && d.spec.progressDeadlineSeconds !== 2147483647;

const getCondition = (s: Status, type: string): Condition | undefined =>
  s.conditions?.find((c) => c.type === type);

function newCondition(type: string, status: string, reason: string, message: string): Condition {
  const t = now();
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

/** `SetDeploymentCondition`: a condition of the same status and reason is kept as it is. */
function setCondition(s: Status, c: Condition): void {
  const cur = getCondition(s, c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  const next = cur && cur.status === c.status ? { ...c, lastTransitionTime: cur.lastTransitionTime } : c;
  s.conditions = [...(s.conditions ?? []).filter((x) => x.type !== c.type), next];
}

const removeCondition = (s: Status, type: string): void => {
  s.conditions = (s.conditions ?? []).filter((c) => c.type !== type);
};

/** `DeploymentComplete`: every replica updated and available, and the latest generation observed. */
function deploymentComplete(d: Deployment, s: Status): boolean {
  const replicas = d.spec?.replicas ?? 1;
  return (
    (s.updatedReplicas ?? 0) === replicas &&
    (s.replicas ?? 0) === replicas &&
    (s.availableReplicas ?? 0) === replicas &&
    (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  );
}

/** `DeploymentProgressing`: more updated, ready or available replicas, or fewer old ones, than last seen. */
function deploymentProgressing(d: Deployment, s: Status): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (
    (s.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (s.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (s.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** Milliseconds until the Progressing condition of `s` passes the deadline (≤ 0: passed). */
function untilDeadline(d: Deployment, s: Status): number | undefined {
  const c = getCondition(s, 'Progressing');
  if (!c || !hasProgressDeadline(d)) return undefined;
  const from = Date.parse(c.lastUpdateTime ?? '');
  if (Number.isNaN(from)) return undefined;
  return from + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 - Date.now();
}

/** `DeploymentTimedOut`. */
function deploymentTimedOut(d: Deployment, s: Status): boolean {
  const c = getCondition(s, 'Progressing');
  if (!c || !hasProgressDeadline(d) || c.reason === 'NewReplicaSetAvailable') return false;
  if (c.reason === 'ProgressDeadlineExceeded') return true;
  // The deadline passes strictly after lastUpdateTime + progressDeadlineSeconds.
  return (untilDeadline(d, s) ?? 1) < 0;
}

/** The status as it would be stored: zero counts are omitted (omitempty). */
function comparable(s: Status): string {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) if (v !== undefined && v !== 0 && v !== null) out[k] = v;
  return stableJson(out);
}

/** One sync of one Deployment: the object (a mutable copy), its status being built, its ReplicaSets. */
interface Sync {
  d: Deployment;
  status: Status;
  api: ResourceApi<ReplicaSet>;
  replicas: number;
  maxSurge: number;
  maxUnavailable: number;
}

/** The Deployment controller: informers on Deployments and ReplicaSets, a queue of Deployments, {@link DeploymentController.reconcile}. */
export class DeploymentController {
  private readonly deployments: Informer<Deployment>;
  private readonly sets: Informer<ReplicaSet>;
  private readonly queue = new WorkQueue<string>({
    name: 'deployment',
    rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
  });
  private readonly abort = new AbortController();
  private workers: Promise<void>[] = [];
  private readonly log: ControllerLog;
  private readonly events: ControllerEvents;

  constructor(
    private readonly client: Client,
    options: { log?: ControllerLog } = {},
  ) {
    this.log = options.log ?? (() => undefined);
    this.events = new ControllerEvents(client, 'deployment-controller', this.log);
    setMaxListeners(0, this.abort.signal);
    this.deployments = new Informer(client.api(Deployment, ''), {});
    this.sets = new Informer(client.api(ReplicaSet, ''), {});
    this.deployments.addEventHandler({
      onAdd: (d) => this.queue.add(objectKey(d)),
      onUpdate: (_o, d) => this.queue.add(objectKey(d)),
      onDelete: (d) => this.queue.add(objectKey(d)),
    });
    // A ReplicaSet concerns its controller, or, when it has none, the Deployments that could adopt it.
    const owner = (rs: ReplicaSet) => {
      const ref = controllerOf(rs);
      const ns = rs.metadata?.namespace ?? '';
      if (ref) {
        if (ref.kind === 'Deployment') this.queue.add(`${ns}/${ref.name}`);
        return;
      }
      for (const d of this.deployments.store.byIndex(NAMESPACE_INDEX, ns))
        if (matchesLabels(labelSelectorFromObject(d.spec?.selector), rs.metadata?.labels))
          this.queue.add(objectKey(d));
    };
    this.sets.addEventHandler({
      onAdd: owner,
      onUpdate: (o, rs) => {
        owner(rs);
        if (controllerOf(o)?.uid !== controllerOf(rs)?.uid) owner(o);
      },
      onDelete: owner,
    });
  }

  start(): void {
    this.deployments.start(this.abort.signal);
    this.sets.start(this.abort.signal);
    for (let i = 0; i < 2; i++) this.workers.push(this.work());
  }

  /** Resolves once the controller's caches hold their first lists (the test environment waits for it). */
  async waitForSync(): Promise<void> {
    await Promise.all([this.deployments.waitForSync(), this.sets.waitForSync()]);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    const closing = this.events.close();
    await this.queue.shutdown();
    await Promise.all(this.workers);
    await Promise.all([this.deployments.stop(), this.sets.stop(), closing]);
  }

  private work(): Promise<void> {
    return runWorker(this.queue, this.abort.signal, (k) => this.reconcile(k), {
      log: this.log,
      message: 'deployment sync failed; retrying',
    });
  }

  /** One Deployment (`syncDeployment`): its ReplicaSets claimed, one rollout or scaling step, its status. */
  async reconcile(key: string): Promise<void> {
    if (!this.deployments.hasSynced || !this.sets.hasSynced)
      await Promise.all([this.deployments.waitForSync(), this.sets.waitForSync()]);
    const { namespace = '', name } = splitKey(key);
    const cached = this.deployments.store.get(name, namespace);
    if (!cached) return;
    const d = structuredClone(cached) as Deployment;
    const api = this.client.api(ReplicaSet, namespace);
    const selector = labelSelectorFromObject(d.spec?.selector);
    // An empty selector would select every ReplicaSet of the namespace: Kubernetes refuses to act.
    if (isEverything(selector) || isNothing(selector)) return;
    const sets = await claim(
      { owner: d, apiVersion: 'apps/v1', kind: 'Deployment', selector },
      this.sets.store.byIndex(NAMESPACE_INDEX, namespace),
      api,
    );
    const s: Sync = {
      d,
      status: structuredClone(d.status ?? {}),
      api,
      replicas: d.spec?.replicas ?? 1,
      ...fenceposts(d),
    };

    if (d.metadata?.deletionTimestamp) {
      const { newRs, old } = await this.replicaSets(s, sets, false);
      return this.writeStatus(s, [...old, newRs], newRs, false);
    }
    await this.checkPausedConditions(s);
    if (d.spec?.paused) return this.sync(s, sets);
    if (await this.isScalingEvent(s, sets)) return this.sync(s, sets);
    if (d.spec?.strategy?.type === 'Recreate') return this.rolloutRecreate(s, sets);
    return this.rolloutRolling(s, sets);
  }

  /**
   * `checkPausedConditions`: Progressing=Unknown with DeploymentPaused / DeploymentResumed,
   * written at once (as Kubernetes does) so that watchers see it even when the same sync then
   * moves on to another reason.
   */
  private async checkPausedConditions(s: Sync): Promise<void> {
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
    const written = await this.client
      .api(Deployment, s.d.metadata?.namespace)
      .patchStatus(
        s.d.metadata?.name ?? '',
        [{ op: 'replace', path: '/status/conditions', value: s.status.conditions }],
        { type: 'json' },
      );
    s.d.status = written.status ?? {};
  }

  /**
   * `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (the one whose template is the
   * Deployment's; created when `create`) with its revision brought up to date, and the old ones.
   */
  private async replicaSets(
    s: Sync,
    sets: readonly ReplicaSet[],
    create: boolean,
  ): Promise<{ newRs: ReplicaSet | undefined; old: ReplicaSet[] }> {
    const target = stableJson(withoutHash(s.d.spec?.template));
    const sorted = [...sets].sort(byCreation);
    const existing = sorted.find((rs) => stableJson(withoutHash(rs.spec?.template)) === target);
    const old = sorted.filter((rs) => rs !== existing);
    const newRevision = Math.max(0, ...old.map(revisionOf)) + 1;
    if (existing) return { newRs: await this.syncExisting(s, existing, newRevision), old };
    if (!create) return { newRs: undefined, old };
    return { newRs: await this.createNew(s, sets, newRevision), old };
  }

  /** `getNewReplicaSet` for an existing ReplicaSet: annotations, revision (and its history), minReadySeconds. */
  private async syncExisting(s: Sync, rs: ReplicaSet, newRevision: number): Promise<ReplicaSet> {
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
    await this.setDeploymentRevision(s, current.metadata?.annotations?.[REVISION]);
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
  private async createNew(
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
    const replicas = this.newRsReplicas(s, sets, undefined);
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
        this.events.event(Deployment, d, 'Warning', 'ReplicaSetCreateError', String(err));
        throw err;
      }
      // A ReplicaSet of that name that is not ours (or of another template): a hash collision.
      // The next hash (with collisionCount bumped) avoids it.
      const other = await s.api.get(name);
      if (
        controllerOf(other)?.uid === d.metadata?.uid &&
        stableJson(withoutHash(other.spec?.template)) === stableJson(withoutHash(d.spec?.template))
      )
        return other;
      await this.client.api(Deployment, d.metadata?.namespace).patchStatus(d.metadata?.name ?? '', {
        status: { collisionCount: (d.status?.collisionCount ?? 0) + 1 },
      });
      return undefined;
    }
    if (replicas > 0)
      this.events.event(
        Deployment,
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled up replica set ${name} from 0 to ${replicas}`,
      );
    await this.setDeploymentRevision(s, String(newRevision));
    if (hasProgressDeadline(d))
      setCondition(
        s.status,
        newCondition('Progressing', 'True', 'NewReplicaSetCreated', `Created new replica set "${name}"`),
      );
    return rs;
  }

  /** The Deployment carries the revision of its new ReplicaSet (`kubectl rollout history`). */
  private async setDeploymentRevision(s: Sync, revision: string | undefined): Promise<void> {
    if (revision === undefined || s.d.metadata?.annotations?.[REVISION] === revision) return;
    const updated = await this.client
      .api(Deployment, s.d.metadata?.namespace)
      .patch(s.d.metadata?.name ?? '', { metadata: { annotations: { [REVISION]: revision } } });
    s.d.metadata = { ...s.d.metadata, annotations: updated.metadata?.annotations ?? {} };
  }

  /** `NewRSNewReplicas`: how many replicas the new ReplicaSet may have now. */
  private newRsReplicas(
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
  private async scaleTo(
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
      this.events.event(
        Deployment,
        s.d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${operation ?? (from < size ? 'up' : 'down')} replica set ${rs.metadata?.name} to ${size} from ${from}`,
      );
    return updated;
  }

  /** `isScalingEvent`: an active ReplicaSet was sized for another `spec.replicas`. */
  private async isScalingEvent(s: Sync, sets: readonly ReplicaSet[]): Promise<boolean> {
    const { newRs, old } = await this.replicaSets(s, sets, false);
    return active([...old, newRs]).some((rs) => {
      const desired = rs.metadata?.annotations?.[DESIRED];
      return desired !== undefined && Number(desired) !== s.replicas;
    });
  }

  /** `sync`: scaling only (paused Deployments and changes of `spec.replicas`), then the status. */
  private async sync(s: Sync, sets: readonly ReplicaSet[]): Promise<void> {
    const { newRs, old } = await this.replicaSets(s, sets, false);
    const all = await this.scale(s, newRs, old);
    if (s.d.spec?.paused) await this.cleanup(s, old);
    await this.writeStatus(s, all.sets, all.newRs, false);
  }

  /** `scale`: one active ReplicaSet takes every replica; several share a change in proportion to their size. */
  private async scale(
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
      if (specReplicas(activeOrLatest) !== s.replicas) put(await this.scaleTo(s, activeOrLatest, s.replicas));
      return result();
    }
    // `IsSaturated`: the new ReplicaSet has them all, available: the old ones go.
    if (
      newRs &&
      specReplicas(newRs) === s.replicas &&
      newRs.metadata?.annotations?.[DESIRED] === String(s.replicas) &&
      (newRs.status?.availableReplicas ?? 0) === s.replicas
    ) {
      for (const rs of active(oldSets)) put(await this.scaleTo(s, rs, 0));
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
      const proportion = this.proportion(s, rs, toAdd, added);
      added += proportion;
      return specReplicas(rs) + proportion;
    });
    for (const [i, rs] of act.entries()) {
      let size = sizes[i] ?? 0;
      // The leftover goes to the largest.
      if (i === 0) size = Math.max(0, size + toAdd - added);
      put(await this.scaleTo(s, rs, size, toAdd > 0 ? 'up' : 'down'));
    }
    return result();
  }

  /** `GetReplicaSetProportion`. */
  private proportion(s: Sync, rs: ReplicaSet, toAdd: number, added: number): number {
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

  /** `rolloutRolling`: surge the new ReplicaSet, else retire old pods as availability allows. */
  private async rolloutRolling(s: Sync, sets: readonly ReplicaSet[]): Promise<void> {
    const { newRs: created, old } = await this.replicaSets(s, sets, true);
    let newRs = created;
    let oldSets = old;
    const all = () => [...oldSets, ...(newRs ? [newRs] : [])];
    // Scale up, if we can.
    if (newRs && specReplicas(newRs) !== s.replicas) {
      const before = specReplicas(newRs);
      const target = before > s.replicas ? s.replicas : this.newRsReplicas(s, all(), newRs);
      if (target !== before) {
        newRs = await this.scaleTo(s, newRs, target);
        return this.writeStatus(s, all(), newRs, true);
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
          replace(await this.scaleTo(s, rs, specReplicas(rs) - cut));
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
            replace(await this.scaleTo(s, rs, specReplicas(rs) - cut));
            cutTotal += cut;
          }
          scaledDown += cutTotal;
        }
        if (scaledDown > 0) return this.writeStatus(s, all(), newRs, true);
      }
    }
    if (deploymentComplete(s.d, s.d.status ?? {})) await this.cleanup(s, oldSets);
    await this.writeStatus(s, all(), newRs, true);
  }

  /** `rolloutRecreate`: the old ReplicaSets to zero, and once their pods are gone, the new one up. */
  private async rolloutRecreate(s: Sync, sets: readonly ReplicaSet[]): Promise<void> {
    let { newRs, old } = await this.replicaSets(s, sets, false);
    const all = () => [...old, ...(newRs ? [newRs] : [])];
    let scaledDown = false;
    const next: ReplicaSet[] = [];
    for (const rs of old) {
      if (specReplicas(rs) > 0) {
        next.push(await this.scaleTo(s, rs, 0));
        scaledDown = true;
      } else next.push(rs);
    }
    old = next;
    // The old pods must be gone (the ReplicaSets count their pods in status) before new ones start.
    if (scaledDown || old.some((rs) => (rs.status?.replicas ?? 0) > 0))
      return this.writeStatus(s, all(), newRs, true);
    if (!newRs) ({ newRs, old } = await this.replicaSets(s, sets, true));
    if (newRs && specReplicas(newRs) !== s.replicas) newRs = await this.scaleTo(s, newRs, s.replicas);
    if (deploymentComplete(s.d, s.d.status ?? {})) await this.cleanup(s, old);
    await this.writeStatus(s, all(), newRs, true);
  }

  /** `cleanupDeployment`: the oldest ReplicaSets beyond `revisionHistoryLimit` go, if empty. */
  private async cleanup(s: Sync, old: readonly ReplicaSet[]): Promise<void> {
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

  /**
   * `calculateStatus`, and with `rollout` the Progressing condition of `syncRolloutStatus`;
   * written when it differs from the stored status. A rollout that is neither complete nor timed
   * out is looked at again when its deadline passes.
   */
  private async writeStatus(
    s: Sync,
    sets: readonly (ReplicaSet | undefined)[],
    newRs: ReplicaSet | undefined,
    rollout: boolean,
  ): Promise<void> {
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

    if (comparable(status) === comparable(d.status ?? {})) {
      if (rollout) this.requeueStuck(s, status);
      return;
    }
    try {
      await this.client
        .api(Deployment, d.metadata?.namespace)
        .patchStatus(d.metadata?.name ?? '', [{ op: 'replace', path: '/status', value: omitZeros(status) }], {
          type: 'json',
        });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** `requeueStuckDeployment`: look again when the progress deadline passes. */
  private requeueStuck(s: Sync, status: Status): void {
    const c = getCondition(status, 'Progressing');
    if (!c || c.reason === 'NewReplicaSetAvailable' || c.reason === 'ProgressDeadlineExceeded') return;
    if (deploymentComplete(s.d, status)) return;
    const after = untilDeadline(s.d, status);
    if (after === undefined) return;
    this.queue.addAfter(objectKey(s.d), Math.max(0, after) + 5);
  }
}

/** Zero counts are omitted, as Go's `omitempty` writes them. */
function omitZeros(s: Status): Status {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) if (v !== undefined && v !== 0) out[k] = v;
  return out as Status;
}
