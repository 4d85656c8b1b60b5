import { hpaV1Behaviour, hpaV1ToV2, hpaV2ToV1 } from './builtin/autoscaling.js';
import { coreToEventsV1, eventsV1ToCore } from './builtin/events.js';
import { builtinBehaviours, defaultBehaviour } from './builtin/index.js';
import { virtualKinds } from './builtin/virtual.js';
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

const networking = (s: Omit<Spec, 'group' | 'version' | 'defPackage'>): ResourceType =>
  kind({ group: 'networking.k8s.io', version: 'v1', defPackage: 'io.k8s.api.networking.v1', ...s });
const storage = (s: Omit<Spec, 'group' | 'version' | 'defPackage'>): ResourceType =>
  kind({
    group: 'storage.k8s.io',
    version: 'v1',
    defPackage: 'io.k8s.api.storage.v1',
    namespaced: false,
    ...s,
  });
const flowcontrol = (s: Omit<Spec, 'group' | 'version' | 'defPackage'>): ResourceType =>
  kind({
    group: 'flowcontrol.apiserver.k8s.io',
    version: 'v1',
    defPackage: 'io.k8s.api.flowcontrol.v1',
    namespaced: false,
    generation: true,
    subresources: { status: true },
    ...s,
  });

/** A create-only review kind: answered from the request, never stored. */
function review(group: string, resource: string, kindName: string, namespaced: boolean): ResourceType {
  return kind({
    group,
    version: 'v1',
    defPackage: `io.k8s.api.${group.split('.')[0]}.v1`,
    resource,
    kind: kindName,
    namespaced,
    verbs: ['create'],
    virtual: virtualKinds.review(kindName),
  });
}

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
      subresources: { token: true },
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
    core({
      resource: 'replicationcontrollers',
      kind: 'ReplicationController',
      shortNames: ['rc'],
      categories: ['all'],
      generation: true,
      // The Scale's selector is the RC's map selector, which the scale subresource renders itself.
      subresources: {
        status: true,
        scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
      },
    }),
    core({ resource: 'podtemplates', kind: 'PodTemplate' }),
    core({
      resource: 'persistentvolumes',
      kind: 'PersistentVolume',
      namespaced: false,
      shortNames: ['pv'],
      subresources: { status: true },
      returnDeletedObject: true,
    }),
    core({
      resource: 'resourcequotas',
      kind: 'ResourceQuota',
      shortNames: ['quota'],
      subresources: { status: true },
      returnDeletedObject: true,
    }),
    core({ resource: 'limitranges', kind: 'LimitRange', shortNames: ['limits'], returnDeletedObject: true }),
    core({
      resource: 'componentstatuses',
      kind: 'ComponentStatus',
      namespaced: false,
      shortNames: ['cs'],
      verbs: ['get', 'list'],
      virtual: virtualKinds.componentStatuses,
    }),
    core({ resource: 'bindings', kind: 'Binding', verbs: ['create'], virtual: virtualKinds.bindings }),
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
      group: 'batch',
      version: 'v1',
      defPackage: 'io.k8s.api.batch.v1',
      resource: 'cronjobs',
      kind: 'CronJob',
      shortNames: ['cj'],
      categories: ['all'],
      generation: true,
      subresources: { status: true },
    }),
    // autoscaling/v2 first: the preferred version, and the one HPAs are stored at.
    kind({
      group: 'autoscaling',
      version: 'v2',
      defPackage: 'io.k8s.api.autoscaling.v2',
      resource: 'horizontalpodautoscalers',
      kind: 'HorizontalPodAutoscaler',
      shortNames: ['hpa'],
      categories: ['all'],
      generation: true,
      subresources: { status: true },
    }),
    kind({
      group: 'autoscaling',
      version: 'v1',
      defPackage: 'io.k8s.api.autoscaling.v1',
      resource: 'horizontalpodautoscalers',
      kind: 'HorizontalPodAutoscaler',
      shortNames: ['hpa'],
      categories: ['all'],
      generation: true,
      subresources: { status: true },
      behaviour: hpaV1Behaviour,
      storedAs: {
        group: 'autoscaling',
        resource: 'horizontalpodautoscalers',
        toStored: hpaV1ToV2,
        fromStored: hpaV2ToV1,
      },
    }),
    kind({
      group: 'policy',
      version: 'v1',
      defPackage: 'io.k8s.api.policy.v1',
      resource: 'poddisruptionbudgets',
      kind: 'PodDisruptionBudget',
      shortNames: ['pdb'],
      generation: true,
      subresources: { status: true },
    }),
    networking({
      resource: 'ingresses',
      kind: 'Ingress',
      shortNames: ['ing'],
      generation: true,
      subresources: { status: true },
    }),
    networking({ resource: 'ingressclasses', kind: 'IngressClass', namespaced: false }),
    networking({
      resource: 'networkpolicies',
      kind: 'NetworkPolicy',
      shortNames: ['netpol'],
      generation: true,
    }),
    storage({ resource: 'storageclasses', kind: 'StorageClass', shortNames: ['sc'] }),
    storage({ resource: 'csidrivers', kind: 'CSIDriver' }),
    storage({ resource: 'csinodes', kind: 'CSINode' }),
    storage({
      resource: 'csistoragecapacities',
      kind: 'CSIStorageCapacity',
      namespaced: true,
      singular: 'csistoragecapacity',
    }),
    storage({ resource: 'volumeattachments', kind: 'VolumeAttachment', subresources: { status: true } }),
    kind({
      group: 'scheduling.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.scheduling.v1',
      resource: 'priorityclasses',
      kind: 'PriorityClass',
      namespaced: false,
      shortNames: ['pc'],
    }),
    kind({
      group: 'certificates.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.certificates.v1',
      resource: 'certificatesigningrequests',
      kind: 'CertificateSigningRequest',
      namespaced: false,
      shortNames: ['csr'],
      nameValidation: 'path-segment',
      subresources: { status: true, approval: true },
    }),
    kind({
      group: 'node.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.node.v1',
      resource: 'runtimeclasses',
      kind: 'RuntimeClass',
      namespaced: false,
    }),
    kind({
      group: 'apiregistration.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1',
      resource: 'apiservices',
      kind: 'APIService',
      namespaced: false,
      // The core group's is `v1.`, which only a path segment allows.
      nameValidation: 'path-segment',
      categories: ['api-extensions'],
      subresources: { status: true },
    }),
    flowcontrol({ resource: 'flowschemas', kind: 'FlowSchema' }),
    flowcontrol({ resource: 'prioritylevelconfigurations', kind: 'PriorityLevelConfiguration' }),
    review('authentication.k8s.io', 'tokenreviews', 'TokenReview', false),
    review('authentication.k8s.io', 'selfsubjectreviews', 'SelfSubjectReview', false),
    review('authorization.k8s.io', 'subjectaccessreviews', 'SubjectAccessReview', false),
    review('authorization.k8s.io', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false),
    review('authorization.k8s.io', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true),
    review('authorization.k8s.io', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', false),
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
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.admissionregistration.v1',
      resource: 'validatingadmissionpolicies',
      kind: 'ValidatingAdmissionPolicy',
      namespaced: false,
      categories: ['api-extensions'],
      generation: true,
      subresources: { status: true },
    }),
    kind({
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      defPackage: 'io.k8s.api.admissionregistration.v1',
      resource: 'validatingadmissionpolicybindings',
      kind: 'ValidatingAdmissionPolicyBinding',
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
