/**
 * Webhooks' `matchConditions`, as k8s.io/apiserver's `matchconditions.Matcher` evaluates them:
 * after the rules matched, every condition is evaluated against the request (CEL, with `object`,
 * `oldObject`, `request` and `authorizer`; no params, no namespaceObject); one that is false skips
 * the webhook; otherwise errors fail the request under failurePolicy Fail (the error is reported
 * as the request's 403) and skip the webhook under Ignore. Conditions are compiled once per
 * webhook as stored.
 */
import {
  AdmissionCelEnv,
  activationFor,
  type CelAuthorizer,
  type CompiledExpression,
  compileAdmissionExpression,
} from '../cel/index.js';
import type { Webhook } from './configurations.js';
import type { MatchConditionsEvaluator } from './dispatcher.js';

/**
 * The evaluator of every webhook's matchConditions; `authorizer` gives what answers `authorizer`
 * checks (read per request: the server's authorizer is made after its admission chain).
 */
export function matchConditionsEvaluator(
  authorizer?: () => CelAuthorizer | undefined,
): MatchConditionsEvaluator {
  const env = new AdmissionCelEnv({ authorizer: true });
  const compiled = new WeakMap<Webhook, CompiledExpression[]>();
  return (entry, attrs, match) => {
    const hook = entry.webhook;
    let expressions = compiled.get(hook);
    if (!expressions) {
      expressions = (hook.matchConditions ?? []).map((c) => compileAdmissionExpression(c.expression, env));
      compiled.set(hook, expressions);
    }
    const authz = authorizer?.();
    const activation = activationFor(attrs, {
      matchedResource: match.resource,
      matchedKind: match.kind,
      namespace: null,
      ...(authz && { authorizer: authz }),
    });
    const errors: string[] = [];
    for (const expression of expressions) {
      try {
        // Any false condition skips the webhook, whatever errors the others had.
        if (expression.evaluate(activation) === false) return { matches: false };
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
      }
    }
    if (errors.length === 0) return { matches: true };
    if (hook.failurePolicy === 'Ignore') return { matches: false };
    // utilerrors.NewAggregate: one error as is, several as a bracketed list.
    return { matches: false, error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` };
  };
}
