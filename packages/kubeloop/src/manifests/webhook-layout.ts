/**
 * What `generateManifests` adds to the kustomize layout when the project has webhooks, as
 * kubebuilder's `config/` looks once webhooks are enabled:
 *
 * ```
 * config/webhook/      the Mutating/ValidatingWebhookConfigurations (Service client config) and the Service
 * config/certmanager/  cert-manager's self-signed Issuer and the serving Certificate
 * config/crd/bases/    each converted CRD with its `spec.conversion` webhook stanza
 * config/default/      ../webhook and ../certmanager, manager_webhook_patch.yaml (certificate volume,
 *                      webhook port, `--webhook-cert-path`), and the replacements that fill in the
 *                      Service's final name and namespace and cert-manager's CA injection
 * ```
 *
 * The replacements run as a transformer after config/default's NamespaceTransformer (kustomize
 * runs a `replacements:` field before `transformers:`, when the namespace is not set yet).
 * {@link finalWebhookObjects} computes the same objects in TypeScript for `dist/install.yaml`.
 */
import { createCertificateAuthority, issueServingCertificate } from '../pki/index.js';
import type { CustomResourceDefinition } from '../schema/types.js';
import type { AdmissionWebhook } from '../webhook/admission.js';
import { DEFAULT_CERT_DIR } from '../webhook/certs.js';
import type { ConversionWebhook } from '../webhook/conversion.js';
import { projectLabels } from './manager.js';
import type { Manifest } from './rbac.js';
import {
  certManagerResources,
  webhookConfigurations,
  webhookService,
  withConversionWebhook,
} from './webhook.js';
import { GENERATED_HEADER, toYaml } from './yaml.js';

/** The webhooks of a project: admission webhooks and conversions. */
export interface ProjectWebhooks {
  readonly admission: readonly AdmissionWebhook[];
  readonly conversions: readonly ConversionWebhook[];
}

/** Splits what a project declares into admission webhooks and conversions. */
export function splitWebhooks(list: readonly (AdmissionWebhook | ConversionWebhook)[] = []): ProjectWebhooks {
  const admission: AdmissionWebhook[] = [];
  const conversions: ConversionWebhook[] = [];
  for (const w of list) {
    if ('convert' in w) conversions.push(w);
    else admission.push(w);
  }
  return { admission, conversions };
}

/** Whether a project declares any webhook (and so gets config/webhook and config/certmanager). */
export const hasWebhooks = (w: ProjectWebhooks): boolean =>
  w.admission.length > 0 || w.conversions.length > 0;

/** kubebuilder's names, before kustomize's prefix. */
const SERVICE = 'webhook-service';
const CERTIFICATE = 'serving-cert';
const ISSUER = 'selfsigned-issuer';
const SECRET = 'webhook-server-cert';
const PORT = 9443;

const converts = (crd: CustomResourceDefinition, w: ProjectWebhooks) =>
  w.conversions.some((c) => c.group === crd.spec.group && c.kind === crd.spec.names.kind);

/**
 * The CRDs with a conversion webhook stanza for each one that has a registered conversion:
 * `final` names the prefixed Service in the manager's namespace with cert-manager's CA injection
 * (as config/default renders it); otherwise the base's `webhook-service` in `system`
 * (kubebuilder's placeholders, replaced by config/default).
 */
export function markConversions(
  crds: readonly CustomResourceDefinition[],
  w: ProjectWebhooks,
  final?: { readonly prefix: string; readonly namespace: string },
): CustomResourceDefinition[] {
  return crds.map((crd) => {
    if (!converts(crd, w)) return crd;
    if (!final)
      return withConversionWebhook(crd, { target: { service: { name: SERVICE, namespace: 'system' } } });
    return withConversionWebhook(crd, {
      target: { service: { name: `${final.prefix}${SERVICE}`, namespace: final.namespace } },
      injectCaFrom: `${final.namespace}/${final.prefix}${CERTIFICATE}`,
    });
  });
}

