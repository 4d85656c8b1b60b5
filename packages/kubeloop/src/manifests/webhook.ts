/**
 * The manifests of an operator's webhooks, as kubebuilder's `config/webhook` and
 * `config/certmanager` hold them: Mutating/ValidatingWebhookConfigurations with rules derived
 * from the declared webhooks, the webhook Service, the CRD conversion stanza, cert-manager's
 * Issuer and Certificate, CA injection annotations, and the manager's certificate volume.
 */
import type { CustomResourceDefinition } from '../schema/types.js';
import type { AdmissionWebhook } from '../webhook/admission.js';
import { DEFAULT_CERT_DIR } from '../webhook/certs.js';
import { managerSelector, projectLabels } from './manager.js';
import type { Manifest } from './rbac.js';
import { GENERATED_HEADER, toYaml } from './yaml.js';

/** Where the API server calls the webhooks: a Service in the cluster, or a URL (local development). */
export type WebhookClientTarget =
  | { readonly service: { readonly name: string; readonly namespace: string; readonly port?: number } }
  | { readonly url: string };

/** Options of {@link webhookConfigurations}. */
export interface WebhookConfigurationOptions {
  readonly target: WebhookClientTarget;
  /** PEM of the CA the API server verifies the server with (base64-encoded into `caBundle`). */
  readonly caBundle?: string;
  /** Names of the two configurations (kubebuilder's defaults). */
  readonly mutatingName?: string;
  readonly validatingName?: string;
  /** `namespace/certificate` for cert-manager's CA injector (`cert-manager.io/inject-ca-from`). */
  readonly injectCaFrom?: string;
  readonly labels?: Readonly<Record<string, string>>;
}

function clientConfig(target: WebhookClientTarget, path: string, caBundle?: string): Record<string, unknown> {
  const ca = caBundle ? { caBundle: Buffer.from(caBundle).toString('base64') } : {};
  if ('url' in target) return { url: `${target.url.replace(/\/$/, '')}${path}`, ...ca };
  const { name, namespace, port } = target.service;
  return { service: { name, namespace, path, ...(port !== undefined && { port }) }, ...ca };
}

function entry(w: AdmissionWebhook, o: WebhookConfigurationOptions): Record<string, unknown> {
  return {
    admissionReviewVersions: ['v1'],
    clientConfig: clientConfig(o.target, w.path, o.caBundle),
    failurePolicy: w.failurePolicy,
    name: w.name,
    rules: [
      {
        apiGroups: [w.target.group],
        apiVersions: [w.target.version],
        operations: [...w.operations],
        resources: [w.target.plural],
      },
    ],
    sideEffects: w.sideEffects,
    ...(w.timeoutSeconds !== 10 && { timeoutSeconds: w.timeoutSeconds }),
  };
}

/**
 * The MutatingWebhookConfiguration and ValidatingWebhookConfiguration of `webhooks` (each only
 * when it has entries), as kubebuilder's `controller-gen webhook` writes them: one entry per
 * webhook with its name, path, rules (group, version, plural, operations), `sideEffects`,
 * `admissionReviewVersions: [v1]` and `failurePolicy` (Fail by default).
 *
 * @example
 * ```ts
 * // Local development: the server on this machine, its generated CA.
 * webhookConfigurations(server.webhooks, { target: { url: server.url }, caBundle: server.caBundle });
 * // In a cluster, with cert-manager injecting the CA:
 * webhookConfigurations(server.webhooks, {
 *   target: { service: { name: 'webhook-service', namespace: 'system' } },
 *   injectCaFrom: 'system/serving-cert',
 * });
 * ```
 */
export function webhookConfigurations(
  webhooks: readonly AdmissionWebhook[],
  options: WebhookConfigurationOptions,
): Manifest[] {
  const out: Manifest[] = [];
  const metadata = (name: string) => ({
    name,
    ...(options.labels && { labels: { ...options.labels } }),
    ...(options.injectCaFrom && { annotations: { 'cert-manager.io/inject-ca-from': options.injectCaFrom } }),
  });
  const mutating = webhooks.filter((w) => w.type === 'mutating');
  const validating = webhooks.filter((w) => w.type === 'validating');
  if (mutating.length > 0)
    out.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: metadata(options.mutatingName ?? 'mutating-webhook-configuration'),
      webhooks: mutating.map((w) => entry(w, options)),
    });
  if (validating.length > 0)
    out.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: metadata(options.validatingName ?? 'validating-webhook-configuration'),
      webhooks: validating.map((w) => entry(w, options)),
    });
  return out;
}

/** Names the webhook objects share (kubebuilder's defaults before kustomize's prefix). */
export interface WebhookNames {
  readonly project: string;
  /** default `webhook-service` */
  readonly service?: string;
  /** default `system` (kubebuilder's placeholder, replaced by config/default's namespace) */
  readonly namespace?: string;
  /** default `serving-cert` */
  readonly certificate?: string;
  /** default `selfsigned-issuer` */
  readonly issuer?: string;
  /** default `webhook-server-cert` */
  readonly secret?: string;
  /** The server's port in the pod (default 9443). */
  readonly port?: number;
}

const n = (w: WebhookNames) => ({
  service: w.service ?? 'webhook-service',
  namespace: w.namespace ?? 'system',
  certificate: w.certificate ?? 'serving-cert',
  issuer: w.issuer ?? 'selfsigned-issuer',
  secret: w.secret ?? 'webhook-server-cert',
  port: w.port ?? 9443,
});

