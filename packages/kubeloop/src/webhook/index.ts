/**
 * `kubeloop/webhook` — admission and conversion webhooks for operators, as controller-runtime
 * gives them to Go: typed defaulters and validators from `defineResource` and the built-in
 * kinds, hub-and-spoke conversion, and a webhook server with certificates that just work (read
 * from a directory and reloaded on rotation, or made with a local CA).
 *
 * @example
 * ```ts
 * import { defaulter, validator, WebhookServer, fieldErrors } from 'kubeloop/webhook';
 *
 * const server = new WebhookServer({ port: 9443 }).register(
 *   defaulter(Foo, (foo) => { foo.spec.replicas ??= 1; }),
 *   validator(Foo, {
 *     create: (foo) => foo.spec.replicas > 10
 *       ? { errors: [fieldErrors.invalid('spec.replicas', foo.spec.replicas, 'must be at most 10')] }
 *       : undefined,
 *   }),
 * );
 * server.setupWithManager(manager);
 * ```
 *
 * @module
 */
export { fieldError, fieldErrors } from '../api/field-errors.js';
export { createCertificateAuthority, issueServingCertificate, type KeyPair } from '../pki/index.js';
export {
  type AdmissionWebhook,
  type AdmissionWebhookOptions,
  defaulter,
  errored,
  invalidStatus,
  mutatePath,
  mutatingWebhook,
  type ValidatorHandlers,
  validatePath,
  validatingWebhook,
  validator,
  type WebhookTarget,
} from './admission.js';
export {
  type CertificateFiles,
  CertWatcher,
  DEFAULT_CERT_DIR,
  ensureCertificates,
  type LoadedCertificate,
} from './certs.js';
export {
  answerConversion,
  type ConversionReview,
  type ConversionSpec,
  type ConversionWebhook,
  conversion,
  conversionOf,
  expectRoundTrip,
  type Spoke,
} from './conversion.js';
export { type WebhookFlags, webhookFlags } from './flags.js';
export { type AnswerOptions, answerAdmission } from './handle.js';
export { type PathMetrics, WebhookMetrics } from './metrics.js';
export { applyJsonPatch, createJsonPatch, escapePointerToken, type JsonPatchOperation } from './patch.js';
export { WebhookServer, type WebhookServerOptions } from './server.js';
export type {
  AdmissionContext,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionResult,
  AdmissionReview,
  Operation,
  UserInfo,
  ValidationResult,
} from './types.js';
