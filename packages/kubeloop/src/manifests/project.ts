/**
 * The deployable manifests of an operator, in kubebuilder's kustomize layout:
 *
 * ```
 * config/crd/        the CRDs (bases/<group>_<plural>.yaml)
 * config/rbac/       ServiceAccount, manager role and binding, leader election, editor/viewer roles
 * config/manager/    the Namespace and the manager Deployment (image set by kustomize's `images`)
 * config/default/    everything, with the project's name prefix and namespace, plus the metrics Service
 * config/samples/    one example object per kind
 * config/webhook/, config/certmanager/   with webhooks: the configurations, their Service, cert-manager
 * dist/install.yaml  what `kubectl kustomize config/default` renders, as one file
 * Dockerfile
 * ```
 *
 * One difference from kubebuilder: bases leave the namespace unset, and config/default sets it
 * with a NamespaceTransformer (`unsetOnly`), so that the Roles of a namespaced manager stay in
 * the namespaces they grant access to.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { KubeObject } from '../client/types.js';
import type { CustomResourceDefinition } from '../schema/types.js';
import type { AdmissionWebhook } from '../webhook/admission.js';
import type { ConversionWebhook } from '../webhook/conversion.js';
import { type DockerfileOptions, dockerfile, dockerignore } from './dockerfile.js';
import {
  type ManagerOptions,
  managerDeployment,
  managerNamespace,
  metricsService,
  projectLabels,
} from './manager.js';
import { type ManagerPermissions, type Manifest, rbacManifests } from './rbac.js';
import {
  finalWebhookObjects,
  hasWebhooks,
  markConversions,
  patchManagerForWebhooks,
  splitWebhooks,
  webhookBaseLayout,
} from './webhook-layout.js';
import { GENERATED_HEADER, toYaml } from './yaml.js';

/** Anything that yields a CRD: a `defineResource` declaration, or a CRD wrapped by hand. */
export interface CrdSource {
  crd(): CustomResourceDefinition;
}

/** An operator project: its resources, its controllers' permissions and how it runs. */
export interface OperatorProject extends ManagerPermissions {
  /**
   * The project's name (an RFC 1123 label): prefix of every object's name (`<name>-controller-manager`)
   * and of its namespace (`<name>-system`).
   */
  readonly name: string;
  /** The manager's namespace (default `<name>-system`). */
  readonly namespace?: string;
  /** The kinds the operator defines: their CRDs are installed with it. */
  readonly resources: readonly CrdSource[];
  /** The manager's image, e.g. `ghcr.io/acme/foo-operator:v0.1.0` (default `controller:latest`). */
  readonly image?: string;
  readonly manager?: Omit<ManagerOptions, 'image' | 'leaderElection'>;
  /** Example objects for config/samples; kinds without one get a skeleton. */
  readonly samples?: readonly KubeObject[];
  readonly docker?: DockerfileOptions;
  /**
   * The operator's webhooks (`defaulter`, `validator`, `mutatingWebhook`, `conversion`… from
   * `kubeloop/webhook`). With any, the layout gains config/webhook, config/certmanager, the
   * conversion stanza of each converted CRD and config/default's wiring, as kubebuilder's does.
   */
  readonly webhooks?: readonly (AdmissionWebhook | ConversionWebhook)[];
}

/** One generated file, relative to the project's root. */
export interface GeneratedFile {
  readonly path: string;
  readonly content: string;
}

interface Layout {
  crds: CustomResourceDefinition[];
  namespace: Manifest;
  rbac: ReturnType<typeof rbacManifests>;
  kindRoles: Array<{ file: string; object: Manifest }>;
  deployment: Manifest;
  service: Manifest;
  /** With webhooks, and `final`: their configurations, Service, Issuer and Certificate. */
  webhooks: Manifest[];
}

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function names(p: OperatorProject) {
  if (!LABEL.test(p.name) || p.name.length > 40)
    throw new TypeError(
      `project name ${JSON.stringify(p.name)} must be a lowercase RFC 1123 label of at most 40 characters (it prefixes object names)`,
    );
  return { namespace: p.namespace ?? `${p.name}-system`, prefix: `${p.name}-` };
}

