/**
 * storage.k8s.io/v1 StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities and
 * VolumeAttachments: defaults, validation and printers.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from './types.js';
import {
  def,
  dig,
  ensureObj,
  FIELD_IMMUTABLE,
  forbidden,
  invalid,
  isObj,
  isQualifiedName,
  notSupported,
  type Obj,
  objs,
  parseQuantity,
  required,
  semanticEqual,
  since,
  str,
  strs,
} from './util.js';

const STORAGE = 'io.k8s.api.storage.v1';
const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT_CLASS_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';

const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
const ageOf = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);
const quantityText = (v: unknown): string => (typeof v === 'number' ? String(v) : str(v));

// ---------------------------------------------------------------------------------------------
// StorageClasses

const storageclasses: KindBehaviour = {
  /** `SetDefaults_StorageClass`. */
  defaults(obj) {
    def(obj, 'reclaimPolicy', 'Delete');
    def(obj, 'volumeBindingMode', 'Immediate');
  },
  /** `ValidateStorageClass` and, on update, `ValidateStorageClassUpdate`. */
  validate(obj, old) {
    const out: StatusCause[] = [];
    const provisioner = str(obj.provisioner);
    if (!provisioner) out.push(required('provisioner'));
    else
      for (const msg of isQualifiedName(provisioner.toLowerCase()))
        out.push(invalid('provisioner', provisioner.toLowerCase(), msg));
    const params = isObj(obj.parameters) ? obj.parameters : {};
    if (Object.keys(params).length > 512)
      out.push({
        reason: 'FieldValueTooMany',
        field: 'parameters',
        message: 'Too many: must have at most 512 items',
      });
    if (Object.keys(params).some((k) => k === ''))
      out.push(invalid('parameters', '', 'key may not be empty'));
    const reclaim = obj.reclaimPolicy;
    if (typeof reclaim === 'string' && reclaim !== 'Delete' && reclaim !== 'Retain')
      out.push(notSupported('reclaimPolicy', reclaim, ['Delete', 'Retain']));
    const mode = obj.volumeBindingMode;
    if (mode === undefined || mode === null) out.push(required('volumeBindingMode'));
    else if (mode !== 'Immediate' && mode !== 'WaitForFirstConsumer')
      out.push(notSupported('volumeBindingMode', mode, ['Immediate', 'WaitForFirstConsumer']));
    if (old) {
      if (!semanticEqual(obj.parameters ?? {}, old.parameters ?? {}))
        out.push(forbidden('parameters', 'updates to parameters are forbidden.'));
      if (obj.provisioner !== old.provisioner)
        out.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
      if (obj.reclaimPolicy !== old.reclaimPolicy)
        out.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
      if (obj.volumeBindingMode !== old.volumeBindingMode)
        out.push(invalid('volumeBindingMode', obj.volumeBindingMode, FIELD_IMMUTABLE));
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Provisioner', 'string', fieldDoc(`${STORAGE}.StorageClass`, 'provisioner')),
    col('ReclaimPolicy', 'string', fieldDoc(`${STORAGE}.StorageClass`, 'reclaimPolicy')),
    col('VolumeBindingMode', 'string', fieldDoc(`${STORAGE}.StorageClass`, 'volumeBindingMode')),
    col('AllowVolumeExpansion', 'string', fieldDoc(`${STORAGE}.StorageClass`, 'allowVolumeExpansion')),
    ageColumn(),
  ],
  row(obj, now) {
    const annotations = isObj(dig(obj, 'metadata', 'annotations'))
      ? (dig(obj, 'metadata', 'annotations') as Obj)
      : {};
    const isDefault =
      annotations[DEFAULT_CLASS_ANNOTATION] === 'true' ||
      annotations[BETA_DEFAULT_CLASS_ANNOTATION] === 'true';
    return [
      isDefault ? `${nameOf(obj)} (default)` : nameOf(obj),
      str(obj.provisioner),
      str(obj.reclaimPolicy) || 'Delete',
      str(obj.volumeBindingMode) || 'Immediate',
      obj.allowVolumeExpansion === true,
      ageOf(obj, now),
    ];
  },
};

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

// ---------------------------------------------------------------------------------------------
// VolumeAttachments

const volumeattachments: KindBehaviour = {
  validate(obj, old) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const attacher = str(spec.attacher);
    if (!attacher) out.push(required('spec.attacher'));
    if (!str(spec.nodeName)) out.push(required('spec.nodeName'));
    const source = isObj(spec.source) ? spec.source : {};
    const pv = typeof source.persistentVolumeName === 'string';
    const inline = isObj(source.inlineVolumeSpec);
    if (pv === inline)
      out.push(
        required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'),
      );
    if (pv && !str(source.persistentVolumeName)) out.push(required('spec.source.persistentVolumeName'));
    if (old && !semanticEqual(obj.spec, old.spec)) out.push(invalid('spec', '<object>', FIELD_IMMUTABLE));
    return out;
  },
  columns: [
    nameColumn(),
    col('Attacher', 'string', fieldDoc(`${STORAGE}.VolumeAttachmentSpec`, 'attacher')),
    col('PV', 'string', fieldDoc(`${STORAGE}.VolumeAttachmentSource`, 'persistentVolumeName')),
    col('Node', 'string', fieldDoc(`${STORAGE}.VolumeAttachmentSpec`, 'nodeName')),
    col('Attached', 'boolean', fieldDoc(`${STORAGE}.VolumeAttachmentStatus`, 'attached')),
    ageColumn(),
  ],
  row: (obj, now) => [
    nameOf(obj),
    str(dig(obj, 'spec', 'attacher')),
    str(dig(obj, 'spec', 'source', 'persistentVolumeName')),
    str(dig(obj, 'spec', 'nodeName')),
    dig(obj, 'status', 'attached') === true,
    ageOf(obj, now),
  ],
};

/** storage.k8s.io/v1 behaviours, keyed by plural resource. */
export const storageBehaviours: Record<string, KindBehaviour> = {
  storageclasses,
  csidrivers,
  csinodes,
  csistoragecapacities,
  volumeattachments,
};
