/**
 * `kubeloop/manifests` — what kubebuilder's `make manifests` and `config/` give a Go operator,
 * generated from the TypeScript declarations:
 *
 * - RBAC derived from the controllers ({@link derivePolicyRules}, {@link rbacManifests}),
 * - the kustomize layout, `dist/install.yaml` and a Dockerfile ({@link generateManifests}),
 * - TypeScript declarations of third-party kinds from their CRDs ({@link crdToTypeScript}).
 *
 * @example
 * ```ts
 * import { generateManifests, writeGeneratedFiles } from 'kubeloop/manifests';
 * import { Deployment } from 'kubeloop/client';
 * import { Foo } from './api/foo.js';
 *
 * await writeGeneratedFiles('.', generateManifests({
 *   name: 'foo-operator',
 *   image: 'ghcr.io/acme/foo-operator:v0.1.0',
 *   resources: [Foo],
 *   controllers: [{ for: Foo, owns: [Deployment] }],
 * }));
 * // then: kubectl apply -k config/default
 * ```
 *
 * @module
 */
export { type DockerfileOptions, dockerfile, dockerignore } from './dockerfile.js';
export {
  defaultManagerArgs,
  type ManagerNames,
  type ManagerOptions,
  managerDeployment,
  managerNamespace,
  managerSelector,
  metricsService,
  projectLabels,
} from './manager.js';
export {
  type CrdSource,
  type GeneratedFile,
  generateManifests,
  installManifests,
  type OperatorProject,
  renderInstallYaml,
  writeGeneratedFiles,
} from './project.js';
export {
  type ControllerPermissions,
  type DerivedRules,
  derivePolicyRules,
  type ManagerPermissions,
  type Manifest,
  type PolicyRule,
  type RbacManifests,
  type RbacNames,
  rbacManifests,
  VERBS,
} from './rbac.js';
export {
  CrdConversionError,
  type CrdToTypeScriptOptions,
  crdToTypeScript,
  parseCustomResourceDefinitions,
  schemaToTypeBox,
} from './typescript.js';
export {
  type ConversionWebhookOptions,
  certManagerResources,
  injectCaFrom,
  managerWebhookPatch,
  type WebhookClientTarget,
  type WebhookConfigurationOptions,
  type WebhookLayoutFile,
  type WebhookNames,
  webhookConfigurations,
  webhookKustomizeFiles,
  webhookService,
  withConversionWebhook,
} from './webhook.js';
export { standInForCertManager } from './webhook-layout.js';
export { GENERATED_HEADER, toYaml } from './yaml.js';
