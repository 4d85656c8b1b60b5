/**
 * The registry entry of `PersistentVolumeClaim` (core/v1 `persistentvolumeclaims`): its resource type and
 * defaults, validation, printer columns, field selectors.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  ensureObj,
  forbidden,
  GoValue,
  invalid,
  isDNS1123Subdomain,
  isObj,
  notSupported,
  type Obj,
  parseQuantity,
  required,
  semanticEqual,
  str,
  strs,
  validateLabelSelector,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { age, nameOf } from './shared.js';

// ---------------------------------------------------------------------------------------------
// PersistentVolumeClaims
const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
/** `helper.GetAccessModesAsString`. */

export function accessModesString(modes: unknown): string {
  const m = new Set(strs(modes));
  return (
    [
      ['ReadWriteOnce', 'RWO'],
      ['ReadOnlyMany', 'ROX'],
      ['ReadWriteMany', 'RWX'],
      ['ReadWriteOncePod', 'RWOP'],
    ] as const
  )
    .filter(([mode]) => m.has(mode))
    .map(([, s]) => s)
    .join(',');
}
/** PersistentVolumeClaimSpec defaults (also used for StatefulSet volume claim templates). */

export function defaultClaimSpec(spec: Obj): void {
  def(spec, 'volumeMode', 'Filesystem');
}
/** `ValidatePersistentVolumeClaimSpec` at `path`. */

export function validateClaimSpec(spec: unknown, path: string): StatusCause[] {
  const s = isObj(spec) ? spec : {};
  const out: StatusCause[] = [];
  const modes = strs(s.accessModes);
  if (modes.length === 0) out.push(required(`${path}.accessModes`, 'at least 1 access mode is required'));
  if (isObj(s.selector)) out.push(...validateLabelSelector(s.selector, `${path}.selector`));
  for (const m of modes)
    if (!ACCESS_MODES.includes(m)) out.push(notSupported(`${path}.accessModes`, m, ACCESS_MODES));
  if (modes.includes('ReadWriteOncePod') && modes.some((m) => m !== 'ReadWriteOncePod')) {
    out.push(forbidden(`${path}.accessModes`, 'may not use ReadWriteOncePod with other access modes'));
  }
  const storage = dig(s, 'resources', 'requests', 'storage');
  if (storage === undefined) out.push(required(`${path}.resources[storage]`));
  else {
    const q = parseQuantity(storage);
    if (q && q.num <= 0n)
      out.push(invalid(`${path}.resources[storage]`, String(storage), 'must be greater than zero'));
  }
  const className = str(s.storageClassName);
  for (const msg of className ? isDNS1123Subdomain(className) : [])
    out.push(invalid(`${path}.storageClassName`, className, msg));
  const mode = s.volumeMode;
  if (typeof mode === 'string' && mode !== 'Block' && mode !== 'Filesystem') {
    out.push(notSupported(`${path}.volumeMode`, mode, ['Block', 'Filesystem']));
  }
  if (isObj(s.dataSource) && isObj(s.dataSourceRef) && !sameDataSource(s.dataSource, s.dataSourceRef)) {
    // kube passes the field path itself as the value: Go prints it with its parent's address.
    const value = new GoValue(`field.Path{name:"dataSource", index:"", parent:(*field.Path)(0xc000000000)}`);
    out.push(invalid(path, value, 'must match dataSourceRef'));
  }
  return out;
}

/** `isDataSourceEqualDataSourceRef`. */
const sameDataSource = (source: Obj, ref: Obj): boolean =>
  str(source.apiGroup) === str(ref.apiGroup) &&
  str(source.kind) === str(ref.kind) &&
  str(source.name) === str(ref.name) &&
  !str(ref.namespace);
const persistentvolumeclaims: KindBehaviour = {
  defaults(obj) {
    defaultClaimSpec(ensureObj(obj, 'spec'));
    def(ensureObj(obj, 'status'), 'phase', 'Pending');
  },
  validate(obj, old) {
    const out = validateClaimSpec(obj.spec, 'spec');
    if (old) {
      const spec = structuredClone(isObj(obj.spec) ? obj.spec : {});
      const oldSpec = structuredClone(isObj(old.spec) ? old.spec : {});
      // The volume name may be set once; requests may change once the claim is bound.
      if (!str(oldSpec.volumeName)) oldSpec.volumeName = spec.volumeName;
      if (dig(obj, 'status', 'phase') === 'Bound') {
        const requests = dig(spec, 'resources', 'requests');
        if (isObj(requests)) requests.storage = dig(oldSpec, 'resources', 'requests', 'storage');
      }
      if (!semanticEqual(spec, oldSpec)) {
        const changed = [...new Set([...Object.keys(spec), ...Object.keys(oldSpec)])]
          .filter((k) => !semanticEqual(spec[k], oldSpec[k]))
          .sort()
          .map(
            (k) => `  spec.${k}: ${JSON.stringify(oldSpec[k] ?? null)} -> ${JSON.stringify(spec[k] ?? null)}`,
          );
        out.push(
          forbidden(
            'spec',
            `spec is immutable after creation except resources.requests for bound claims\n${changed.join('\n')}`,
          ),
        );
      }
      const newSize = parseQuantity(dig(obj, 'spec', 'resources', 'requests', 'storage'));
      const oldSize = parseQuantity(dig(old, 'spec', 'resources', 'requests', 'storage'));
      if (newSize && oldSize && newSize.num * oldSize.den < oldSize.num * newSize.den) {
        out.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
      }
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Status', 'string', docs.pvcStatus.phase),
    col('Volume', 'string', docs.pvcSpec.volumeName),
    col('Capacity', 'string', docs.pvcStatus.capacity),
    col('Access Modes', 'string', docs.pvcStatus.accessModes),
    col('StorageClass', 'string', 'StorageClass of the pvc'),
    col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc'),
    ageColumn(),
    col('VolumeMode', 'string', docs.pvcSpec.volumeMode, 1),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const phase = str(dig(obj, 'metadata', 'deletionTimestamp'))
      ? 'Terminating'
      : str(dig(obj, 'status', 'phase'));
    const volumeName = str(spec.volumeName);
    let capacity = '';
    let accessModes = '';
    if (volumeName) {
      accessModes = accessModesString(dig(obj, 'status', 'accessModes'));
      const cap = dig(obj, 'status', 'capacity', 'storage');
      capacity = cap === undefined ? '0' : String(cap);
    }
    const annotatedClass = dig(obj, 'metadata', 'annotations', 'volume.beta.kubernetes.io/storage-class');
    const storageClass = typeof annotatedClass === 'string' ? annotatedClass : str(spec.storageClassName);
    const vac =
      typeof spec.volumeAttributesClassName === 'string' ? spec.volumeAttributesClassName : '<unset>';
    const volumeMode = typeof spec.volumeMode === 'string' ? spec.volumeMode : '<unset>';
    return [
      nameOf(obj),
      phase,
      volumeName,
      capacity,
      accessModes,
      storageClass,
      vac,
      age(obj, now),
      volumeMode,
    ];
  },
};

/** `PersistentVolumeClaim` (core/v1 `persistentvolumeclaims`): how the registry serves, validates and prints it. */
export const persistentVolumeClaimKind: ResourceType = coreKind({
  statusStrategy: specStatusStrategy,
  behaviour: persistentvolumeclaims,
  resource: 'persistentvolumeclaims',
  kind: 'PersistentVolumeClaim',
  shortNames: ['pvc'],
  subresources: { status: true },
  returnDeletedObject: true,
});
