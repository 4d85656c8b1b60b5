/**
 * The registry entry of `ValidatingAdmissionPolicyBinding` (admissionregistration.k8s.io/v1 `validatingadmissionpolicybindings`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import {
  dig,
  ensureObj,
  formatLabelSelector,
  isObj,
  notSupported,
  required,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { AR, ageOf, defaultMatchResources, nameOf } from './shared.js';

const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];
const validatingadmissionpolicybindings: KindBehaviour = {
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    if (isObj(spec.matchResources)) defaultMatchResources(spec.matchResources);
  },
  /** `validateValidatingAdmissionPolicyBindingSpec`'s rules. */
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    if (!str(spec.policyName)) out.push(required('spec.policyName'));
    const actions = strs(spec.validationActions);
    if (actions.length === 0) out.push(required('spec.validationActions'));
    actions.forEach((a, i) => {
      if (!VALIDATION_ACTIONS.includes(a))
        out.push(notSupported(`spec.validationActions[${i}]`, a, VALIDATION_ACTIONS));
    });
    if (actions.includes('Deny') && actions.includes('Warn'))
      out.push({
        reason: 'FieldValueInvalid',
        field: 'spec.validationActions',
        message:
          'Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      });
    const ref = spec.paramRef;
    if (isObj(ref)) {
      const action = ref.parameterNotFoundAction;
      if (action === undefined || action === null)
        out.push(required('spec.paramRef.parameterNotFoundAction'));
      else if (action !== 'Allow' && action !== 'Deny')
        out.push(notSupported('spec.paramRef.parameterNotFoundAction', action, ['Allow', 'Deny']));
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('PolicyName', 'string', fieldDoc(`${AR}.ValidatingAdmissionPolicyBindingSpec`, 'policyName')),
    col('ParamRef', 'string', fieldDoc(`${AR}.ValidatingAdmissionPolicyBindingSpec`, 'paramRef')),
    ageColumn(),
  ],
  row(obj, now) {
    const ref = dig(obj, 'spec', 'paramRef');
    let paramRef = '<unset>';
    if (isObj(ref)) {
      if (str(ref.name))
        paramRef = str(ref.namespace) ? `${str(ref.namespace)}/${str(ref.name)}` : str(ref.name);
      else if (isObj(ref.selector)) paramRef = `*/${formatLabelSelector(ref.selector)}`;
    }
    return [nameOf(obj), str(dig(obj, 'spec', 'policyName')), paramRef, ageOf(obj, now)];
  },
};

/** `ValidatingAdmissionPolicyBinding` (admissionregistration.k8s.io/v1 `validatingadmissionpolicybindings`): how the registry serves, validates and prints it. */
export const validatingAdmissionPolicyBindingKind: ResourceType = defineKind({
  behaviour: validatingadmissionpolicybindings,
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.admissionregistration.v1',
  resource: 'validatingadmissionpolicybindings',
  kind: 'ValidatingAdmissionPolicyBinding',
  namespaced: false,
  categories: ['api-extensions'],
  generation: true,
});
