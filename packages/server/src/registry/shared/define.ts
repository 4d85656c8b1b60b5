/**
 * How a built-in kind's definition is written: {@link defineKind} fills what most kinds share
 * (namespaced, all verbs, no subresources, `<Kind>List`, subdomain names), and each API group's
 * preset fills that group's version, OpenAPI package and common traits.
 */
import { ALL_VERBS, type ResourceType, type ScaleSubresource } from '../types.js';
import { createdAtBehaviour } from './default.js';

/** What a kind's file states; the rest takes {@link defineKind}'s defaults. */
export type KindSpec = Partial<ResourceType> &
  Pick<ResourceType, 'group' | 'version' | 'resource' | 'kind'> & {
    /** The OpenAPI package of the kind's definition, e.g. `io.k8s.api.core.v1`. */
    defPackage: string;
  };

/** A kind of a preset's group: the group, version and package come from the preset. */
export type GroupKindSpec = Omit<KindSpec, 'group' | 'version' | 'defPackage'>;

/**
 * For built-in kinds without a printer: the apiserver's default table convertor, whose columns
 * are `Name` and `Created At` (RFC 3339), as `kubectl get roles` shows.
 */
export const defaultBehaviour = createdAtBehaviour();

/** The scale subresource of workloads: `.spec.replicas`, `.status.replicas`, `.spec.selector`. */
export const replicasScale: ScaleSubresource = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.spec.selector',
};

/** A built-in kind's resource type, with the defaults most kinds share. */
export function defineKind(spec: KindSpec): ResourceType {
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
    behaviour: defaultBehaviour,
    ...rest,
  };
}

/** A core/v1 kind. */
export const coreKind = (s: GroupKindSpec): ResourceType =>
  defineKind({ group: '', version: 'v1', defPackage: 'io.k8s.api.core.v1', ...s });

/** An apps/v1 workload: in category `all`, with generation, status and scale. */
export const appsKind = (s: GroupKindSpec): ResourceType =>
  defineKind({
    group: 'apps',
    version: 'v1',
    defPackage: 'io.k8s.api.apps.v1',
    categories: ['all'],
    generation: true,
    subresources: { status: true, scale: replicasScale },
    ...s,
  });

/** An rbac.authorization.k8s.io/v1 kind, whose names are path segments. */
export const rbacKind = (s: GroupKindSpec): ResourceType =>
  defineKind({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    defPackage: 'io.k8s.api.rbac.v1',
    nameValidation: 'path-segment',
    ...s,
  });

/** A networking.k8s.io/v1 kind. */
export const networkingKind = (s: GroupKindSpec): ResourceType =>
  defineKind({ group: 'networking.k8s.io', version: 'v1', defPackage: 'io.k8s.api.networking.v1', ...s });

/** A storage.k8s.io/v1 kind (cluster-scoped unless it says otherwise). */
export const storageKind = (s: GroupKindSpec): ResourceType =>
  defineKind({
    group: 'storage.k8s.io',
    version: 'v1',
    defPackage: 'io.k8s.api.storage.v1',
    namespaced: false,
    ...s,
  });

/** A flowcontrol.apiserver.k8s.io/v1 kind: cluster-scoped, with generation and status. */
export const flowcontrolKind = (s: GroupKindSpec): ResourceType =>
  defineKind({
    group: 'flowcontrol.apiserver.k8s.io',
    version: 'v1',
    defPackage: 'io.k8s.api.flowcontrol.v1',
    namespaced: false,
    generation: true,
    subresources: { status: true },
    ...s,
  });
