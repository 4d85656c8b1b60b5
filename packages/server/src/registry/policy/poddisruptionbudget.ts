/** policy/v1 PodDisruptionBudgets: validation and printer. */
import type { StatusCause } from 'kubeloop/api';
import { notMoreThan100, validateIntOrPercent } from '../apps/shared.js';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  ensureObj,
  GoValue,
  invalid,
  isObj,
  isSet,
  notSupported,
  numOr,
  type Obj,
  since,
  str,
  validateLabelSelector,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';

const POLICY = 'io.k8s.api.policy.v1';
const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

/**
 * `%#v` of a PodDisruptionBudgetSpec, as the exclusivity error prints it: pointers show as
 * addresses in Go, which differ on every request; these stand in for them.
 */
function goSpec(spec: Obj): GoValue {
  let next = 0xc000a1e000;
  const ptr = (type: string, v: unknown) => {
    if (!isSet(v)) return `(*${type})(nil)`;
    next += 0x10;
    return `(*${type})(0x${next.toString(16)})`;
  };
  return new GoValue(
    `policy.PodDisruptionBudgetSpec{MinAvailable:${ptr('intstr.IntOrString', spec.minAvailable)}, Selector:${ptr('v1.LabelSelector', spec.selector)}, MaxUnavailable:${ptr('intstr.IntOrString', spec.maxUnavailable)}, UnhealthyPodEvictionPolicy:${ptr('policy.UnhealthyPodEvictionPolicyType', spec.unhealthyPodEvictionPolicy)}}`,
  );
}

/** `ValidatePodDisruptionBudgetSpec`. */
function validateSpec(spec: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  if (isSet(spec.minAvailable) && isSet(spec.maxUnavailable))
    out.push(invalid('spec', goSpec(spec), 'minAvailable and maxUnavailable cannot be both set'));
  for (const f of ['minAvailable', 'maxUnavailable']) {
    if (!isSet(spec[f])) continue;
    out.push(...validateIntOrPercent(spec[f], `spec.${f}`));
    out.push(...notMoreThan100(spec[f], `spec.${f}`));
  }
  if (isSet(spec.selector)) out.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (isSet(policy) && !EVICTION_POLICIES.includes(str(policy)))
    out.push(notSupported('spec.unhealthyPodEvictionPolicy', policy, EVICTION_POLICIES));
  return out;
}

const intOrString = (v: unknown): string => (isSet(v) ? String(v) : 'N/A');

const poddisruptionbudgets: KindBehaviour = {
  /** The status struct's counts have no omitempty: 0 until the disruption controller counts. */
  defaults(obj) {
    const status = ensureObj(obj, 'status');
    for (const f of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'])
      def(status, f, 0);
  },
  validate: (obj) => validateSpec(isObj(obj.spec) ? obj.spec : {}),
  columns: [
    nameColumn(),
    col('Min Available', 'string', fieldDoc(`${POLICY}.PodDisruptionBudgetSpec`, 'minAvailable')),
    col('Max Unavailable', 'string', fieldDoc(`${POLICY}.PodDisruptionBudgetSpec`, 'maxUnavailable')),
    col(
      'Allowed Disruptions',
      'integer',
      fieldDoc(`${POLICY}.PodDisruptionBudgetStatus`, 'disruptionsAllowed'),
    ),
    ageColumn(),
  ],
  row: (obj, now) => [
    str(dig(obj, 'metadata', 'name')),
    intOrString(dig(obj, 'spec', 'minAvailable')),
    intOrString(dig(obj, 'spec', 'maxUnavailable')),
    numOr(dig(obj, 'status', 'disruptionsAllowed')) ?? 0,
    since(dig(obj, 'metadata', 'creationTimestamp'), now),
  ],
};

/** `PodDisruptionBudget` (policy/v1 `poddisruptionbudgets`): how the registry serves, validates and prints it. */
export const podDisruptionBudgetKind: ResourceType = defineKind({
  statusStrategy: specStatusStrategy,
  behaviour: poddisruptionbudgets,
  group: 'policy',
  version: 'v1',
  defPackage: 'io.k8s.api.policy.v1',
  resource: 'poddisruptionbudgets',
  kind: 'PodDisruptionBudget',
  shortNames: ['pdb'],
  generation: true,
  subresources: { status: true },
});
