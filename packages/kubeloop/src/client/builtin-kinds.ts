/**
 * Descriptors of the built-in kinds, typed with `kubernetes-types`. Each export is both a value
 * (the descriptor to hand to `client.api()`) and a type (the object), so one import serves both:
 *
 * @example
 * ```ts
 * import { ConfigMap, Client } from 'kubeloop/client';
 * const cm: ConfigMap = await client.api(ConfigMap, 'default').get('settings');
 * ```
 */
import type * as admissionregistrationV1 from 'kubernetes-types/admissionregistration/v1.js';
import type * as apiextensionsV1 from 'kubernetes-types/apiextensions/v1.js';
import type * as appsV1 from 'kubernetes-types/apps/v1.js';
import type * as autoscalingV2 from 'kubernetes-types/autoscaling/v2.js';
import type * as batchV1 from 'kubernetes-types/batch/v1.js';
import type * as certificatesV1 from 'kubernetes-types/certificates/v1.js';
import type * as coordinationV1 from 'kubernetes-types/coordination/v1.js';
import type * as coreV1 from 'kubernetes-types/core/v1.js';
import type * as eventsV1 from 'kubernetes-types/events/v1.js';
import type * as networkingV1 from 'kubernetes-types/networking/v1.js';
import type * as policyV1 from 'kubernetes-types/policy/v1.js';
import type * as rbacV1 from 'kubernetes-types/rbac/v1.js';
import type * as storageV1 from 'kubernetes-types/storage/v1.js';
import { formatGvk, type GroupVersionKind, type ResourceDescriptor } from './descriptor.js';
import type { KubeObject } from './types.js';

/** A descriptor whose plural and scope are fixed, so no discovery request is needed. */
export interface BuiltinDescriptor<T extends KubeObject> extends ResourceDescriptor<T> {
  readonly plural: string;
  readonly namespaced: boolean;
}

const table = new Map<string, BuiltinDescriptor<KubeObject>>();

function kind<T extends KubeObject>(
  group: string,
  version: string,
  kindName: string,
  plural: string,
  namespaced: boolean,
): BuiltinDescriptor<T> {
  const d: BuiltinDescriptor<T> = Object.freeze({ group, version, kind: kindName, plural, namespaced });
  table.set(formatGvk(d), d);
  return d;
}

/** The built-in descriptor of a group/version/kind, if the table has it. */
export function builtinDescriptor(gvk: GroupVersionKind): BuiltinDescriptor<KubeObject> | undefined {
  return table.get(formatGvk(gvk));
}

// core/v1
export const Namespace = kind<coreV1.Namespace>('', 'v1', 'Namespace', 'namespaces', false);
export type Namespace = coreV1.Namespace;
export const ConfigMap = kind<coreV1.ConfigMap>('', 'v1', 'ConfigMap', 'configmaps', true);
export type ConfigMap = coreV1.ConfigMap;
export const Secret = kind<coreV1.Secret>('', 'v1', 'Secret', 'secrets', true);
export type Secret = coreV1.Secret;
export const Service = kind<coreV1.Service>('', 'v1', 'Service', 'services', true);
export type Service = coreV1.Service;
export const Endpoints = kind<coreV1.Endpoints>('', 'v1', 'Endpoints', 'endpoints', true);
export type Endpoints = coreV1.Endpoints;
export const Pod = kind<coreV1.Pod>('', 'v1', 'Pod', 'pods', true);
export type Pod = coreV1.Pod;
export const Node = kind<coreV1.Node>('', 'v1', 'Node', 'nodes', false);
export type Node = coreV1.Node;
export const ServiceAccount = kind<coreV1.ServiceAccount>(
  '',
  'v1',
  'ServiceAccount',
  'serviceaccounts',
  true,
);
export type ServiceAccount = coreV1.ServiceAccount;
export const Event = kind<coreV1.Event>('', 'v1', 'Event', 'events', true);
export type Event = coreV1.Event;
export const PersistentVolumeClaim = kind<coreV1.PersistentVolumeClaim>(
  '',
  'v1',
  'PersistentVolumeClaim',
  'persistentvolumeclaims',
  true,
);
export type PersistentVolumeClaim = coreV1.PersistentVolumeClaim;
export const PersistentVolume = kind<coreV1.PersistentVolume>(
  '',
  'v1',
  'PersistentVolume',
  'persistentvolumes',
  false,
);
export type PersistentVolume = coreV1.PersistentVolume;
export const ReplicationController = kind<coreV1.ReplicationController>(
  '',
  'v1',
  'ReplicationController',
  'replicationcontrollers',
  true,
);
export type ReplicationController = coreV1.ReplicationController;
export const ResourceQuota = kind<coreV1.ResourceQuota>('', 'v1', 'ResourceQuota', 'resourcequotas', true);
export type ResourceQuota = coreV1.ResourceQuota;

