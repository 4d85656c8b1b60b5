/**
 * CEL for admission (k8s.io/apiserver/pkg/admission/plugin/cel): the expressions of
 * ValidatingAdmissionPolicies and of webhooks' `matchConditions`.
 *
 * @example
 * ```ts
 * const env = new AdmissionCelEnv({ params: true, authorizer: true, variables: [{ name: 'n', expression: 'object.metadata.name' }] });
 * const c = compileAdmissionExpression('variables.n.startsWith("x")', env); // c.error: a compile error, as kube words it
 * const allowed = c.evaluate(activationFor(attrs, { authorizer })); // throws on a runtime error
 * ```
 *
 * Limits: the runtime cost budget of kube (`RuntimeCELCostBudget`) is not enforced on admission
 * expressions; `authorizer` checks ignore field and label selectors.
 *
 * @module
 */

export type { AdmissionAttributes } from '../matching.js';
export {
  type ActivationExtra,
  AdmissionActivation,
  activationFor,
} from './activation.js';
export type { CelAuthorizer } from './authorizer.js';
export {
  AdmissionCelEnv,
  type AdmissionCelEnvOptions,
  type CelActivation,
  type CompiledExpression,
  type CompileOptions,
  compileAdmissionExpression,
  type NamedExpression,
  registerAdmissionLibrary,
  runtimeMessage,
} from './compile.js';
