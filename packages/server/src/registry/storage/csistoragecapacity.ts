/**
 * The registry entry of `CSIStorageCapacity` (storage.k8s.io/v1 `csistoragecapacities`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import {
  FIELD_IMMUTABLE,
  invalid,
  isDNS1123Subdomain,
  isSet,
  NON_NEGATIVE,
  parseQuantity,
  semanticEqual,
  str,
  validateLabelSelector,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE } from './shared.js';

const quantityText = (v: unknown): string => (typeof v === 'number' ? String(v) : str(v));
// ---------------------------------------------------------------------------------------------
// CSIStorageCapacities
const csistoragecapacities: KindBehaviour = {
  /** `ValidateCSIStorageCapacity`: the node topology, the class name, a capacity not negative. */
  validate(obj, old) {
    const out: StatusCause[] = [];
    if (isSet(obj.nodeTopology)) out.push(...validateLabelSelector(obj.nodeTopology, 'nodeTopology'));
    const className = str(obj.storageClassName);
    for (const msg of isDNS1123Subdomain(className)) out.push(invalid('storageClassName', className, msg));
    // maximumVolumeSize is not checked by kube.
    const q = isSet(obj.capacity) ? parseQuantity(obj.capacity) : undefined;
    if (q && q.num < 0n) out.push(invalid('capacity', quantityText(obj.capacity), NON_NEGATIVE));
    if (old) {
      if (!semanticEqual(obj.nodeTopology, old.nodeTopology))
        out.push(invalid('nodeTopology', '<object>', FIELD_IMMUTABLE));
      if (obj.storageClassName !== old.storageClassName)
        out.push(invalid('storageClassName', className, FIELD_IMMUTABLE));
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('StorageClassName', 'string', fieldDoc(`${STORAGE}.CSIStorageCapacity`, 'storageClassName')),
    col('Capacity', 'string', fieldDoc(`${STORAGE}.CSIStorageCapacity`, 'capacity')),
    ageColumn(),
  ],
  row: (obj, now) => [
    nameOf(obj),
    str(obj.storageClassName),
    obj.capacity === undefined ? '<unset>' : quantityText(obj.capacity),
    ageOf(obj, now),
  ],
};

/** `CSIStorageCapacity` (storage.k8s.io/v1 `csistoragecapacities`): how the registry serves, validates and prints it. */
export const csiStorageCapacityKind: ResourceType = storageKind({
  behaviour: csistoragecapacities,
  resource: 'csistoragecapacities',
  kind: 'CSIStorageCapacity',
  namespaced: true,
  singular: 'csistoragecapacity',
});
