/**
 * ValidatingAdmissionWebhook, as k8s.io/apiserver's `webhook/validating` dispatcher runs it: the
 * webhooks a request reaches are chosen in order, then called all at once; the request fails with
 * the first failure to arrive (a denial, or a failed call under failurePolicy Fail).
 */
import type { ResourceType } from '../../registry/types.js';
import type { Obj } from '../../util/object.js';
import { admissionAttributes, isExemptAdmissionConfigurationResource, type RuleMatch } from '../matching.js';
import type { AdmissionOptions } from '../options.js';
import type { WebhookConfigurations, WebhookEntry } from './configurations.js';
import {
  callWebhook,
  convertForMatch,
  type DispatcherDeps,
  failureOf,
  matchedAsRequested,
  observedCall,
  shouldCallHook,
} from './dispatcher.js';

type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** The validating webhook plugin over `configs`. */
export function validatingWebhooks(deps: DispatcherDeps, configs: WebhookConfigurations) {
  return (
    op: Operation,
    t: ResourceType,
    obj: Obj,
    old: Obj | undefined,
    options?: AdmissionOptions,
  ): Promise<void> | undefined => {
    const hooks = configs.get();
    if (hooks.length === 0) return undefined;
    const attrs = admissionAttributes(op, t, obj, old, options);
    if (isExemptAdmissionConfigurationResource(attrs)) return undefined;
    const scale = options?.scale;
    if (scale) {
      if (attrs.object) attrs.object = scale.of(attrs.object);
      if (attrs.oldObject) attrs.oldObject = scale.of(attrs.oldObject);
    }
    const calls: { entry: WebhookEntry; match: RuleMatch }[] = [];
    for (const entry of hooks) {
      const match = shouldCallHook(deps, entry, attrs);
      if (match) calls.push({ entry, match });
    }
    if (calls.length === 0) return undefined;
    return (async () => {
      const errors: unknown[] = [];
      await Promise.all(
        calls.map(async ({ entry, match }) => {
          const outcome = await observedCall(deps, entry, 'validating', op, async () => {
            if (matchedAsRequested(t, match.resource)) {
              return callWebhook(deps, entry, false, attrs, match, attrs.object, attrs.oldObject, options);
            }
            const object = await convertForMatch(deps, attrs.object, t, match.resource, attrs.subresource);
            const oldObject = await convertForMatch(
              deps,
              attrs.oldObject,
              t,
              match.resource,
              attrs.subresource,
            );
            return callWebhook(deps, entry, false, attrs, match, object, oldObject, options);
          });
          if (outcome.error === undefined) return;
          const err = failureOf(deps, entry, 'validating', outcome.error);
          if (err !== undefined) errors.push(err);
        }),
      );
      // kube returns the first error its channel received and only logs the others.
      if (errors.length > 0) throw errors[0];
    })();
  };
}
