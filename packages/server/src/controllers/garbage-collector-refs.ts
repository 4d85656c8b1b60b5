/**
 * What the garbage collector compares and keys objects by: owner references, queue keys, the
 * group of an apiVersion, the descriptor of a discovered resource.
 */
import type { DiscoveredResource, ResourceDescriptor } from 'kubeloop/client';
import type { PartialObjectMetadata } from 'kubeloop/runtime';

export type OwnerReference = NonNullable<PartialObjectMetadata['metadata']['ownerReferences']>[number];

// Whole objects too (a controller's informer the collector shares), hence the optional metadata.
export const ownerUids = (o: PartialObjectMetadata): string[] =>
  (o.metadata?.ownerReferences ?? []).map((r) => r.uid);

/** Whether two lists of owner references are the same (kube's `referencesDiffs` finding nothing). */
export function sameOwners(
  a: readonly OwnerReference[] | undefined,
  b: readonly OwnerReference[] | undefined,
): boolean {
  if (a === b) return true;
  if ((a?.length ?? 0) !== (b?.length ?? 0)) return false;
  return (a ?? []).every((r, i) => {
    const o = b![i]!;
    return (
      r.uid === o.uid &&
      r.name === o.name &&
      r.kind === o.kind &&
      r.apiVersion === o.apiVersion &&
      r.controller === o.controller &&
      r.blockOwnerDeletion === o.blockOwnerDeletion
    );
  });
}

/** Queue keys: `group|resource|namespace|name` (namespace empty for cluster-scoped objects). */
export const keyOf = (type: DiscoveredResource, obj: PartialObjectMetadata): string =>
  [type.group, type.plural, obj.metadata.namespace ?? '', obj.metadata.name ?? ''].join('|');

export const groupOf = (apiVersion: string): string => {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
};

export const descriptorOf = (t: DiscoveredResource): ResourceDescriptor => ({
  group: t.group,
  version: t.version,
  kind: t.kind,
  plural: t.plural,
  namespaced: t.namespaced,
});