/** The objects of the project; `final` gives them the prefix and namespace config/default adds. */
function layout(p: OperatorProject, final: boolean): Layout {
  const { namespace, prefix: fullPrefix } = names(p);
  const prefix = final ? fullPrefix : '';
  const ns = final ? namespace : undefined;
  const labels = projectLabels(p.name);
  const hooks = splitWebhooks(p.webhooks);
  const crds = markConversions(
    p.resources.map((r) => r.crd()),
    hooks,
    final ? { prefix, namespace } : undefined,
  );
  const rbac = rbacManifests(
    p,
    {
      serviceAccount: `${prefix}controller-manager`,
      role: `${prefix}manager-role`,
      leaderElectionRole: `${prefix}leader-election-role`,
      ...(ns !== undefined && { namespace: ns }),
    },
    labels,
  );
  const kindRoles: Layout['kindRoles'] = [];
  for (const crd of crds) {
    const { group } = crd.spec;
    const { plural, kind } = crd.spec.names;
    const lower = kind.toLowerCase();
    for (const [role, verbs] of [
      ['editor', ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']],
      ['viewer', ['get', 'list', 'watch']],
    ] as const)
      kindRoles.push({
        file: `${lower}_${role}_role.yaml`,
        object: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: `${prefix}${lower}-${role}-role`, labels: { ...labels } },
          rules: [
            { apiGroups: [group], resources: [plural], verbs: [...verbs] },
            { apiGroups: [group], resources: [`${plural}/status`], verbs: ['get'] },
          ],
        },
      });
  }
  const managerNames = {
    project: p.name,
    deployment: `${prefix}controller-manager`,
    serviceAccount: `${prefix}controller-manager`,
    metricsService: `${prefix}controller-manager-metrics-service`,
    ...(ns !== undefined && { namespace: ns }),
  };
  const managerOptions: ManagerOptions = {
    ...p.manager,
    leaderElection: p.leaderElection ?? true,
    ...(final && p.image !== undefined && { image: p.image }),
  };
  const deployment = managerDeployment(managerNames, managerOptions);
  const withHooks = final && hasWebhooks(hooks);
  return {
    crds,
    namespace: managerNamespace(namespace, p.name),
    rbac,
    kindRoles,
    deployment: withHooks ? patchManagerForWebhooks(deployment) : deployment,
    service: metricsService(managerNames, managerOptions),
    webhooks: withHooks ? finalWebhookObjects(p.name, hooks, { prefix, namespace }) : [],
  };
}

/** kustomize's legacy order, which `kubectl kustomize` prints in. */
const KIND_ORDER = [
  'Namespace',
  'CustomResourceDefinition',
  'ServiceAccount',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'Service',
  'Deployment',
];
/** Kinds kustomize prints last (after every kind it does not know, in GVK order). */
const KIND_LAST = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

function objectsOf(l: Layout): Manifest[] {
  const rbac = l.rbac;
  return [
    l.namespace,
    ...(l.crds as unknown as Manifest[]),
    rbac.serviceAccount,
    ...(rbac.clusterRole ? [rbac.clusterRole] : []),
    ...(rbac.clusterRoleBinding ? [rbac.clusterRoleBinding] : []),
    ...rbac.namespacedRoles,
    ...(rbac.leaderElectionRole ? [rbac.leaderElectionRole] : []),
    ...(rbac.leaderElectionRoleBinding ? [rbac.leaderElectionRoleBinding] : []),
    ...l.kindRoles.map((r) => r.object),
    l.service,
    l.deployment,
    ...l.webhooks,
  ];
}

/**
 * Every object `kubectl apply -k config/default` installs, with the project's name prefix and
 * namespace: Namespace, CRDs, ServiceAccount, RBAC, metrics Service, manager Deployment — in
 * the order kustomize prints them.
 *
 * @example
 * ```ts
 * const objects = installManifests({ name: 'foo-operator', resources: [Foo], controllers: [{ for: Foo, owns: [Deployment] }] });
 * ```
 */
