/** scheduling.k8s.io/v1 PriorityClasses: defaults, validation and printer. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import {
  def,
  dig,
  FIELD_IMMUTABLE,
  forbidden,
  invalid,
  notSupported,
  numOr,
  since,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';

const SCHEDULING = 'io.k8s.api.scheduling.v1';
const SYSTEM_PREFIX = 'system-';
const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
/** `scheduling.SystemPriorityClasses()`: the only names the `system-` prefix may have. */
const SYSTEM_CLASSES: Record<string, number> = {
  'system-node-critical': 2_000_001_000,
  'system-cluster-critical': 2_000_000_000,
};
// kube lists these in this order, not sorted.
const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'];

/** `IsKnownSystemPriorityClass`: undefined when known, else its error. */
function systemClassError(name: string, value: number, globalDefault: boolean): string | undefined {
  const known = SYSTEM_CLASSES[name];
  if (known === undefined) return `${name} is not a known system priority class`;
  if (known !== value) return `value of ${name} PriorityClass must be ${known}`;
  if (globalDefault) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

const priorityclasses: KindBehaviour = {
  storage: {
    /** The REST storage's `Delete`: the system classes stay (a collection delete is not checked, as in kube). */
    refuseDelete: (name) =>
      name in SYSTEM_CLASSES ? 'this is a system priority class and cannot be deleted' : undefined,
  },
  /** `SetDefaults_PriorityClass`. */
  defaults(obj) {
    def(obj, 'preemptionPolicy', 'PreemptLowerPriority');
  },
  /** `ValidatePriorityClass` and `ValidatePriorityClassUpdate`. */
  validate(obj, old) {
    const out: StatusCause[] = [];
    const name = str(dig(obj, 'metadata', 'name'));
    const value = numOr(obj.value) ?? 0;
    if (name.startsWith(SYSTEM_PREFIX)) {
      const err = systemClassError(name, value, obj.globalDefault === true);
      if (err)
        out.push(
          forbidden(
            'metadata.name',
            `priority class names with '${SYSTEM_PREFIX}' prefix are reserved for system use only. error: ${err}`,
          ),
        );
    } else if (value > HIGHEST_USER_DEFINABLE_PRIORITY) {
      out.push(
        forbidden(
          'value',
          `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`,
        ),
      );
    }
    const policy = obj.preemptionPolicy;
    if (typeof policy === 'string' && !PREEMPTION_POLICIES.includes(policy))
      out.push(notSupported('preemptionPolicy', policy, PREEMPTION_POLICIES));
    if (old) {
      if (numOr(old.value) !== numOr(obj.value))
        out.push(forbidden('value', 'may not be changed in an update.'));
      if (old.preemptionPolicy !== obj.preemptionPolicy)
        out.push(invalid('preemptionPolicy', obj.preemptionPolicy, FIELD_IMMUTABLE));
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Value', 'integer', fieldDoc(`${SCHEDULING}.PriorityClass`, 'value')),
    col('Global-Default', 'boolean', fieldDoc(`${SCHEDULING}.PriorityClass`, 'globalDefault')),
    ageColumn(),
    col('PreemptionPolicy', 'string', fieldDoc(`${SCHEDULING}.PriorityClass`, 'preemptionPolicy')),
  ],
  row: (obj, now) => [
    str(dig(obj, 'metadata', 'name')),
    numOr(obj.value) ?? 0,
    obj.globalDefault === true,
    since(dig(obj, 'metadata', 'creationTimestamp'), now),
    str(obj.preemptionPolicy),
  ],
};

/** `PriorityClass` (scheduling.k8s.io/v1 `priorityclasses`): how the registry serves, validates and prints it. */
export const priorityClassKind: ResourceType = defineKind({
  behaviour: priorityclasses,
  group: 'scheduling.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.scheduling.v1',
  resource: 'priorityclasses',
  kind: 'PriorityClass',
  namespaced: false,
  shortNames: ['pc'],
  // PrepareForCreate sets generation 1; no update changes it.
  generation: 'create',
});
