import type { Condition } from 'kubeloop';
import { type ConditionInput, setCondition } from 'kubeloop/runtime';

/**
 * `setCondition`, typed for a status declared with `Kube.Conditions()`. The runtime's helper
 * speaks kubernetes-types' `Condition` (`status: string`), the schema's type narrows `status` to
 * `'True' | 'False' | 'Unknown'`; what setCondition writes is always one of those (its input
 * is typed so), hence the cast.
 */
export function withCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
): Condition[] {
  return setCondition(conditions, input) as Condition[];
}
