import type { AdmissionWebhook, ConversionWebhook } from 'kubeloop/webhook';
import { webhooks as fooBarWebhooks } from './webhooks/foobar.js';
// +kubeloop:scaffold:imports

/**
 * Every webhook of the project: `main.ts` serves them (the layout `kubeloop create webhook`
 * scaffolds, written by hand here: FooBar's conversion only).
 */
export const allWebhooks: Array<AdmissionWebhook | ConversionWebhook> = [
  ...fooBarWebhooks,
  // +kubeloop:scaffold:webhooks
];
