/**
 * kube's `apiserver_validating_admission_policy_*` metrics (validating/metrics): each policy
 * decision other than a plain admit, by policy, binding, error type and enforcement action.
 */
import { Counter, Histogram, type Registry } from '../../util/prom-client.js';

/** `compile_error`, `invalid_error`, `out_of_budget` or `no_error` (a failed validation). */
export type ValidationErrorType = 'compile_error' | 'invalid_error' | 'out_of_budget' | 'no_error';
/** What was done with the decision. */
export type EnforcementAction = 'allow' | 'deny' | 'audit' | 'warn';

/** Records decisions. */
export interface PolicyMetrics {
  observe(
    policy: string,
    binding: string,
    errorType: ValidationErrorType,
    action: EnforcementAction,
    seconds: number,
  ): void;
}

/** The metrics, registered on `registry` (the server's `/metrics`). */
export function policyMetrics(registry: Registry): PolicyMetrics {
  const labelNames = ['policy', 'policy_binding', 'error_type', 'enforcement_action'] as const;
  const check = new Counter({
    name: 'apiserver_validating_admission_policy_check_total',
    help: 'Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.',
    labelNames,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'apiserver_validating_admission_policy_check_duration_seconds',
    help: 'Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.',
    labelNames,
    buckets: [0.0000005, 0.001, 0.01, 0.1, 1.0],
    registers: [registry],
  });
  return {
    observe(policy, binding, errorType, action, seconds) {
      const labels = { policy, policy_binding: binding, error_type: errorType, enforcement_action: action };
      check.inc(labels);
      latency.observe(labels, seconds);
    },
  };
}

/** `ErrorType` of a decision: by its message, as kube tells them apart. */
export function errorType(evaluationError: boolean, message: string): ValidationErrorType {
  if (!evaluationError) return 'no_error';
  if (message.startsWith('compilation')) return 'compile_error';
  if (message.startsWith('validation failed due to running out of cost budget')) return 'out_of_budget';
  return 'invalid_error';
}
