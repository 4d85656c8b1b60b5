/**
 * kubeloop — write Kubernetes operators in TypeScript.
 *
 * The root export is the object model shared by every part of kubeloop (and by the local
 * control plane): `Status` errors, label and field selectors, name and metadata validation.
 */

export * from './api/fields.js';
export * from './api/labels.js';
export * from './api/status.js';
export * from './api/validation.js';
