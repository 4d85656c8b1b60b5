/**
 * The admission webhook plugins of a server: MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook over the configurations in the store, one webhook client (kept-alive
 * connections) and the `apiserver_admission_webhook_*` metrics.
 *
 * A request meets the plugins' machinery (`plugins.ts`: dispatchers, client, matchConditions'
 * CEL) only when a configuration exists, and it loads then: a server without webhooks does not
 * carry it.
 */

import type { Registry } from '../../registry/registry.js';
import type { ResourceType } from '../../registry/types.js';
import type { Store } from '../../storage/store.js';
import type { Obj } from '../../util/object.js';
import type { AdmissionOptions } from '../options.js';
import { WebhookConfigurations } from './configurations.js';
import { WebhookMetrics } from './metrics.js';
import type { WebhookPluginOptions, webhookPlugins } from './plugins.js';

/** One of the two webhook plugins. */
export type WebhookPlugin = (
  op: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT',
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  options?: AdmissionOptions,
) => Promise<void> | undefined;

/** The two webhook plugins and their metrics. */
export interface WebhookAdmission {
  mutate: WebhookPlugin;
  validate: WebhookPlugin;
  metrics: WebhookMetrics;
  /** Closes the webhook connections and stops following the configurations. */
  close(): void;
}

/** Builds the webhook plugins of a server over `store` and `registry`. */
export function webhookAdmission(
  store: Store,
  registry: Registry,
  options: WebhookPluginOptions = {},
): WebhookAdmission {
  // The metrics are served (empty) from the start, as kube-apiserver's are.
  const metrics = new WebhookMetrics();
  const configurations = {
    mutating: new WebhookConfigurations(store, 'mutatingwebhookconfigurations'),
    validating: new WebhookConfigurations(store, 'validatingwebhookconfigurations'),
  };
  let plugins: ReturnType<typeof webhookPlugins> | undefined;
  let loading: Promise<ReturnType<typeof webhookPlugins>> | undefined;
  let closed = false;
  const plugin =
    (which: 'mutate' | 'validate'): WebhookPlugin =>
    (op, t, obj, old, opts) => {
      const configs = which === 'mutate' ? configurations.mutating : configurations.validating;
      if (configs.get().length === 0) return undefined;
      if (plugins) return plugins[which](op, t, obj, old, opts);
      loading ??= import('./plugins.js').then((m) => {
        plugins = m.webhookPlugins(store, registry, options, metrics, configurations);
        // Closed while it loaded: its client keeps no connection open.
        if (closed) plugins.caller.close?.();
        return plugins;
      });
      return loading.then((p) => p[which](op, t, obj, old, opts));
    };
  return {
    mutate: plugin('mutate'),
    validate: plugin('validate'),
    metrics,
    close() {
      closed = true;
      configurations.mutating.close();
      configurations.validating.close();
      plugins?.caller.close?.();
    },
  };
}
