/**
 * The registry entry of `MutatingWebhookConfiguration` (admissionregistration.k8s.io/v1 `mutatingwebhookconfigurations`): its resource type and
 * validation.
 */
import { defineKind } from '../shared/define.js';
import type { ResourceType } from '../types.js';
import { webhookConfiguration } from './shared.js';

/** `MutatingWebhookConfiguration` (admissionregistration.k8s.io/v1 `mutatingwebhookconfigurations`): how the registry serves, validates and prints it. */
export const mutatingWebhookConfigurationKind: ResourceType = defineKind({
  behaviour: webhookConfiguration(true),
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.admissionregistration.v1',
  resource: 'mutatingwebhookconfigurations',
  // Its strategy refuses an update without a resourceVersion (AllowUnconditionalUpdate false).
  allowUnconditionalUpdate: false,
  kind: 'MutatingWebhookConfiguration',
  namespaced: false,
  categories: ['api-extensions'],
  generation: true,
});
