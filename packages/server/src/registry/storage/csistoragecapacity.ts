/**
 * The registry entry of `CSIStorageCapacity` (storage.k8s.io/v1 `csistoragecapacities`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import { invalid, parseQuantity, required, str } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE } from './shared.js';

const quantityText = (v: unknown): string => (typeof v === 'number' ? String(v) : str(v));
// ---------------------------------------------------------------------------------------------
// CSIStorageCapacities
const csistoragecapacities: KindBehaviour = {
  validate(obj) {
    const out: StatusCause[] = [];
    const className = str(obj.storageClassName);
    if (!className) out.push(required('storageClassName'));
    for (const f of ['capacity', 'maximumVolumeSize']) {
      const q = obj[f] === undefined ? undefined : parseQuantity(obj[f]);
      if (q && q.num < 0n) out.push(invalid(f, quantityText(obj[f]), 'must be greater than or equal to 0'));
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