/** The args, port and certificate volume config/default's JSON patch adds to the manager container. */
const PATCH_OPS = [
  {
    op: 'add',
    path: '/spec/template/spec/containers/0/args/-',
    value: `--webhook-cert-path=${DEFAULT_CERT_DIR}`,
  },
  // The server binds 127.0.0.1 by default (local development); in a pod the Service reaches it.
  { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--webhook-host=0.0.0.0' },
  {
    op: 'add',
    path: '/spec/template/spec/containers/0/ports/-',
    value: { containerPort: PORT, name: 'webhook-server', protocol: 'TCP' },
  },
  {
    op: 'add',
    path: '/spec/template/spec/containers/0/volumeMounts/-',
    value: { mountPath: DEFAULT_CERT_DIR, name: 'webhook-certs', readOnly: true },
  },
  {
    op: 'add',
    path: '/spec/template/spec/volumes/-',
    value: { name: 'webhook-certs', secret: { secretName: SECRET } },
  },
] as const;

/** The manager Deployment as config/default's webhook patch leaves it. */
export function patchManagerForWebhooks(deployment: Manifest): Manifest {
  const copy = JSON.parse(JSON.stringify(deployment)) as Manifest & {
    spec: { template: { spec: { containers: Array<Record<string, unknown[]>>; volumes: unknown[] } } };
  };
  const pod = copy.spec.template.spec;
  const container = pod.containers[0];
  if (!container) return copy;
  for (const o of PATCH_OPS) {
    const field = o.path.split('/').at(-2) ?? '';
    if (field === 'volumes') pod.volumes = [...(pod.volumes ?? []), o.value];
    else container[field] = [...(container[field] ?? []), o.value];
  }
  return copy;
}

interface Select {
  kind: string;
  group?: string;
  version?: string;
  name?: string;
}
const service: Select = { kind: 'Service', version: 'v1', name: SERVICE };
const certificate: Select = {
  kind: 'Certificate',
  group: 'cert-manager.io',
  version: 'v1',
  name: CERTIFICATE,
};

function replacement(
  source: Select,
  fieldPath: string,
  targets: Array<[Select, string[], Record<string, unknown>]>,
) {
  return {
    source: { ...source, fieldPath },
    targets: targets.map(([select, fieldPaths, options]) => ({ select, fieldPaths, options })),
  };
}

/**
 * kubebuilder's config/default replacements: the webhook Service's final name and namespace into
 * the Certificate's DNS names and the converted CRDs' client config, and the Certificate's
 * `namespace/name` into the `cert-manager.io/inject-ca-from` annotation of the configurations
 * and converted CRDs.
 */
function replacements(w: ProjectWebhooks, crds: readonly CustomResourceDefinition[]) {
  const converted: Select[] = crds
    .filter((c) => converts(c, w))
    .map((c) => ({
      kind: 'CustomResourceDefinition',
      group: 'apiextensions.k8s.io',
      name: c.metadata?.name ?? '',
    }));
  const configurations: Select[] = [
    ...(w.admission.some((a) => a.type === 'mutating') ? [{ kind: 'MutatingWebhookConfiguration' }] : []),
    ...(w.admission.some((a) => a.type === 'validating') ? [{ kind: 'ValidatingWebhookConfiguration' }] : []),
  ];
  const dns = ['.spec.dnsNames.0', '.spec.dnsNames.1'];
  const conversionService = '.spec.conversion.webhook.clientConfig.service';
  const inject = '.metadata.annotations.[cert-manager.io/inject-ca-from]';
  const part = (index: number, delimiter: string) => ({ delimiter, index, create: true });
  return [
    replacement(service, '.metadata.name', [
      [certificate, dns, part(0, '.')],
      ...converted.map((c): [Select, string[], Record<string, unknown>] => [
        c,
        [`${conversionService}.name`],
        {},
      ]),
    ]),
    replacement(service, '.metadata.namespace', [
      [certificate, dns, part(1, '.')],
      ...converted.map((c): [Select, string[], Record<string, unknown>] => [
        c,
        [`${conversionService}.namespace`],
        {},
      ]),
    ]),
    replacement(
      certificate,
      '.metadata.namespace',
      [...configurations, ...converted].map((s): [Select, string[], Record<string, unknown>] => [
        s,
        [inject],
        part(0, '/'),
      ]),
    ),
    replacement(
      certificate,
      '.metadata.name',
      [...configurations, ...converted].map((s): [Select, string[], Record<string, unknown>] => [
        s,
        [inject],
        part(1, '/'),
      ]),
    ),
  ];
}

/** What config/default gains: resources, the manager patch and the replacement transformer. */
export interface DefaultWiring {
  readonly resources: string[];
  readonly patches: Array<{ path: string; target: { kind: string } }>;
  /** A `ReplacementTransformer` to list after the NamespaceTransformer. */
  readonly transformer: string;
}

const kustomization = (fields: Record<string, unknown>) =>
  toYaml([{ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', ...fields }]);

/**
 * The files of config/webhook, config/certmanager and config/default/manager_webhook_patch.yaml
 * (bases: unprefixed, namespace unset), and config/default's wiring for them.
 */
export function webhookBaseLayout(
  project: string,
  w: ProjectWebhooks,
  crds: readonly CustomResourceDefinition[],
): { files: Array<{ path: string; content: string }>; wiring: DefaultWiring } {
  const labels = projectLabels(project);
  const stripNamespace = (m: Manifest): Manifest => {
    const { namespace: _ns, ...metadata } = m.metadata;
    return { ...m, metadata };
  };
  // The Service reference has no namespace in the base: kustomize's name reference then sets
  // both the prefixed name and the Service's namespace (with `system`, it would match nothing).
  const configurations = webhookConfigurations(w.admission, {
    target: { service: { name: SERVICE, namespace: '' } },
    labels,
  }).map((c) => {
    for (const e of (
      c as unknown as { webhooks: Array<{ clientConfig: { service: Record<string, unknown> } }> }
    ).webhooks)
      delete e.clientConfig.service.namespace;
    return c;
  });
  const [issuer, cert] = certManagerResources({ project }).map(stripNamespace);
  const certWithPlaceholders = {
    ...cert,
    spec: {
      ...(cert?.spec as object),
      // Filled in by config/default's replacements with the Service's final name and namespace.
      dnsNames: ['SERVICE_NAME.SERVICE_NAMESPACE.svc', 'SERVICE_NAME.SERVICE_NAMESPACE.svc.cluster.local'],
    },
  };
  const files: Array<{ path: string; content: string }> = [];
  const add = (path: string, content: string) => files.push({ path, content });
  const webhookResources: string[] = [];
  if (configurations.length > 0) {
    add('config/webhook/manifests.yaml', toYaml(configurations, GENERATED_HEADER));
    webhookResources.push('manifests.yaml');
  }
  add('config/webhook/service.yaml', toYaml([stripNamespace(webhookService({ project }))]));
  webhookResources.push('service.yaml');
  add('config/webhook/kustomization.yaml', kustomization({ resources: webhookResources }));
  add('config/certmanager/certificate.yaml', toYaml([issuer, certWithPlaceholders]));
  // Teaches kustomize that a Certificate's issuerRef names an Issuer (so the prefix follows).
  add(
    'config/certmanager/kustomizeconfig.yaml',
    toYaml([
      {
        nameReference: [
          {
            kind: 'Issuer',
            group: 'cert-manager.io',
            fieldSpecs: [{ kind: 'Certificate', group: 'cert-manager.io', path: 'spec/issuerRef/name' }],
          },
        ],
      },
    ]),
  );
  add(
    'config/certmanager/kustomization.yaml',
    kustomization({ resources: ['certificate.yaml'], configurations: ['kustomizeconfig.yaml'] }),
  );
  add('config/default/manager_webhook_patch.yaml', toYaml([PATCH_OPS]));
  const transformer = toYaml([
    {
      apiVersion: 'builtin',
      kind: 'ReplacementTransformer',
      metadata: { name: 'webhook-wiring' },
      replacements: replacements(w, crds),
    },
  ]).trimEnd();
  return {
    files,
    wiring: {
      resources: ['../webhook', '../certmanager'],
      patches: [{ path: 'manager_webhook_patch.yaml', target: { kind: 'Deployment' } }],
      transformer,
    },
  };
}

/**
 * The webhook objects as config/default renders them (prefixed, in the manager's namespace,
 * cert-manager's CA injection): configurations, the Service, the Issuer and the Certificate.
 */
export function finalWebhookObjects(
  project: string,
  w: ProjectWebhooks,
  final: { readonly prefix: string; readonly namespace: string },
): Manifest[] {
  const { prefix, namespace } = final;
  const names = {
    project,
    service: `${prefix}${SERVICE}`,
    namespace,
    certificate: `${prefix}${CERTIFICATE}`,
    issuer: `${prefix}${ISSUER}`,
  };
  const configurations = webhookConfigurations(w.admission, {
    target: { service: { name: names.service, namespace } },
    injectCaFrom: `${namespace}/${names.certificate}`,
    mutatingName: `${prefix}mutating-webhook-configuration`,
    validatingName: `${prefix}validating-webhook-configuration`,
    labels: projectLabels(project),
  });
  return [webhookService(names), ...certManagerResources(names), ...configurations];
}

/**
 * config/default's objects for a cluster without cert-manager (the local control plane, a test):
 * each Certificate becomes the Secret cert-manager would issue (`tls.crt`, `tls.key`, `ca.crt`, from
 * a local CA, for its DNS names), and the CA is injected where `cert-manager.io/inject-ca-from`
 * names the Certificate, as cert-manager's CA injector does (`caBundle` of every webhook of a
 * configuration, of a CRD's conversion webhook). The Issuers and Certificates are left out.
 */
export function standInForCertManager(objects: readonly Manifest[]): Manifest[] {
  type Obj = {
    apiVersion?: string;
    kind?: string;
    metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
    spec?: {
      dnsNames?: string[];
      secretName?: string;
      conversion?: { webhook?: { clientConfig?: Record<string, unknown> } };
    };
    webhooks?: Array<{ clientConfig?: Record<string, unknown> }>;
  };
  const bundles = new Map<string, string>();
  const secrets: Manifest[] = [];
  for (const c of objects as Obj[]) {
    if (c.kind !== 'Certificate' || !String(c.apiVersion).startsWith('cert-manager.io/')) continue;
    const ns = c.metadata.namespace ?? 'default';
    const ca = createCertificateAuthority(`${c.metadata.name}-ca`);
    const dns: string[] = c.spec?.dnsNames ?? [];
    const serving = issueServingCertificate(ca, dns, dns[0] ?? c.metadata.name);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    bundles.set(`${ns}/${c.metadata.name}`, b64(ca.cert));
    secrets.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: c.spec?.secretName ?? c.metadata.name, namespace: ns },
      type: 'kubernetes.io/tls',
      data: { 'ca.crt': b64(ca.cert), 'tls.crt': b64(serving.cert), 'tls.key': b64(serving.key) },
    } as Manifest);
  }
  const out: Manifest[] = [];
  for (const o of objects as Obj[]) {
    if (
      String(o.apiVersion).startsWith('cert-manager.io/') &&
      (o.kind === 'Certificate' || o.kind === 'Issuer')
    )
      continue;
    const bundle = bundles.get(o.metadata?.annotations?.['cert-manager.io/inject-ca-from'] ?? '');
    if (!bundle) {
      out.push(o as unknown as Manifest);
      continue;
    }
    const copy = JSON.parse(JSON.stringify(o)) as Obj;
    for (const w of copy.webhooks ?? []) w.clientConfig = { ...w.clientConfig, caBundle: bundle };
    const conversion = copy.spec?.conversion?.webhook;
    if (conversion) conversion.clientConfig = { ...conversion.clientConfig, caBundle: bundle };
    out.push(copy as unknown as Manifest);
  }
  return [...out, ...secrets];
}
