/** admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies and their Bindings: defaults, validation, printers. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from './types.js';
import {
  def,
  dig,
  ensureObj,
  formatLabelSelector,
  isObj,
  notSupported,
  type Obj,
  objs,
  required,
  since,
  str,
  strs,
} from './util.js';

const AR = 'io.k8s.api.admissionregistration.v1';
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];

const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
const ageOf = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);

/** `SetDefaults_MatchResources` and `SetDefaults_NamedRuleWithOperations`'s scope. */
function defaultMatchResources(m: Obj): void {
  def(m, 'matchPolicy', 'Equivalent');
  if (!isObj(m.namespaceSelector)) m.namespaceSelector = {};
  if (!isObj(m.objectSelector)) m.objectSelector = {};
  for (const list of ['resourceRules', 'excludeResourceRules'])
    for (const rule of objs(m[list])) def(rule, 'scope', '*');
}

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

/** admissionregistration.k8s.io/v1 policy behaviours, keyed by plural resource. */
export const admissionPolicyBehaviours: Record<string, KindBehaviour> = {
  validatingadmissionpolicies,
  validatingadmissionpolicybindings,
};
