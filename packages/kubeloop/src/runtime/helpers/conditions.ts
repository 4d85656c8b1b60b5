/**
 * `metav1.Condition` helpers (apimachinery's `meta.SetStatusCondition`): `lastTransitionTime`
 * moves only when the status changes, so rewriting the same condition is a no-op.
 */
import type { Condition } from 'kubernetes-types/meta/v1.js';

export type { Condition };

/** A condition to set; `lastTransitionTime` is managed. */
export interface ConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message?: string;
  /** The `metadata.generation` the condition was computed from. */
  observedGeneration?: number;
}

/**
 * What {@link setCondition} accepts as the list's element: kubernetes-types' `Condition`
 * (`status: string`) and the narrower one `Kube.Conditions()` declares
 * (`status: 'True' | 'False' | 'Unknown'`) alike; the list comes back in the type it came in.
 */
export interface ConditionLike {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/** RFC 3339 time at second precision (`metav1.Time`). */
const nowTime = (now: Date) => now.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The conditions with `input` set (a new array; `conditions` is not modified). Keeps the
 * previous `lastTransitionTime` unless the status changed.
 *
 * @example
 * ```ts
 * status.conditions = setCondition(foo.status?.conditions, {
 *   type: 'Ready', status: 'True', reason: 'Available', message: 'all replicas ready',
 *   observedGeneration: foo.metadata?.generation,
 * });
 * ```
 */
export function setCondition<C extends ConditionLike = Condition>(
  conditions: readonly C[] | undefined,
  input: ConditionInput,
  now: Date = new Date(),
): C[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const prev = i < 0 ? undefined : list[i];
  // Every field is what a metav1.Condition holds, with `status` from the narrow input: valid as C.
  const next = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message ?? '',
    lastTransitionTime: prev && prev.status === input.status ? prev.lastTransitionTime : nowTime(now),
    ...(input.observedGeneration !== undefined
      ? { observedGeneration: input.observedGeneration }
      : prev?.observedGeneration !== undefined && { observedGeneration: prev.observedGeneration }),
  } as C;
  if (i < 0) list.push(next);
  else list[i] = next;
  return list;
}

/** The condition of a type, if present. */
export function findCondition<C extends ConditionLike = Condition>(
  conditions: readonly C[] | undefined,
  type: string,
): C | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Whether the condition of a type is `True`. */
export function isConditionTrue(conditions: readonly ConditionLike[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** The conditions without the one of `type` (a new array). */
export function removeCondition<C extends ConditionLike = Condition>(
  conditions: readonly C[] | undefined,
  type: string,
): C[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}
