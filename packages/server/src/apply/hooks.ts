/**
 * The field manager as the registry's hooks: every write the HTTP layer attributes to a manager
 * records it in `metadata.managedFields`, including writes to `/scale`, whose managed fields are
 * those of the parent object seen through a Scale.
 */
import type { ResourceType, UpdateStrategy } from '../registry/types.js';
import { apiVersionOf } from '../registry/types.js';
import { updateManagedFields } from './field-manager.js';
import { parentEntriesFromScale, type ReplicasPaths, replicasPath, scaleEntriesFromParent } from './scale.js';
import type { VersionConverter } from './updater.js';
import { isObj, type Obj } from './value.js';

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash >= 0 ? apiVersion.slice(0, slash) : '';
}

/** The replicas path of every version of the parent's group (versions of a kind share it). */
function pathsOf(t: ResourceType): ReplicasPaths {
  const path = replicasPath(t.subresources.scale?.specReplicasPath ?? '.spec.replicas');
  return (apiVersion) => (groupOf(apiVersion) === t.group ? path : undefined);
}

/**
 * Records a create (`old` undefined) or update of the main resource or of `/status` in
 * `next.metadata.managedFields`.
 */
export function manageFields(
  t: ResourceType,
  old: Obj | undefined,
  next: Obj,
  manager: string,
  subresource: UpdateStrategy,
  convert?: VersionConverter,
): void {
  // No spread of a maybe-object: V8 copies it by a slow generic path on every write.
  updateManagedFields(t, old, next, convert ? { manager, subresource, convert } : { manager, subresource });
}

/**
 * The Scale a write to `/scale` starts from: `scale` with the parent's entries that own its
 * replicas, turned into Scale entries.
 */
export function scaleWithManagedFields(t: ResourceType, parent: Obj, scale: Obj): Obj {
  const entries = scaleEntriesFromParent(
    isObj(parent.metadata) ? parent.metadata.managedFields : undefined,
    pathsOf(t),
  );
  const m = isObj(scale.metadata) ? { ...scale.metadata } : {};
  if (entries) m.managedFields = entries;
  return { ...scale, metadata: m };
}

/**
 * Moves the parent's managed fields through a write to `/scale`: `oldScale` is the Scale before
 * the write, `newScale` the one written. An update records `manager` on the Scale first; an
 * apply (`applied`) brings its Scale entries already computed.
 */
export function manageScaleFields(
  t: ResourceType,
  parent: Obj,
  oldScale: Obj,
  newScale: Obj,
  manager: string,
  applied: boolean,
): void {
  const pm = isObj(parent.metadata) ? parent.metadata : {};
  const parentEntries = pm.managedFields;
  let scaleEntries: unknown;
  if (applied) {
    scaleEntries = isObj(newScale.metadata) ? newScale.metadata.managedFields : undefined;
  } else {
    const before = scaleWithManagedFields(t, parent, oldScale);
    const after: Obj = { ...newScale, metadata: isObj(newScale.metadata) ? { ...newScale.metadata } : {} };
    updateManagedFields(t, before, after, { manager, subresource: 'scale' });
    scaleEntries = (after.metadata as Obj).managedFields;
  }
  const entries = parentEntriesFromScale(parentEntries, scaleEntries, apiVersionOf(t), pathsOf(t));
  if (entries) pm.managedFields = entries;
  else delete pm.managedFields;
  parent.metadata = pm;
}
