/**
 * The registry entry of `PersistentVolume` (core/v1 `persistentvolumes`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { timestamp } from '../../util/object.js';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  ensureObj,
  forbidden,
  GoValue,
  goQuote,
  invalid,
  isDNS1123Subdomain,
  isObj,
  notSupported,
  type Obj,
  parseQuantity,
  required,
  semanticEqual,
  since,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { validatePVSources } from './persistentvolume-sources.js';
import { accessModesString } from './persistentvolumeclaim.js';
import { validateHostPath } from './podspec.js';
import { goQuantity, quantityText } from './shared.js';

const CORE = 'io.k8s.api.core.v1';
const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
/** The volume sources a PersistentVolumeSpec may carry (exactly one). */
const PV_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'hostPath',
  'glusterfs',
  'nfs',
  'rbd',
  'quobyte',
  'cephfs',
  'iscsi',
  'cinder',
  'fc',
  'flocker',
  'flexVolume',
  'azureFile',
  'vsphereVolume',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'local',
  'storageos',
  'csi',
];
// ---------------------------------------------------------------------------------------------
// PersistentVolumes
/** `ValidatePersistentVolumeSpec`: the rules a user meets. */
function validatePersistentVolume(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out: StatusCause[] = [];
  const modes = strs(spec.accessModes);
  if (modes.length === 0) out.push(required('spec.accessModes'));
  for (const m of modes)
    if (!ACCESS_MODES.includes(m)) out.push(notSupported('spec.accessModes', m, ACCESS_MODES));
  if (modes.includes('ReadWriteOncePod') && modes.length > 1)
    out.push(forbidden('spec.accessModes', 'may not use ReadWriteOncePod with other access modes'));
  const capacity = isObj(spec.capacity) ? spec.capacity : {};
  const keys = Object.keys(capacity);
  // kube shows the list as Go's %#v of a core.ResourceList.
  if (keys.length === 0) {
    out.push(required('spec.capacity'));
    out.push(
      notSupported(
        'spec.capacity',
        new GoValue(isObj(spec.capacity) ? 'core.ResourceList{}' : 'core.ResourceList(nil)'),
        ['storage'],
      ),
    );
  } else if (!keys.includes('storage') || keys.length > 1) {
    const entries = keys.sort().map((k) => {
      const text = quantityText(capacity[k]);
      return `${goQuote(k)}:${goQuantity(text) ?? goQuote(text)}`;
    });
    out.push(
      notSupported('spec.capacity', new GoValue(`core.ResourceList{${entries.join(', ')}}`), ['storage']),
    );
  }
  for (const k of keys) {
    const q = parseQuantity(capacity[k]);
    if (q && q.num <= 0n)
      out.push(invalid(`spec.capacity[${k}]`, quantityText(capacity[k]), 'must be greater than zero'));
  }
  const policy = str(spec.persistentVolumeReclaimPolicy);
  if (policy && !RECLAIM_POLICIES.includes(policy))
    out.push(notSupported('spec.persistentVolumeReclaimPolicy', policy, RECLAIM_POLICIES));
  const className = str(spec.storageClassName);
  for (const msg of className ? isDNS1123Subdomain(className) : [])
    out.push(invalid('spec.storageClassName', className, msg));
  const sources = PV_SOURCES.filter((s) => spec[s] !== undefined && spec[s] !== null);
  if (sources.length === 0) out.push(required('spec', 'must specify a volume type'));
  for (const extra of sources.slice(1))
    out.push(forbidden(`spec.${extra}`, 'may not specify more than 1 volume type'));
  if (isObj(spec.hostPath)) out.push(...validateHostPath(spec.hostPath, 'spec.hostPath'));
  out.push(...validatePVSources(spec));
  const mode = spec.volumeMode;
  if (typeof mode === 'string' && mode !== 'Block' && mode !== 'Filesystem')
    out.push(notSupported('spec.volumeMode', mode, ['Block', 'Filesystem']));
  return out;
}
const persistentvolumes: KindBehaviour = {
  /** `SetDefaults_PersistentVolume`. */
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    def(spec, 'persistentVolumeReclaimPolicy', 'Retain');
    def(spec, 'volumeMode', 'Filesystem');
    if (isObj(spec.hostPath)) def(spec.hostPath, 'type', '');
    def(ensureObj(obj, 'status'), 'phase', 'Pending');
  },
  prepare(obj, old) {
    // The create strategy stamps the phase's transition time (PersistentVolumeLastPhaseTransitionTime, GA).
    const status = ensureObj(obj, 'status');
    if (!old) status.lastPhaseTransitionTime = timestamp();
    else if (dig(old, 'status', 'phase') !== status.phase) status.lastPhaseTransitionTime = timestamp();
  },
  validate(obj, old, strategy) {
    const out = validatePersistentVolume(obj);
    if (!old || strategy) return out;
    // ValidatePersistentVolumeUpdate: the volume source cannot change once created.
    const source = (pv: Obj) => Object.fromEntries(PV_SOURCES.map((k) => [k, dig(pv, 'spec', k)]));
    const [was, now] = [source(old), source(obj)];
    if (!semanticEqual(was, now)) {
      const diff = PV_SOURCES.filter((k) => !semanticEqual(was[k], now[k])).map(
        (k) => `  ${k}: ${JSON.stringify(was[k] ?? null)} -> ${JSON.stringify(now[k] ?? null)}`,
      );
      out.push(
        forbidden(
          'spec.persistentvolumesource',
          `spec.persistentvolumesource is immutable after creation\n${diff.join('\n')}`,
        ),
      );
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Capacity', 'string', fieldDoc(`${CORE}.PersistentVolumeSpec`, 'capacity')),
    col('Access Modes', 'string', fieldDoc(`${CORE}.PersistentVolumeSpec`, 'accessModes')),
    col(
      'Reclaim Policy',
      'string',
      fieldDoc(`${CORE}.PersistentVolumeSpec`, 'persistentVolumeReclaimPolicy'),
    ),
    col('Status', 'string', fieldDoc(`${CORE}.PersistentVolumeStatus`, 'phase')),
    col('Claim', 'string', fieldDoc(`${CORE}.PersistentVolumeSpec`, 'claimRef')),
    col('StorageClass', 'string', 'StorageClass of the pv'),
    col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv'),
    col('Reason', 'string', fieldDoc(`${CORE}.PersistentVolumeStatus`, 'reason')),
    ageColumn(),
    col('VolumeMode', 'string', fieldDoc(`${CORE}.PersistentVolumeSpec`, 'volumeMode'), 1),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const claim = isObj(spec.claimRef) ? `${str(spec.claimRef.namespace)}/${str(spec.claimRef.name)}` : '';
    const storage = dig(spec, 'capacity', 'storage');
    const phase = str(dig(obj, 'metadata', 'deletionTimestamp'))
      ? 'Terminating'
      : str(dig(obj, 'status', 'phase'));
    const annotatedClass = dig(obj, 'metadata', 'annotations', 'volume.beta.kubernetes.io/storage-class');
    return [
      str(dig(obj, 'metadata', 'name')),
      storage === undefined ? '0' : quantityText(storage),
      accessModesString(spec.accessModes),
      str(spec.persistentVolumeReclaimPolicy),
      phase,
      claim,
      typeof annotatedClass === 'string' ? annotatedClass : str(spec.storageClassName),
      typeof spec.volumeAttributesClassName === 'string' ? spec.volumeAttributesClassName : '<unset>',
      str(dig(obj, 'status', 'reason')),
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
      typeof spec.volumeMode === 'string' ? spec.volumeMode : '<unset>',
    ];
  },
};

/** `PersistentVolume` (core/v1 `persistentvolumes`): how the registry serves, validates and prints it. */
export const persistentVolumeKind: ResourceType = coreKind({
  statusStrategy: specStatusStrategy,
  behaviour: persistentvolumes,
  resource: 'persistentvolumes',
  kind: 'PersistentVolume',
  namespaced: false,
  shortNames: ['pv'],
  subresources: { status: true },
  returnDeletedObject: true,
});
