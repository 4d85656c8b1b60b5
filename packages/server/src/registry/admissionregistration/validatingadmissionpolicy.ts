/**
 * The registry entry of `ValidatingAdmissionPolicy` (admissionregistration.k8s.io/v1 `validatingadmissionpolicies`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { def, dig, ensureObj, isObj, notSupported, objs, required, str } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { AR, ageOf, defaultMatchResources, nameOf } from './shared.js';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const validatingadmissionpolicies: KindBehaviour = {
  /** `SetDefaults_ValidatingAdmissionPolicySpec`. */
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    def(spec, 'failurePolicy', 'Fail');
    if (isObj(spec.matchConstraints)) defaultMatchResources(spec.matchConstraints);
  },
  /** `validateValidatingAdmissionPolicySpec`'s structural rules (CEL is not compiled here). */
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const policy = spec.failurePolicy;
    if (typeof policy === 'string' && !FAILURE_POLICIES.includes(policy))
      out.push(notSupported('spec.failurePolicy', policy, FAILURE_POLICIES));
    const validations = objs(spec.validations);
    if (validations.length === 0 && objs(spec.auditAnnotations).length === 0)
      out.push(
        required('spec.validations', 'validations or auditAnnotations must contain at least one item'),
      );
    validations.forEach((v, i) => {
      if (!str(v.expression).trim()) out.push(required(`spec.validations[${i}].expression`));
    });
    if (!isObj(spec.matchConstraints)) out.push(required('spec.matchConstraints'));
    else if (objs(spec.matchConstraints.resourceRules).length === 0)
      out.push(required('spec.matchConstraints.resourceRules'));
    if (isObj(spec.paramKind)) {
      if (!str(spec.paramKind.apiVersion)) out.push(required('spec.paramKind.apiVersion'));
      if (!str(spec.paramKind.kind)) out.push(required('spec.paramKind.kind'));
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Validations', 'integer', fieldDoc(`${AR}.ValidatingAdmissionPolicySpec`, 'validations')),
    col('ParamKind', 'string', fieldDoc(`${AR}.ValidatingAdmissionPolicySpec`, 'paramKind')),
    ageColumn(),
  ],
  row(obj, now) {
    const paramKind = dig(obj, 'spec', 'paramKind');
    return [
      nameOf(obj),
      objs(dig(obj, 'spec', 'validations')).length,
      isObj(paramKind) ? `${str(paramKind.apiVersion)}/${str(paramKind.kind)}` : '<unset>',
      ageOf(obj, now),
    ];
  },
};

/** `ValidatingAdmissionPolicy` (admissionregistration.k8s.io/v1 `validatingadmissionpolicies`): how the registry serves, validates and prints it. */
export const validatingAdmissionPolicyKind: ResourceType = defineKind({
  behaviour: validatingadmissionpolicies,
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.admissionregistration.v1',
  resource: 'validatingadmissionpolicies',
  kind: 'ValidatingAdmissionPolicy',
  namespaced: false,
  categories: ['api-extensions'],
  generation: true,
  subresources: { status: true },
});