/** The Service in front of the webhook server (443 → 9443), kubebuilder's `config/webhook/service.yaml`. */
export function webhookService(names: WebhookNames): Manifest {
  const x = n(names);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: x.service, namespace: x.namespace, labels: projectLabels(names.project) },
    spec: {
      ports: [{ port: 443, protocol: 'TCP', targetPort: x.port }],
      selector: managerSelector(names.project),
    },
  };
}

/**
 * cert-manager's self-signed Issuer and the Certificate of the webhook Service's DNS names,
 * stored in the Secret the manager mounts (kubebuilder's `config/certmanager`).
 */
export function certManagerResources(names: WebhookNames): Manifest[] {
  const x = n(names);
  const labels = projectLabels(names.project);
  return [
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: x.issuer, namespace: x.namespace, labels },
      spec: { selfSigned: {} },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: x.certificate, namespace: x.namespace, labels },
      spec: {
        dnsNames: [`${x.service}.${x.namespace}.svc`, `${x.service}.${x.namespace}.svc.cluster.local`],
        issuerRef: { kind: 'Issuer', name: x.issuer },
        secretName: x.secret,
      },
    },
  ];
}

/** The `cert-manager.io/inject-ca-from` value naming the Certificate: `<namespace>/<certificate>`. */
export const injectCaFrom = (names: WebhookNames): string => `${n(names).namespace}/${n(names).certificate}`;

/**
 * A strategic-merge patch of the manager Deployment (kubebuilder's `manager_webhook_patch.yaml`):
 * the certificate Secret mounted where the server reads it, and the `webhook-server` port.
 */
export function managerWebhookPatch(deploymentName: string, names: WebhookNames): Manifest {
  const x = n(names);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: deploymentName, namespace: x.namespace },
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: 'manager',
              ports: [{ containerPort: x.port, name: 'webhook-server', protocol: 'TCP' }],
              volumeMounts: [{ mountPath: DEFAULT_CERT_DIR, name: 'cert', readOnly: true }],
            },
          ],
          volumes: [{ name: 'cert', secret: { secretName: x.secret } }],
        },
      },
    },
  };
}

/** Options of {@link withConversionWebhook}. */
export interface ConversionWebhookOptions {
  readonly target: WebhookClientTarget;
  /** PEM of the CA (base64-encoded into `caBundle`). */
  readonly caBundle?: string;
  /** default `/convert` */
  readonly path?: string;
  /** `namespace/certificate` for cert-manager's CA injector. */
  readonly injectCaFrom?: string;
}

/**
 * The CRD with `spec.conversion` set to the webhook strategy (`conversionReviewVersions: [v1]`,
 * the server's `/convert`), as kubebuilder's `webhook_in_<plural>.yaml` patch makes it.
 */
export function withConversionWebhook(
  crd: CustomResourceDefinition,
  options: ConversionWebhookOptions,
): CustomResourceDefinition {
  const copy = JSON.parse(JSON.stringify(crd)) as CustomResourceDefinition;
  copy.spec.conversion = {
    strategy: 'Webhook',
    webhook: {
      clientConfig: clientConfig(options.target, options.path ?? '/convert', options.caBundle) as never,
      conversionReviewVersions: ['v1'],
    },
  };
  if (options.injectCaFrom) {
    copy.metadata ??= {};
    copy.metadata.annotations = {
      ...copy.metadata.annotations,
      'cert-manager.io/inject-ca-from': options.injectCaFrom,
    };
  }
  return copy;
}

/** One generated file (as `generateManifests` returns them). */
export interface WebhookLayoutFile {
  readonly path: string;
  readonly content: string;
}

/**
 * kubebuilder's `config/webhook` and `config/certmanager` folders for `webhooks`: the
 * configurations (Service client config, CA injected by cert-manager from the Certificate), the
 * webhook Service, the Issuer and Certificate, each folder with its `kustomization.yaml`, and
 * `config/default/manager_webhook_patch.yaml` mounting the certificate into the manager. Add
 * `../webhook` and `../certmanager` to `config/default`'s resources and the patch to its patches.
 */
export function webhookKustomizeFiles(
  webhooks: readonly AdmissionWebhook[],
  names: WebhookNames & { readonly deployment?: string },
): WebhookLayoutFile[] {
  const x = n(names);
  const kustomization = (resources: string[]) =>
    toYaml([{ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources }]);
  const configurations = webhookConfigurations(webhooks, {
    target: { service: { name: x.service, namespace: x.namespace } },
    injectCaFrom: injectCaFrom(names),
  });
  return [
    { path: 'config/webhook/manifests.yaml', content: toYaml(configurations, GENERATED_HEADER) },
    { path: 'config/webhook/service.yaml', content: toYaml([webhookService(names)]) },
    { path: 'config/webhook/kustomization.yaml', content: kustomization(['manifests.yaml', 'service.yaml']) },
    { path: 'config/certmanager/certificate.yaml', content: toYaml(certManagerResources(names)) },
    { path: 'config/certmanager/kustomization.yaml', content: kustomization(['certificate.yaml']) },
    {
      path: 'config/default/manager_webhook_patch.yaml',
      content: toYaml([managerWebhookPatch(names.deployment ?? 'controller-manager', names)]),
    },
  ];
}
