import type { AdmissionWebhook, ConversionWebhook } from 'kubeloop/webhook';
import { webhooks as homeWebhooks } from './webhooks/home.js';
// +kubeloop:scaffold:imports

/**
 * Every webhook of the project: `main.ts` serves them, `manifests.ts` writes their
 * configurations (`config/webhook`) and marks the CRDs whose conversion they do.
 */
export const allWebhooks: Array<AdmissionWebhook | ConversionWebhook> = [
  ...homeWebhooks,
  // +kubeloop:scaffold:webhooks
];
