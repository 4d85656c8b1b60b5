/**
 * The registry entry of `CSINode` (storage.k8s.io/v1 `csinodes`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import { dig, objs, required, str } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE } from './shared.js';

// ---------------------------------------------------------------------------------------------
// CSINodes
const csinodes: KindBehaviour = {
  validate(obj) {
    const out: StatusCause[] = [];
    const names = new Set<string>();
    objs(dig(obj, 'spec', 'drivers')).forEach((d, i) => {
      const path = `spec.drivers[${i}]`;
      const name = str(d.name);
      if (!name) out.push(required(`${path}.name`));
      else if (names.has(name))
        out.push({
          reason: 'FieldValueDuplicate',
          field: `${path}.name`,
          message: `Duplicate value: ${JSON.stringify(name)}`,
        });
      names.add(name);
      if (!str(d.nodeID)) out.push(required(`${path}.nodeID`));
    });
    return out;
  },
  columns: [
    nameColumn(),
    col('Drivers', 'integer', fieldDoc(`${STORAGE}.CSINodeSpec`, 'drivers')),
    ageColumn(),
  ],
  row: (obj, now) => [nameOf(obj), objs(dig(obj, 'spec', 'drivers')).length, ageOf(obj, now)],
};

/** `CSINode` (storage.k8s.io/v1 `csinodes`): how the registry serves, validates and prints it. */
export const csiNodeKind: ResourceType = storageKind({
  behaviour: csinodes,
  resource: 'csinodes',
  kind: 'CSINode',
});
