/**
 * The registry entry of `CSIDriver` (storage.k8s.io/v1 `csidrivers`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import {
  def,
  ensureObj,
  FIELD_IMMUTABLE,
  invalid,
  isObj,
  notSupported,
  objs,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE } from './shared.js';

// ---------------------------------------------------------------------------------------------
// CSIDrivers
const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Ephemeral', 'Persistent'];
const csidrivers: KindBehaviour = {
  /** `SetDefaults_CSIDriver` (with SELinuxMountReadWriteOncePod, on by default in 1.32). */
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    def(spec, 'attachRequired', true);
    def(spec, 'podInfoOnMount', false);
    def(spec, 'storageCapacity', false);
    def(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
    if (strs(spec.volumeLifecycleModes).length === 0) spec.volumeLifecycleModes = ['Persistent'];
    def(spec, 'requiresRepublish', false);
    def(spec, 'seLinuxMount', false);
  },
  validate(obj, old) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const policy = spec.fsGroupPolicy;
    if (typeof policy === 'string' && !FS_GROUP_POLICIES.includes(policy))
      out.push(notSupported('spec.fsGroupPolicy', policy, FS_GROUP_POLICIES));
    for (const m of strs(spec.volumeLifecycleModes))
      if (!LIFECYCLE_MODES.includes(m))
        out.push(notSupported('spec.volumeLifecycleModes', m, LIFECYCLE_MODES));
    const audiences = new Set<string>();
    objs(spec.tokenRequests).forEach((t, i) => {
      const a = str(t.audience);
      if (audiences.has(a))
        out.push({
          reason: 'FieldValueDuplicate',
          field: `spec.tokenRequests[${i}].audience`,
          message: `Duplicate value: ${JSON.stringify(a)}`,
        });
      audiences.add(a);
    });
    if (old) {
      const oldSpec = isObj(old.spec) ? old.spec : {};
      if (spec.attachRequired !== oldSpec.attachRequired)
        out.push(invalid('spec.attachRequired', spec.attachRequired, FIELD_IMMUTABLE));
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('AttachRequired', 'boolean', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'attachRequired')),
    col('PodInfoOnMount', 'boolean', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'podInfoOnMount')),
    col('StorageCapacity', 'boolean', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'storageCapacity')),
    col('TokenRequests', 'string', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'tokenRequests')),
    col('RequiresRepublish', 'boolean', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'requiresRepublish')),
    col('Modes', 'string', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'volumeLifecycleModes')),
    ageColumn(),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const audiences = objs(spec.tokenRequests).map((t) => str(t.audience));
    const modes = strs(spec.volumeLifecycleModes);
    return [
      nameOf(obj),
      spec.attachRequired === true,
      spec.podInfoOnMount === true,
      spec.storageCapacity === true,
      audiences.length > 0 ? audiences.join(',') : '<unset>',
      spec.requiresRepublish === true,
      modes.length > 0 ? modes.join(',') : '<none>',
      ageOf(obj, now),
    ];
  },
};

/** `CSIDriver` (storage.k8s.io/v1 `csidrivers`): how the registry serves, validates and prints it. */
export const csiDriverKind: ResourceType = storageKind({
  behaviour: csidrivers,
  resource: 'csidrivers',
  kind: 'CSIDriver',
});
