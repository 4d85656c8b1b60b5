/**
 * The registry entry of `ValidatingAdmissionPolicy` (admissionregistration.k8s.io/v1 `validatingadmissionpolicies`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { resetMetaStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  duplicate,
  ensureObj,
  invalid,
  isObj,
  isQualifiedName,
  notSupported,
  objs,
  required,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { AR, admissionCel, ageOf, defaultMatchResources, nameOf } from './shared.js';
import { validateMatchResources, validateParamKind } from './validatingadmissionpolicy-match.js';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const CEL_RESERVED = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(
    ' ',
  ),
);

/**
 * The expressions' errors (`validateVariable`, `validateValidation`, `validateMatchCondition`,
 * `validateAuditAnnotation`): each compiled in the policy's environment, a compile error or a
 * wrong type as an Invalid value of the expression.
 */
function compileErrors(spec: Record<string, unknown>, name: string): StatusCause[] {
  const out: StatusCause[] = [];
  const hasParams = isObj(spec.paramKind);
  const { AdmissionCelEnv } = admissionCel.get();
  // matchConditions are checked without the variables, as kube's stateless compiler does.
  const plain = new AdmissionCelEnv({ params: hasParams, authorizer: true });
  const conditions = objs(spec.matchConditions);
  if (conditions.length > 64)
    out.push({
      reason: 'FieldValueTooMany',
      field: 'spec.matchConditions',
      message: `Too many: ${conditions.length}: must have at most 64 items`,
    });
  const conditionNames = new Set<string>();
  conditions.forEach((c, i) => {
    const e = str(c.expression).trim();
    if (!e) out.push(required(`spec.matchConditions[${i}].expression`));
    else {
      const error = plain.compile(e, { returnTypes: ['bool'] }).error;
      if (error) out.push(invalid(`spec.matchConditions[${i}].expression`, e, error));
    }
    const cname = str(c.name);
    if (!cname) out.push(required(`spec.matchConditions[${i}].name`));
    else {
      for (const m of isQualifiedName(cname)) out.push(invalid(`spec.matchConditions[${i}].name`, cname, m));
      if (conditionNames.has(cname)) out.push(duplicate(`spec.matchConditions[${i}].name`, cname));
      conditionNames.add(cname);
    }
  });
  const variables = objs(spec.variables);
  variables.forEach((v, i) => {
    const vname = str(v.name);
    if (!vname.trim()) out.push(required(`spec.variables[${i}].name`, 'name is not specified'));
    else if (!CEL_IDENTIFIER.test(vname) || CEL_RESERVED.has(vname))
      out.push(invalid(`spec.variables[${i}].name`, vname, 'name is not a valid CEL identifier'));
    if (!str(v.expression).trim())
      out.push(required(`spec.variables[${i}].expression`, 'expression is not specified'));
  });
  const env = new AdmissionCelEnv({
    params: hasParams,
    authorizer: true,
    variables: variables.map((v) => ({ name: str(v.name), expression: str(v.expression) })),
  });
  variables.forEach((v, i) => {
    const error = str(v.expression).trim() ? env.variables.get(str(v.name))?.error : undefined;
    if (error) out.push(invalid(`spec.variables[${i}].expression`, str(v.expression), error));
  });
  const check = (field: string, expression: string, returnTypes: string[], authorizer = true) => {
    const error = env.compile(expression, { returnTypes, authorizer }).error;
    if (error) out.push(invalid(field, expression, error));
  };
  if (objs(spec.validations).length === 0 && objs(spec.auditAnnotations).length === 0) {
    out.push(required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
    out.push(
      required('spec.auditAnnotations', 'validations or auditAnnotations must contain at least one item'),
    );
  }
  objs(spec.validations).forEach((v, i) => {
    const f = `spec.validations[${i}]`;
    if (!str(v.expression).trim()) out.push(required(`${f}.expression`, 'expression is not specified'));
    else check(`${f}.expression`, str(v.expression), ['bool']);
    const me = str(v.messageExpression);
    if (me && !me.trim()) out.push(invalid(`${f}.messageExpression`, me, 'must be non-empty if specified'));
    else if (me.trim()) check(`${f}.messageExpression`, me, ['string'], false);
    const msg = str(v.message);
    if (msg && !msg.trim()) out.push(invalid(`${f}.message`, msg, 'message must be non-empty if specified'));
    else if (/[\n\r]/.test(msg.trim()))
      out.push(invalid(`${f}.message`, msg, 'message must not contain line breaks'));
    if (v.reason !== undefined && !REASONS.includes(str(v.reason)))
      out.push(notSupported(`${f}.reason`, v.reason, REASONS));
  });
  const keys = new Set<string>();
  objs(spec.auditAnnotations).forEach((a, i) => {
    const key = str(a.key);
    if (name)
      for (const m of isQualifiedName(`${name}/${key}`))
        out.push(invalid(`spec.auditAnnotations[${i}].key`, `${name}/${key}`, m));
    else out.push(invalid(`spec.auditAnnotations[${i}].key`, key, 'requires metadata.name be non-empty'));
    if (keys.has(key)) out.push(duplicate(`spec.auditAnnotations[${i}].key`, key));
    keys.add(key);
    const e = str(a.valueExpression).trim();
    if (!e)
      out.push(required(`spec.auditAnnotations[${i}].valueExpression`, 'valueExpression is not specified'));
    else {
      const error = env.compile(e, { returnTypes: ['string', 'null_type'] }).error;
      if (error)
        out.push(invalid(`spec.auditAnnotations[${i}].valueExpression`, str(a.valueExpression), error));
    }
  });
  return out;
}

const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const validatingadmissionpolicies: KindBehaviour = {
  // The CEL compiler its validation compiles expressions with loads on the first write.
  load: admissionCel.load,
  /** `SetDefaults_ValidatingAdmissionPolicySpec`. */
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    def(spec, 'failurePolicy', 'Fail');
    if (isObj(spec.matchConstraints)) defaultMatchResources(spec.matchConstraints);
  },
  /** `validateValidatingAdmissionPolicySpec`: structure, and its expressions compiled as kube compiles them. */
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const policy = spec.failurePolicy;
    if (typeof policy === 'string' && !FAILURE_POLICIES.includes(policy))
      out.push(notSupported('spec.failurePolicy', policy, FAILURE_POLICIES));
    if (isObj(spec.paramKind)) out.push(...validateParamKind(spec.paramKind, 'spec.paramKind'));
    if (!isObj(spec.matchConstraints)) out.push(required('spec.matchConstraints'));
    else {
      out.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints'));
      // At least one resourceRule, to give the type checking its types.
      if (objs(spec.matchConstraints.resourceRules).length === 0)
        out.push(required('spec.matchConstraints.resourceRules'));
    }
    out.push(...compileErrors(spec, str(dig(obj, 'metadata', 'name'))));
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
  statusStrategy: resetMetaStatusStrategy,
  behaviour: validatingadmissionpolicies,
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.admissionregistration.v1',
  resource: 'validatingadmissionpolicies',
  // Its strategy refuses an update without a resourceVersion (AllowUnconditionalUpdate false).
  allowUnconditionalUpdate: false,
  kind: 'ValidatingAdmissionPolicy',
  namespaced: false,
  categories: ['api-extensions'],
  generation: true,
  subresources: { status: true },
});
