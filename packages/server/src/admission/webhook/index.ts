/**
 * The admission webhook plugins of a server: MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook over the configurations in the store, one webhook client (kept-alive
 * connections) and the `apiserver_admission_webhook_*` metrics.
 */
import type { Registry } from '../../registry/registry.js';
import type { Store } from '../../storage/store.js';
import type { CelAuthorizer } from '../cel/index.js';
import { registryEquivalents } from '../matching.js';
import { createWebhookCaller, type WebhookCaller } from './client.js';
import { WebhookConfigurations } from './configurations.js';
import type { DispatcherDeps, MatchConditionsEvaluator } from './dispatcher.js';
import { matchConditionsEvaluator } from './match-conditions.js';
import { WebhookMetrics } from './metrics.js';
import { mutatingWebhooks } from './mutating.js';
import { validatingWebhooks } from './validating.js';

/** The two webhook plugins and their metrics. */
export interface WebhookAdmission {
  mutate: ReturnType<typeof mutatingWebhooks>;
  validate: ReturnType<typeof validatingWebhooks>;
  metrics: WebhookMetrics;
  /** Closes the webhook connections and stops following the configurations. */
  close(): void;
}

/** Builds the webhook plugins of a server over `store` and `registry`. */
export function webhookAdmission(
  store: Store,
  registry: Registry,
  options: {
    caller?: WebhookCaller;
    matchConditions?: MatchConditionsEvaluator;
    /** Answers `authorizer` in matchConditions (read per request). */
    authorizer?: () => CelAuthorizer | undefined;
  } = {},
): WebhookAdmission {
  const metrics = new WebhookMetrics();
  const deps: DispatcherDeps = {
    store,
    registry,
    equivalents: registryEquivalents(registry),
    caller: options.caller ?? createWebhookCaller(store),
    metrics,
    matchConditions: options.matchConditions ?? matchConditionsEvaluator(options.authorizer),
  };
  const mutating = new WebhookConfigurations(store, 'mutatingwebhookconfigurations');
  const validating = new WebhookConfigurations(store, 'validatingwebhookconfigurations');
  return {
    mutate: mutatingWebhooks(deps, mutating),
    validate: validatingWebhooks(deps, validating),
    metrics,
    close() {
      mutating.close();
      validating.close();
      deps.caller.close?.();
    },
  };
}