// autoscaling/v2, certificates.k8s.io/v1
export const HorizontalPodAutoscaler = kind<autoscalingV2.HorizontalPodAutoscaler>(
  'autoscaling',
  'v2',
  'HorizontalPodAutoscaler',
  'horizontalpodautoscalers',
  true,
);
export type HorizontalPodAutoscaler = autoscalingV2.HorizontalPodAutoscaler;
export const CertificateSigningRequest = kind<certificatesV1.CertificateSigningRequest>(
  'certificates.k8s.io',
  'v1',
  'CertificateSigningRequest',
  'certificatesigningrequests',
  false,
);
export type CertificateSigningRequest = certificatesV1.CertificateSigningRequest;

// apps/v1
export const Deployment = kind<appsV1.Deployment>('apps', 'v1', 'Deployment', 'deployments', true);
export type Deployment = appsV1.Deployment;
export const ReplicaSet = kind<appsV1.ReplicaSet>('apps', 'v1', 'ReplicaSet', 'replicasets', true);
export type ReplicaSet = appsV1.ReplicaSet;
export const StatefulSet = kind<appsV1.StatefulSet>('apps', 'v1', 'StatefulSet', 'statefulsets', true);
export type StatefulSet = appsV1.StatefulSet;
export const DaemonSet = kind<appsV1.DaemonSet>('apps', 'v1', 'DaemonSet', 'daemonsets', true);
export type DaemonSet = appsV1.DaemonSet;

// batch/v1
export const Job = kind<batchV1.Job>('batch', 'v1', 'Job', 'jobs', true);
export type Job = batchV1.Job;
export const CronJob = kind<batchV1.CronJob>('batch', 'v1', 'CronJob', 'cronjobs', true);
export type CronJob = batchV1.CronJob;

// coordination.k8s.io/v1
export const Lease = kind<coordinationV1.Lease>('coordination.k8s.io', 'v1', 'Lease', 'leases', true);
export type Lease = coordinationV1.Lease;

// events.k8s.io/v1 (named apart from core/v1 Event)
export const EventsV1Event = kind<eventsV1.Event>('events.k8s.io', 'v1', 'Event', 'events', true);
export type EventsV1Event = eventsV1.Event;

// networking.k8s.io/v1, policy/v1, storage.k8s.io/v1
export const Ingress = kind<networkingV1.Ingress>('networking.k8s.io', 'v1', 'Ingress', 'ingresses', true);
export type Ingress = networkingV1.Ingress;
export const NetworkPolicy = kind<networkingV1.NetworkPolicy>(
  'networking.k8s.io',
  'v1',
  'NetworkPolicy',
  'networkpolicies',
  true,
);
export type NetworkPolicy = networkingV1.NetworkPolicy;
export const PodDisruptionBudget = kind<policyV1.PodDisruptionBudget>(
  'policy',
  'v1',
  'PodDisruptionBudget',
  'poddisruptionbudgets',
  true,
);
export type PodDisruptionBudget = policyV1.PodDisruptionBudget;
export const StorageClass = kind<storageV1.StorageClass>(
  'storage.k8s.io',
  'v1',
  'StorageClass',
  'storageclasses',
  false,
);
export type StorageClass = storageV1.StorageClass;

// rbac.authorization.k8s.io/v1
const RBAC = 'rbac.authorization.k8s.io';
export const Role = kind<rbacV1.Role>(RBAC, 'v1', 'Role', 'roles', true);
export type Role = rbacV1.Role;
export const ClusterRole = kind<rbacV1.ClusterRole>(RBAC, 'v1', 'ClusterRole', 'clusterroles', false);
export type ClusterRole = rbacV1.ClusterRole;
export const RoleBinding = kind<rbacV1.RoleBinding>(RBAC, 'v1', 'RoleBinding', 'rolebindings', true);
export type RoleBinding = rbacV1.RoleBinding;
export const ClusterRoleBinding = kind<rbacV1.ClusterRoleBinding>(
  RBAC,
  'v1',
  'ClusterRoleBinding',
  'clusterrolebindings',
  false,
);
export type ClusterRoleBinding = rbacV1.ClusterRoleBinding;

// admissionregistration.k8s.io/v1, apiextensions.k8s.io/v1
const ADMISSION = 'admissionregistration.k8s.io';
export const MutatingWebhookConfiguration = kind<admissionregistrationV1.MutatingWebhookConfiguration>(
  ADMISSION,
  'v1',
  'MutatingWebhookConfiguration',
  'mutatingwebhookconfigurations',
  false,
);
export type MutatingWebhookConfiguration = admissionregistrationV1.MutatingWebhookConfiguration;
export const ValidatingWebhookConfiguration = kind<admissionregistrationV1.ValidatingWebhookConfiguration>(
  ADMISSION,
  'v1',
  'ValidatingWebhookConfiguration',
  'validatingwebhookconfigurations',
  false,
);
export type ValidatingWebhookConfiguration = admissionregistrationV1.ValidatingWebhookConfiguration;
export const CustomResourceDefinition = kind<apiextensionsV1.CustomResourceDefinition>(
  'apiextensions.k8s.io',
  'v1',
  'CustomResourceDefinition',
  'customresourcedefinitions',
  false,
);
export type CustomResourceDefinition = apiextensionsV1.CustomResourceDefinition;
