import { coreToEventsV1, eventsV1ToCore } from './builtin/events.js';
import { builtinBehaviours, defaultBehaviour } from './builtin/index.js';
import { ALL_VERBS, type ResourceType, type ScaleSubresource } from './types.js';

type Spec = Partial<ResourceType> &
  Pick<ResourceType, 'group' | 'version' | 'resource' | 'kind'> & { defPackage: string };

const replicasScale: ScaleSubresource = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.spec.selector',
};

function kind(spec: Spec): ResourceType {
  const { defPackage, ...rest } = spec;
  return {
    listKind: `${spec.kind}List`,
    singular: spec.kind.toLowerCase(),
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    subresources: {},
    generation: false,
    nameValidation: 'subdomain',
    allowUnconditionalUpdate: true,
    returnDeletedObject: false,
    definition: `${defPackage}.${spec.kind}`,
    behaviour: builtinBehaviours[`${spec.group}/${spec.resource}`] ?? defaultBehaviour,
    ...rest,
  };
}

const core = (s: Omit<Spec, 'group' | 'version' | 'defPackage'>): ResourceType =>
  kind({ group: '', version: 'v1', defPackage: 'io.k8s.api.core.v1', ...s });
const apps = (s: Omit<Spec, 'group' | 'version' | 'defPackage'>): ResourceType =>
  kind({
    group: 'apps',
    version: 'v1',
    defPackage: 'io.k8s.api.apps.v1',
    categories: ['all'],
    generation: true,
    subresources: { status: true, scale: replicasScale },
    ...s,
  });
const rbac = (s: Omit<Spec, 'group' | 'version' | 'defPackage'>): ResourceType =>
  kind({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    defPackage: 'io.k8s.api.rbac.v1',
    nameValidation: 'path-segment',
    ...s,
  });

/** The built-in resources the local control plane serves (the kinds of a minimal cluster). */
export function builtinKinds(): ResourceType[] {
  return [
    core({
      resource: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      shortNames: ['ns'],
      nameValidation: 'label',
      subresources: { status: true },
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      returnDeletedObject: true,
    }),
    core({ resource: 'configmaps', kind: 'ConfigMap', shortNames: ['cm'] }),
    core({ resource: 'secrets', kind: 'Secret' }),
    core({
      resource: 'services',
      kind: 'Service',
      shortNames: ['svc'],
      categories: ['all'],
      nameValidation: 'label1035',
      subresources: { status: true },
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    }),
    core({
      resource: 'endpoints',
      kind: 'Endpoints',
      singular: 'endpoints',
      listKind: 'EndpointsList',
      shortNames: ['ep'],
    }),
    core({
      resource: 'pods',
      kind: 'Pod',
      shortNames: ['po'],
      categories: ['all'],
      subresources: { status: true },
      returnDeletedObject: true,
    }),
    core({
      resource: 'nodes',
      kind: 'Node',
      namespaced: false,
      shortNames: ['no'],
      subresources: { status: true },
    }),
    core({
      resource: 'serviceaccounts',
      kind: 'ServiceAccount',
      shortNames: ['sa'],
      returnDeletedObject: true,
    }),
    core({ resource: 'events', kind: 'Event', shortNames: ['ev'] }),
    core({
      resource: 'persistentvolumeclaims',
      kind: 'PersistentVolumeClaim',
      shortNames: ['pvc'],
      subresources: { status: true },
      returnDeletedObject: true,
    }),
    apps({ resource: 'deployments', kind: 'Deployment', shortNames: ['deploy'] }),
    apps({ resource: 'replicasets', kind: 'ReplicaSet', shortNames: ['rs'] }),
    apps({ resource: 'statefulsets', kind: 'StatefulSet', shortNames: ['sts'] }),
    apps({ resource: 'daemonsets', kind: 'DaemonSet', shortNames: ['ds'], subresources: { status: true } }),
    kind({
      group: 'apps',
      version: 'v1',
      defPackage: 'io.k8s.api.apps.v1',
      resource: 'controllerrevisions',
      kind: 'ControllerRevision',
    }),
    kind({
      group: 'batch',
      version: 'v1',
      defPackage: 'io.k8s.api.batch.v1',
      resource: 'jobs',
      kind: 'Job',
      categories: ['all'],
      generation: true,
      subresources: { status: true },
    }),
    kind({
      group: 'discovery.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.discovery.v1',
      resource: 'endpointslices',
      kind: 'EndpointSlice',
      generation: true,
    }),
    kind({
      group: 'coordination.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.coordination.v1',
      resource: 'leases',
      kind: 'Lease',
    }),
    kind({
      group: 'events.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.events.v1',
      resource: 'events',
      kind: 'Event',
      shortNames: ['ev'],
      // One collection with core/v1 events, as in kube-apiserver.
      storedAs: { group: '', resource: 'events', toStored: eventsV1ToCore, fromStored: coreToEventsV1 },
    }),
    rbac({ resource: 'roles', kind: 'Role' }),
    rbac({ resource: 'clusterroles', kind: 'ClusterRole', namespaced: false }),
    rbac({ resource: 'rolebindings', kind: 'RoleBinding' }),
    rbac({ resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false }),
    kind({
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.admissionregistration.v1',
      resource: 'mutatingwebhookconfigurations',
      kind: 'MutatingWebhookConfiguration',
      namespaced: false,
      categories: ['api-extensions'],
      generation: true,
    }),
    kind({
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.admissionregistration.v1',
      resource: 'validatingwebhookconfigurations',
      kind: 'ValidatingWebhookConfiguration',
      namespaced: false,
      categories: ['api-extensions'],
      generation: true,
    }),
    kind({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1',
      resource: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      generation: true,
      subresources: { status: true },
      returnDeletedObject: true,
      deletionFinalizers: ['customresourcecleanup.apiextensions.k8s.io'],
    }),
  ];
}
