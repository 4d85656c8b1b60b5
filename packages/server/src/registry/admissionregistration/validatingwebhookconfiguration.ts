/**
 * The registry entry of `ValidatingWebhookConfiguration` (admissionregistration.k8s.io/v1 `validatingwebhookconfigurations`): its resource type and
 * validation.
 */
import { defineKind } from '../shared/define.js';
import type { ResourceType } from '../types.js';
import { webhookConfiguration } from './shared.js';

/** `ValidatingWebhookConfiguration` (admissionregistration.k8s.io/v1 `validatingwebhookconfigurations`): how the registry serves, validates and prints it. */
export const validatingWebhookConfigurationKind: ResourceType = defineKind({
  behaviour: webhookConfiguration(false),
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.admissionregistration.v1',
  resource: 'validatingwebhookconfigurations',
  // Its strategy refuses an update without a resourceVersion (AllowUnconditionalUpdate false).
  allowUnconditionalUpdate: false,
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
  categories: ['api-extensions'],
  generation: true,
});
