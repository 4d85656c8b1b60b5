/**
 * Managed fields across the scale subresource (apimachinery `managedfields.ScaleHandler`): a
 * write to `/scale` works on an `autoscaling/v1` Scale whose only owned field is
 * `.spec.replicas`; ownership of the parent's replicas field moves to and from it.
 */
import { decodeManagedFields, encodeManagedFields, type Managed } from './managed-fields.js';
import type { Path } from './path.js';
import { FieldSet } from './set.js';
import type { ManagedFieldSets } from './updater.js';

const SCALE_VERSION = 'autoscaling/v1';
const REPLICAS_IN_SCALE: Path = [{ field: 'spec' }, { field: 'replicas' }];

/** `.spec.replicas` (a CRD's `specReplicasPath`) as a field path. */
export function replicasPath(jsonPath: string): Path {
  return jsonPath
    .split('.')
    .filter(Boolean)
    .map((field) => ({ field }));
}

/** Maps an API version of the parent to its replicas path (undefined: a version it does not know). */
export type ReplicasPaths = (apiVersion: string) => Path | undefined;

function decodeOrEmpty(entries: unknown): Managed {
  try {
    return decodeManagedFields(entries);
  } catch {
    return { fields: new Map(), times: new Map() };
  }
}

/**
 * `ToSubresource`: the parent's entries that own its replicas, as Scale entries owning
 * `.spec.replicas`.
 */
export function scaleEntriesFromParent(parentEntries: unknown, paths: ReplicasPaths): unknown[] | undefined {
  const managed = decodeOrEmpty(parentEntries);
  const fields: ManagedFieldSets = new Map();
  const times = new Map<string, string | undefined>();
  for (const [id, vs] of managed.fields) {
    const path = paths(vs.apiVersion);
    if (!path || !vs.set.has(path)) continue;
    fields.set(id, { set: FieldSet.of(REPLICAS_IN_SCALE), apiVersion: SCALE_VERSION, applied: vs.applied });
    times.set(id, managed.times.get(id));
  }
  return encodeManagedFields({ fields, times });
}

/**
 * `ToParent`: the parent's entries after a write to `/scale` that left the Scale with
 * `scaleEntries`: managers that no longer own the Scale's replicas lose the parent's, the ones that
 * now own them get them at `parentVersion`.
 */
export function parentEntriesFromScale(
  parentEntries: unknown,
  scaleEntries: unknown,
  parentVersion: string,
  paths: ReplicasPaths,
): unknown[] | undefined {
  const parent = decodeOrEmpty(parentEntries);
  const scale = decodeOrEmpty(scaleEntries);
  const scaleFields = new Map(scale.fields);
  const fields: ManagedFieldSets = new Map();
  const times = new Map<string, string | undefined>();
  for (const [id, vs] of parent.fields) {
    const path = paths(vs.apiVersion);
    if (path === undefined || !vs.set.has(path)) {
      fields.set(id, vs);
      times.set(id, parent.times.get(id));
      continue;
    }
    if (!scaleFields.has(id)) {
      const set = vs.set.difference(FieldSet.of(path));
      if (!set.empty()) {
        fields.set(id, { ...vs, set });
        times.set(id, parent.times.get(id));
      }
    } else {
      fields.set(id, vs);
      times.set(id, parent.times.get(id));
      scaleFields.delete(id);
    }
  }
  const target = paths(parentVersion);
  for (const [id, vs] of scaleFields) {
    if (!vs.set.has(REPLICAS_IN_SCALE) || !target) continue;
    fields.set(id, { set: FieldSet.of(target), apiVersion: parentVersion, applied: vs.applied });
    // The parent's time for this manager, as Kubernetes copies it (none for a new manager).
    times.set(id, parent.times.get(id));
  }
  return encodeManagedFields({ fields, times });
}
