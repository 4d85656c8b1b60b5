/**
 * The status strategies of built-in kinds (kube 1.32, `xxxStatusStrategy.PrepareForUpdate` and
 * `GetResetFields` of pkg/registry/<group>/<kind>/strategy.go): what a write to `/status` takes
 * from the stored object. Unlike a custom resource's, most of them let the write change
 * metadata, and kube's controllers rely on it (the deployment controller writes its
 * `deployment.kubernetes.io/revision` annotation through deployments/status).
 */
import type { StatusStrategy } from '../types.js';

/**
 * Only the spec is the stored one (ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, Service,
 * Node, Namespace, PersistentVolume(Claim), ReplicationController, ResourceQuota, Ingress,
 * PodDisruptionBudget: `newX.Spec = oldX.Spec`); labels, annotations, finalizers and owner
 * references may change.
 */
export const specStatusStrategy: StatusStrategy = {
  keep: ['spec'],
  keepMetadata: [],
  resetFields: [['spec']],
};

/** deploymentStatusStrategy: the spec and the labels are the stored ones. */
export const deploymentStatusStrategy: StatusStrategy = {
  keep: ['spec'],
  keepMetadata: ['labels'],
  resetFields: [['spec'], ['metadata', 'labels']],
};

/**
 * podStatusStrategy: the spec and the owner references are the stored ones (old kubelets
 * corrupted owner references), and the deletion timestamp cannot be set through it.
 */
export const podStatusStrategy: StatusStrategy = {
  keep: ['spec'],
  keepMetadata: ['ownerReferences', 'deletionTimestamp'],
  resetFields: [['spec'], ['metadata', 'deletionTimestamp'], ['metadata', 'ownerReferences']],
};

/**
 * The spec plus `metav1.ResetObjectMetaForStatus` (VolumeAttachment, ValidatingAdmissionPolicy):
 * deletion timestamp, generation, selfLink, labels, annotations, finalizers and owner references
 * are the stored ones.
 */
export const resetMetaStatusStrategy: StatusStrategy = {
  keep: ['spec'],
  keepMetadata: [
    'deletionTimestamp',
    'generation',
    'selfLink',
    'labels',
    'annotations',
    'finalizers',
    'ownerReferences',
  ],
  resetFields: [['spec'], ['metadata']],
};

/**
 * kube-aggregator's apiServerStatusStrategy (APIService): spec, labels, annotations, finalizers
 * and owner references are the stored ones.
 */
export const apiServiceStatusStrategy: StatusStrategy = {
  keep: ['spec'],
  keepMetadata: ['labels', 'annotations', 'finalizers', 'ownerReferences'],
  resetFields: [['spec'], ['metadata']],
};

/**
 * apiextensions-apiserver's CustomResourceDefinition statusStrategy: spec, labels, annotations,
 * owner references, generation and selfLink are the stored ones (finalizers may change).
 */
export const crdStatusStrategy: StatusStrategy = {
  keep: ['spec'],
  keepMetadata: ['labels', 'annotations', 'ownerReferences', 'generation', 'selfLink'],
  resetFields: [['spec'], ['metadata']],
};