export function installManifests(p: OperatorProject): Manifest[] {
  const rank = (o: Manifest) => {
    const i = KIND_ORDER.indexOf(o.kind);
    if (i >= 0) return i;
    const last = KIND_LAST.indexOf(o.kind);
    return last < 0 ? KIND_ORDER.length : KIND_ORDER.length + 1 + last;
  };
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const gvk = (o: Manifest) => `${o.apiVersion}/${o.kind}`;
  const id = (o: Manifest) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  return objectsOf(layout(p, true)).sort(
    (a, b) => rank(a) - rank(b) || cmp(gvk(a), gvk(b)) || cmp(id(a), id(b)),
  );
}

/** `dist/install.yaml`: every object of the operator in one file, for `kubectl apply -f`. */
export function renderInstallYaml(p: OperatorProject): string {
  return toYaml(installManifests(p), GENERATED_HEADER);
}

function splitImage(image: string): { newName: string; newTag?: string; digest?: string } {
  const at = image.indexOf('@');
  if (at >= 0) return { newName: image.slice(0, at), digest: image.slice(at + 1) };
  const colon = image.lastIndexOf(':');
  if (colon > image.lastIndexOf('/'))
    return { newName: image.slice(0, colon), newTag: image.slice(colon + 1) };
  return { newName: image };
}

