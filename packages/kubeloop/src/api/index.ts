/**
 * `kubeloop/api` — the object model alone: `Status` errors, label and field selectors, metadata
 * validation. The root `kubeloop` export re-exports it together with `defineResource`; code that
 * must stay light (the local control plane) imports this subpath.
 */

export * from './cron.js';
export * from './duration.js';
export * from './fields.js';
export * from './labels.js';
export * from './object.js';
export * from './quantity.js';
export * from './quota.js';
export * from './status.js';
export * from './validation.js';
export * from './webhook-validation.js';
