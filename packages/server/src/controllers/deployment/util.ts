/**
 * What the modules of the Deployment controller share: its annotations and labels, the pod
 * template hash, the fenceposts of a rolling update, the ReplicaSet arithmetic and the
 * Deployment conditions (pkg/controller/deployment/util).
 */
import type { Client, Deployment, ReplicaSet, ResourceApi } from 'kubeloop/client';
import type { ControllerEvents } from '../events.js';
import { safeEncodeString } from '../history.js';

export const HASH_LABEL = 'pod-template-hash';
export const REVISION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
export const DESIRED = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
const templateKeys = new WeakMap<object, string>();

/**
 * The template as it compares (`EqualIgnoreHash`): its stable JSON without the hash label,
 * remembered for a frozen template (one of the shared cache's, which cannot change).
 */
export function templateKey(template: unknown): string {
  if (!template || typeof template !== 'object' || !Object.isFrozen(template))
    return stableJson(withoutHash(template));
  let key = templateKeys.get(template);
  if (key === undefined) {
    key = stableJson(withoutHash(template));
    templateKeys.set(template, key);
  }
  return key;
}

/** `maxRevHistoryLengthInChars` of kube-controller-manager. */
export const MAX_REVISION_HISTORY_CHARS = 2000;
/** Deployment annotations never copied to its ReplicaSets (`annotationsToSkip`). */
export const SKIPPED_ANNOTATIONS = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  REVISION_HISTORY,
  DESIRED,
  MAX_REPLICAS,
  'deprecated.deployment.rollback.to',
]);

export type Status = NonNullable<Deployment['status']>;
export type Condition = NonNullable<Status['conditions']>[number];

/** JSON with sorted keys: equal templates hash equally whatever their key order. */
export function stableJson(v: unknown): string {
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
export function scaled(
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

export const revisionOf = (rs: ReplicaSet): number => Number(rs.metadata?.annotations?.[REVISION] ?? 0) || 0;
export const specReplicas = (rs: ReplicaSet | undefined): number => rs?.spec?.replicas ?? 0;
export const created = (rs: ReplicaSet): number => Date.parse(rs.metadata?.creationTimestamp ?? '') || 0;
export const byCreation = (a: ReplicaSet, b: ReplicaSet): number =>
  created(a) - created(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
export const active = (sets: readonly (ReplicaSet | undefined)[]): ReplicaSet[] =>
  sets.filter((rs): rs is ReplicaSet => !!rs && specReplicas(rs) > 0);
export const sum = (sets: readonly (ReplicaSet | undefined)[], f: (rs: ReplicaSet) => number | undefined) =>
  sets.reduce((n, rs) => n + (rs ? (f(rs) ?? 0) : 0), 0);
export const now = (): string => `${new Date().toISOString().slice(0, 19)}Z`;

/**
 * Strips the hash label, so that a ReplicaSet's template compares with its Deployment's
 * (`EqualIgnoreHash`); an empty label map goes too. A shallow copy (the template itself when it
 * has no labels), for comparing only: it shares the rest of the (cached, frozen) template.
 */
export function withoutHash(template: unknown): unknown {
  const t = (template ?? {}) as { metadata?: { labels?: Record<string, string> } };
  const labels = t.metadata?.labels;
  if (!labels) return t;
  const { [HASH_LABEL]: _hash, ...rest } = labels;
  const { labels: _labels, ...metadata } = t.metadata ?? {};
  return { ...t, metadata: Object.keys(rest).length > 0 ? { ...metadata, labels: rest } : metadata };
}

/** `HasProgressDeadline`: set and not MaxInt32. */
export const hasProgressDeadline = (d: Deployment): boolean =>
  typeof d.spec?.progressDeadlineSeconds === 'number' && d.spec.progressDeadlineSeconds !== 2147483647;

export const getCondition = (s: Status, type: string): Condition | undefined =>
  s.conditions?.find((c) => c.type === type);

export function newCondition(type: string, status: string, reason: string, message: string): Condition {
  const t = now();
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

/** `SetDeploymentCondition`: a condition of the same status and reason is kept as it is. */
export function setCondition(s: Status, c: Condition): void {
  const cur = getCondition(s, c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  const next = cur && cur.status === c.status ? { ...c, lastTransitionTime: cur.lastTransitionTime } : c;
  s.conditions = [...(s.conditions ?? []).filter((x) => x.type !== c.type), next];
}

export const removeCondition = (s: Status, type: string): void => {
  s.conditions = (s.conditions ?? []).filter((c) => c.type !== type);
};

/** `DeploymentComplete`: every replica updated and available, and the latest generation observed. */
export function deploymentComplete(d: Deployment, s: Status): boolean {
  const replicas = d.spec?.replicas ?? 1;
  return (
    (s.updatedReplicas ?? 0) === replicas &&
    (s.replicas ?? 0) === replicas &&
    (s.availableReplicas ?? 0) === replicas &&
    (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  );
}

/** `DeploymentProgressing`: more updated, ready or available replicas, or fewer old ones, than last seen. */
export function deploymentProgressing(d: Deployment, s: Status): boolean {
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
export function untilDeadline(d: Deployment, s: Status): number | undefined {
  const c = getCondition(s, 'Progressing');
  if (!c || !hasProgressDeadline(d)) return undefined;
  const from = Date.parse(c.lastUpdateTime ?? '');
  if (Number.isNaN(from)) return undefined;
  return from + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 - Date.now();
}

/** `DeploymentTimedOut`. */
export function deploymentTimedOut(d: Deployment, s: Status): boolean {
  const c = getCondition(s, 'Progressing');
  if (!c || !hasProgressDeadline(d) || c.reason === 'NewReplicaSetAvailable') return false;
  if (c.reason === 'ProgressDeadlineExceeded') return true;
  // The deadline passes strictly after lastUpdateTime + progressDeadlineSeconds.
  return (untilDeadline(d, s) ?? 1) < 0;
}

/** The status as it would be stored: zero counts are omitted (omitempty). */
export function comparable(s: Status): string {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) if (v !== undefined && v !== 0 && v !== null) out[k] = v;
  return stableJson(out);
}

/** One sync of one Deployment: the object (a mutable copy), its status being built, its ReplicaSets' API, how to write and report. */
export interface Sync {
  d: Deployment;
  status: Status;
  api: ResourceApi<ReplicaSet>;
  replicas: number;
  maxSurge: number;
  maxUnavailable: number;
  /** The reconcile's client (its writes are read back by the manager's cache). */
  client: Client;
  /** Records `ScalingReplicaSet` and the other Events as `deployment-controller`. */
  events: ControllerEvents;
}

/** Zero counts are omitted, as Go's `omitempty` writes them. */
export function omitZeros(s: Status): Status {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) if (v !== undefined && v !== 0) out[k] = v;
  return out as Status;
}
