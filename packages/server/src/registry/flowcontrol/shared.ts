/** Helpers the flowcontrol.apiserver.k8s.io/v1 kinds share: their OpenAPI package, printer cells, status rules. */
import type { StatusCause } from 'kubeloop/api';
import {
  dig,
  duplicate,
  GoValue,
  goQuote,
  invalid,
  isObj,
  type Obj,
  objs,
  required,
  semanticEqual,
  since,
  str,
} from '../shared/util.js';
import type { BootstrapObject } from './bootstrap-objects.js';

export const FC = 'io.k8s.api.flowcontrol.v1';

export const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
export const ageOf = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);

/** `ValidateFlowSchemaStatus` / `ValidatePriorityLevelConfigurationStatus`: condition types given, once each. */
export function validateConditions(obj: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  objs(dig(obj, 'status', 'conditions')).forEach((c, i) => {
    const type = str(c.type);
    if (seen.has(type)) out.push(duplicate(`status.conditions[${i}].type`, type));
    seen.add(type);
    if (!type) out.push(required(`status.conditions[${i}].type`, 'must not be empty'));
  });
  return out;
}

/**
 * The mandatory objects' check (`ValidateFlowSchema`, `ValidatePriorityLevelConfiguration`): an
 * object named as a mandatory one must have its spec. The spec is shown as Go's `%#v` shows it
 * for what has no pointers; a set pointer field, an address there, is shown by its content.
 */
export function mandatorySpec(obj: Obj, mandatory: BootstrapObject[], goType: string): StatusCause[] {
  const name = nameOf(obj);
  const fixed = mandatory.find((m) => m.name === name);
  if (!fixed || semanticEqual(obj.spec, fixed.spec)) return [];
  return [
    invalid('spec', new GoValue(goStruct(goType, obj.spec)), `spec of '${name}' must equal the fixed value`),
  ];
}

/** Field types of the flowcontrol structs `%#v` names (pointers, slices and structs). */
const FIELD_TYPES: Record<string, string> = {
  priorityLevelConfiguration: 'flowcontrol.PriorityLevelConfigurationReference',
  distinguisherMethod: '*flowcontrol.FlowDistinguisherMethod',
  rules: '[]flowcontrol.PolicyRulesWithSubjects',
  limited: '*flowcontrol.LimitedPriorityLevelConfiguration',
  exempt: '*flowcontrol.ExemptPriorityLevelConfiguration',
};
const FIELD_ORDER: Record<string, string[]> = {
  'flowcontrol.FlowSchemaSpec': [
    'priorityLevelConfiguration',
    'matchingPrecedence',
    'distinguisherMethod',
    'rules',
  ],
  'flowcontrol.PriorityLevelConfigurationSpec': ['type', 'limited', 'exempt'],
};

function goStruct(goType: string, v: unknown): string {
  const o = isObj(v) ? v : {};
  const fields = (FIELD_ORDER[goType] ?? Object.keys(o)).map((f) => {
    const t = FIELD_TYPES[f];
    const value = o[f];
    const label = f[0]!.toUpperCase() + f.slice(1);
    if (typeof value === 'string') return `${label}:${goQuote(value)}`;
    if (typeof value === 'number') return `${label}:${value}`;
    if (value === undefined || value === null)
      return t?.startsWith('[]') ? `${label}:${t}(nil)` : `${label}:(${t ?? 'interface {}'})(nil)`;
    if (t?.startsWith('*')) return `${label}:&${goStruct(t.slice(1), value)}`;
    if (t?.startsWith('[]')) return `${label}:${t}{…}`;
    return `${label}:${goStruct(t ?? '', value)}`;
  });
  return `${goType}{${fields.join(', ')}}`;
}