function kustomization(fields: Record<string, unknown>, header = ''): string {
  return toYaml(
    [{ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', ...fields }],
    header,
  );
}

function sampleFile(group: string, version: string, kind: string): string {
  return `${group.split('.')[0]}_${version}_${kind.toLowerCase()}.yaml`;
}

/**
 * Every file of the operator's deployable layout: `config/{crd,rbac,manager,default,samples}`,
 * `dist/install.yaml`, `Dockerfile` and `.dockerignore`. `kubectl apply -k config/default`
 * installs the operator; `kubectl apply -f dist/install.yaml` does the same from one file.
 *
 * @example
 * ```ts
 * await writeGeneratedFiles('.', generateManifests({
 *   name: 'foo-operator', image: 'ghcr.io/acme/foo-operator:v0.1.0',
 *   resources: [Foo], controllers: [{ for: Foo, owns: [Deployment] }],
 * }));
 * ```
 */
export function generateManifests(p: OperatorProject): GeneratedFile[] {
  const { namespace, prefix } = names(p);
  const base = layout(p, false);
  const files: GeneratedFile[] = [];
  const add = (path: string, content: string) => files.push({ path, content });
  const labels = projectLabels(p.name);

  // config/crd
  const crdFiles = base.crds.map((crd) => {
    const file = `bases/${crd.spec.group}_${crd.spec.names.plural}.yaml`;
    add(`config/crd/${file}`, toYaml([crd], GENERATED_HEADER));
    return file;
  });
  add('config/crd/kustomization.yaml', kustomization({ resources: crdFiles }));

  // config/rbac
  const r = base.rbac;
  const rbacFiles: string[] = [];
  const rbacFile = (file: string, objects: Manifest[]) => {
    if (objects.length === 0) return;
    add(`config/rbac/${file}`, toYaml(objects, GENERATED_HEADER));
    rbacFiles.push(file);
  };
  rbacFile('service_account.yaml', [r.serviceAccount]);
  rbacFile('role.yaml', r.clusterRole ? [r.clusterRole] : []);
  rbacFile('role_binding.yaml', r.clusterRoleBinding ? [r.clusterRoleBinding] : []);
  rbacFile('namespaced_roles.yaml', r.namespacedRoles);
  rbacFile('leader_election_role.yaml', r.leaderElectionRole ? [r.leaderElectionRole] : []);
  rbacFile(
    'leader_election_role_binding.yaml',
    r.leaderElectionRoleBinding ? [r.leaderElectionRoleBinding] : [],
  );
  for (const k of base.kindRoles) rbacFile(k.file, [k.object]);
  add('config/rbac/kustomization.yaml', kustomization({ resources: rbacFiles }));

  // config/manager
  add('config/manager/manager.yaml', toYaml([base.namespace, base.deployment]));
  add(
    'config/manager/kustomization.yaml',
    kustomization({
      resources: ['manager.yaml'],
      images: [{ name: 'controller', ...splitImage(p.image ?? 'controller:latest') }],
    }),
  );

  // config/webhook, config/certmanager and what config/default gains with them
  const hooks = splitWebhooks(p.webhooks);
  const webhookLayout = hasWebhooks(hooks) ? webhookBaseLayout(p.name, hooks, base.crds) : undefined;
  for (const f of webhookLayout?.files ?? []) add(f.path, f.content);
  const wiring = webhookLayout?.wiring;

  // config/default
  add('config/default/metrics_service.yaml', toYaml([base.service]));
  add(
    'config/default/kustomization.yaml',
    kustomization(
      {
        namePrefix: prefix,
        resources: ['../crd', '../rbac', '../manager', ...(wiring?.resources ?? []), 'metrics_service.yaml'],
        ...(wiring && { patches: wiring.patches }),
        transformers: [
          toYaml([
            {
              apiVersion: 'builtin',
              kind: 'NamespaceTransformer',
              metadata: { name: 'namespace', namespace },
              unsetOnly: true,
              setRoleBindingSubjects: 'allServiceAccounts',
            },
          ]).trimEnd(),
          // After the namespace is set: the replacements read the webhook Service's namespace.
          ...(wiring ? [wiring.transformer] : []),
        ],
      },
      `# The operator, installed with \`kubectl apply -k config/default\`: every object is named\n# "${prefix}…" and lives in the namespace ${namespace} (set below).\n`,
    ),
  );

  // config/samples
  const sampleFiles: string[] = [];
  for (const crd of base.crds) {
    const storage = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
    if (!storage) continue;
    const { group } = crd.spec;
    const { kind } = crd.spec.names;
    const given = (p.samples ?? []).filter(
      (s) => s.kind === kind && typeof s.apiVersion === 'string' && s.apiVersion.startsWith(`${group}/`),
    );
    if (given.length > 0) {
      for (const [i, s] of given.entries()) {
        const version = (s.apiVersion as string).slice(group.length + 1);
        const file = sampleFile(group, version, kind).replace(
          /\.yaml$/,
          i === 0 ? '.yaml' : `-${i + 1}.yaml`,
        );
        add(`config/samples/${file}`, toYaml([s]));
        sampleFiles.push(file);
      }
    } else {
      const file = sampleFile(group, storage.name, kind);
      const skeleton = {
        apiVersion: `${group}/${storage.name}`,
        kind,
        metadata: { name: `${kind.toLowerCase()}-sample`, labels: { ...labels } },
        spec: {},
      };
      add(`config/samples/${file}`, toYaml([skeleton], '# TODO: fill in the spec of this example.\n'));
      sampleFiles.push(file);
    }
  }
  add('config/samples/kustomization.yaml', kustomization({ resources: sampleFiles }));

  add('dist/install.yaml', renderInstallYaml(p));
  add(
    'Dockerfile',
    dockerfile({
      ...p.docker,
    }),
  );
  add('.dockerignore', dockerignore());
  return files;
}

/**
 * Writes generated files under `root`, creating folders as needed, and returns the paths it
 * wrote. A file whose content is already that is left alone (its mtime too: `kubeloop dev`, tsc
 * and editors watching it see no change). Each file is written to a temporary file beside it,
 * then renamed over it, so a reader (`kubectl apply -k` during `kubeloop dev`) never sees half a file.
 *
 * @example
 * ```ts
 * await writeGeneratedFiles(process.cwd(), generateManifests(project));
 * ```
 */
export async function writeGeneratedFiles(root: string, files: readonly GeneratedFile[]): Promise<string[]> {
  const written: string[] = [];
  for (const f of files) {
    const path = join(root, f.path);
    const current = await readFile(path, 'utf8').catch(() => undefined);
    if (current === f.content) continue;
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      await writeFile(temporary, f.content);
      await rename(temporary, path);
    } catch (err) {
      await rm(temporary, { force: true });
      throw err;
    }
    written.push(f.path);
  }
  return written;
}
