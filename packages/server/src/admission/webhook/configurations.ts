/**
 * The webhooks of the Mutating- or ValidatingWebhookConfigurations in the store, as kube's
 * configuration managers keep them: configurations sorted by name, webhooks in their order,
 * each with a uid of its own (`<configuration>/<webhook>/<index>`). The list is rebuilt only
 * after a configuration changed (a store watch marks it stale), so that a request costs nothing
 * when there is none.
 */
import { collectionPrefix, type Store } from '../../storage/store.js';
import type { Obj } from '../../util/object.js';
import type { RuleWithOperations } from '../matching.js';
import type { WebhookClientConfig } from './client.js';

/** One webhook of a configuration (the API's MutatingWebhook / ValidatingWebhook, defaulted). */
export interface Webhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: 'Fail' | 'Ignore';
  matchPolicy?: 'Exact' | 'Equivalent';
  namespaceSelector?: Obj;
  objectSelector?: Obj;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  matchConditions?: { name: string; expression: string }[];
}

/** A webhook with where it comes from. */
export interface WebhookEntry {
  /** Unique per webhook across configurations (`<configuration>/<webhook>/<index>`). */
  uid: string;
  configurationName: string;
  webhook: Webhook;
}

/** The webhooks of one kind of configuration, cached until a configuration changes. */
export class WebhookConfigurations {
  private cached: readonly WebhookEntry[] | undefined;
  private readonly prefix: string;
  private readonly unwatch: () => void;

  constructor(
    private readonly store: Store,
    resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations',
  ) {
    this.prefix = collectionPrefix('admissionregistration.k8s.io', resource);
    this.unwatch = store.watch(this.prefix, store.revision, () => {
      this.cached = undefined;
    });
  }

  /** Stops following the store. */
  close(): void {
    this.unwatch();
  }

  /** The current webhooks, in kube's calling order. */
  get(): readonly WebhookEntry[] {
    if (this.cached) return this.cached;
    const out: WebhookEntry[] = [];
    // Keys sort by name within the collection, as kube sorts configurations by name.
    for (const item of this.store.list(this.prefix).items) {
      const config = item.object as Obj;
      const name = String((config.metadata as Obj | undefined)?.name ?? '');
      const hooks = Array.isArray(config.webhooks) ? (config.webhooks as Webhook[]) : [];
      hooks.forEach((webhook, i) => {
        out.push({ uid: `${name}/${webhook.name}/${i}`, configurationName: name, webhook });
      });
    }
    this.cached = out;
    return out;
  }
}
