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
  invalid,
  isDNS1123Subdomain,
  isObj,
  required,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { AR, ageOf, defaultMatchResources, nameOf } from './shared.js';
import {
  validateMatchResources,
  validateParamRef,
  validateValidationActions,
} from './validatingadmissionpolicy-match.js';

const validatingadmissionpolicybindings: KindBehaviour = {
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    if (isObj(spec.matchResources)) defaultMatchResources(spec.matchResources);
  },
  /** `validateValidatingAdmissionPolicyBindingSpec`'s rules. */
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const policyName = str(spec.policyName);
    if (!policyName) out.push(required('spec.policyName'));
    else for (const m of isDNS1123Subdomain(policyName)) out.push(invalid('spec.policyName', policyName, m));
    out.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
    out.push(...validateMatchResources(spec.matchResources, 'spec.matchResources'));
    out.push(...validateValidationActions(strs(spec.validationActions), 'spec.validationActions'));
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
  // Its strategy refuses an update without a resourceVersion (AllowUnconditionalUpdate false).
  allowUnconditionalUpdate: false,
  kind: 'ValidatingAdmissionPolicyBinding',
  namespaced: false,
  categories: ['api-extensions'],
  generation: true,
});
