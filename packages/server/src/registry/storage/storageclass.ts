/**
 * The registry entry of `StorageClass` (storage.k8s.io/v1 `storageclasses`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import {
  def,
  dig,
  FIELD_IMMUTABLE,
  forbidden,
  invalid,
  isObj,
  isQualifiedName,
  notSupported,
  type Obj,
  required,
  semanticEqual,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE } from './shared.js';

const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT_CLASS_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';
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

/** `StorageClass` (storage.k8s.io/v1 `storageclasses`): how the registry serves, validates and prints it. */
export const storageClassKind: ResourceType = storageKind({
  behaviour: storageclasses,
  resource: 'storageclasses',
  kind: 'StorageClass',
  shortNames: ['sc'],
});
