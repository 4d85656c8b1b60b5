/**
 * The webhook plugins' machinery: the dispatchers, the webhook client and the matchConditions'
 * CEL. `index.ts` loads it with the first webhook configuration.
 */
import type { Registry } from '../../registry/registry.js';
import type { Store } from '../../storage/store.js';
import type { CelAuthorizer } from '../cel/index.js';
import { registryEquivalents } from '../matching.js';
import { createWebhookCaller, type WebhookCaller } from './client.js';
import type { WebhookConfigurations } from './configurations.js';
import type { DispatcherDeps, MatchConditionsEvaluator } from './dispatcher.js';
import { matchConditionsEvaluator } from './match-conditions.js';
import type { WebhookMetrics } from './metrics.js';
import { mutatingWebhooks } from './mutating.js';
import { validatingWebhooks } from './validating.js';

/** How the webhook plugins are built (the options of `webhookAdmission`). */
export interface WebhookPluginOptions {
  caller?: WebhookCaller;
  matchConditions?: MatchConditionsEvaluator;
  /** Answers `authorizer` in matchConditions (read per request). */
  authorizer?: () => CelAuthorizer | undefined;
}

/** The two plugins over the configurations, and the client they call webhooks with. */
export function webhookPlugins(
  store: Store,
  registry: Registry,
  options: WebhookPluginOptions,
  metrics: WebhookMetrics,
  configurations: { mutating: WebhookConfigurations; validating: WebhookConfigurations },
) {
  const deps: DispatcherDeps = {
    store,
    registry,
    equivalents: registryEquivalents(registry),
    caller: options.caller ?? createWebhookCaller(store),
    metrics,
    matchConditions: options.matchConditions ?? matchConditionsEvaluator(options.authorizer),
  };
  return {
    mutate: mutatingWebhooks(deps, configurations.mutating),
    validate: validatingWebhooks(deps, configurations.validating),
    caller: deps.caller,
  };
}
