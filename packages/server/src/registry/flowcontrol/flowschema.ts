/**
 * The registry entry of `FlowSchema` (flowcontrol.apiserver.k8s.io/v1 `flowschemas`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { flowcontrolKind } from '../shared/define.js';
import {
  dig,
  ensureObj,
  GoValue,
  goQuote,
  invalid,
  isDNS1123Subdomain,
  isObj,
  notSupported,
  numOr,
  objs,
  required,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { MANDATORY_FLOW_SCHEMAS } from './bootstrap-objects.js';
import { validateRule } from './rules.js';
import { ageOf, FC, mandatorySpec, nameOf, validateConditions } from './shared.js';

const MAX_MATCHING_PRECEDENCE = 10000;
const flowschemas: KindBehaviour = {
  /** `SetDefaults_FlowSchemaSpec`. */
  defaults(obj) {
    ensureObj(obj, 'status'); // Go always writes the status struct.
    const spec = ensureObj(obj, 'spec');
    if (!numOr(spec.matchingPrecedence)) spec.matchingPrecedence = 1000;
  },
  /** `ValidateFlowSchemaSpec` and `ValidateFlowSchemaStatus`. */
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const precedence = numOr(spec.matchingPrecedence) ?? 0;
    if (precedence <= 0) out.push(invalid('spec.matchingPrecedence', precedence, 'must be a positive value'));
    if (precedence > MAX_MATCHING_PRECEDENCE)
      out.push(
        invalid('spec.matchingPrecedence', precedence, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`),
      );
    if (precedence === 1 && str(dig(obj, 'metadata', 'name')) !== 'exempt')
      out.push(
        invalid(
          'spec.matchingPrecedence',
          precedence,
          "only the schema named 'exempt' may have matchingPrecedence 1",
        ),
      );
    const method = str(dig(spec, 'distinguisherMethod', 'type'));
    if (isObj(spec.distinguisherMethod) && method !== 'ByUser' && method !== 'ByNamespace') {
      const value = new GoValue(`flowcontrol.FlowDistinguisherMethod{Type:${goQuote(method)}}`);
      out.push(notSupported('spec.distinguisherMethod.type', value, ['ByNamespace', 'ByUser']));
    }
    const level = str(dig(spec, 'priorityLevelConfiguration', 'name'));
    if (!level) out.push(required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
    for (const msg of level ? isDNS1123Subdomain(level) : [])
      out.push(invalid('spec.priorityLevelConfiguration.name', level, msg));
    objs(spec.rules).forEach((rule, i) => {
      out.push(...validateRule(rule, `spec.rules[${i}]`));
    });
    out.push(...mandatorySpec(obj, MANDATORY_FLOW_SCHEMAS, 'flowcontrol.FlowSchemaSpec'));
    out.push(...validateConditions(obj));
    return out;
  },
  columns: [
    nameColumn(),
    col('PriorityLevel', 'string', fieldDoc(`${FC}.PriorityLevelConfigurationReference`, 'name')),
    col('MatchingPrecedence', 'string', fieldDoc(`${FC}.FlowSchemaSpec`, 'matchingPrecedence')),
    col('DistinguisherMethod', 'string', fieldDoc(`${FC}.FlowSchemaSpec`, 'distinguisherMethod')),
    ageColumn(),
    col('MissingPL', 'string', 'references a broken or non-existent PriorityLevelConfiguration'),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const dangling = objs(dig(obj, 'status', 'conditions')).find((c) => c.type === 'Dangling');
    return [
      nameOf(obj),
      str(dig(spec, 'priorityLevelConfiguration', 'name')),
      numOr(spec.matchingPrecedence) ?? 0,
      str(dig(spec, 'distinguisherMethod', 'type')) || '<none>',
      ageOf(obj, now),
      dangling ? str(dangling.status) : '?',
    ];
  },
};

/** `FlowSchema` (flowcontrol.apiserver.k8s.io/v1 `flowschemas`): how the registry serves, validates and prints it. */
export const flowSchemaKind: ResourceType = flowcontrolKind({
  behaviour: flowschemas,
  resource: 'flowschemas',
  kind: 'FlowSchema',
});
