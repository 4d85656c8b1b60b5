/**
 * The registry entry of `CSINode` (storage.k8s.io/v1 `csinodes`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import {
  dig,
  duplicate,
  invalid,
  isQualifiedName,
  nonNegative,
  objs,
  required,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE, validateCSIDriverName } from './shared.js';

// ---------------------------------------------------------------------------------------------
// CSINodes
const csinodes: KindBehaviour = {
  /** `validateCSINodeDrivers`: names, node ids, allocatable counts and topology keys. */
  validate(obj) {
    const out: StatusCause[] = [];
    const names = new Set<string>();
    objs(dig(obj, 'spec', 'drivers')).forEach((d, i) => {
      const path = `spec.drivers[${i}]`;
      const name = str(d.name);
      out.push(...validateCSIDriverName(name, `${path}.name`));
      const nodeID = str(d.nodeID);
      if (!nodeID) out.push(required(`${path}.nodeID`));
      // AllowLongNodeID: the strategy always allows 256.
      if (Buffer.byteLength(nodeID) > 256)
        out.push(invalid(`${path}.nodeID`, nodeID, 'must be 256 characters or less'));
      out.push(...nonNegative(`${path}.allocatable.count`, dig(d, 'allocatable', 'count')));
      if (names.has(name)) out.push(duplicate(`${path}.name`, name));
      names.add(name);
      // Topology key errors name the driver, as kube's do.
      const keys = new Set<string>();
      for (const key of strs(d.topologyKeys)) {
        if (!key) out.push(required(path));
        if (keys.has(key)) out.push(duplicate(path, key));
        keys.add(key);
        for (const msg of isQualifiedName(key)) out.push(invalid(path, key, msg));
      }
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
