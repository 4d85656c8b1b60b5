/**
 * core/v1 PersistentVolumes, ResourceQuotas, LimitRanges and ComponentStatuses: defaults,
 * validation and printers (`pkg/apis/core/v1/defaults.go`, `pkg/apis/core/validation`, printers.go).
 */
import type { StatusCause } from 'kubeloop/api';
import { timestamp } from '../../util/object.js';
import { accessModesString } from './core.js';
import { createdAtBehaviour } from './default.js';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from './types.js';
import {
  compareQuantity,
  def,
  dig,
  duplicate,
  ensureObj,
  forbidden,
  invalid,
  isDNS1123Subdomain,
  isObj,
  isQualifiedName,
  notSupported,
  type Obj,
  objs,
  parseQuantity,
  required,
  since,
  str,
  strs,
} from './util.js';

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

const quantityText = (v: unknown): string => (typeof v === 'number' ? String(v) : str(v));

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
  if (keys.length === 0) out.push(required('spec.capacity'));
  else if (!keys.includes('storage') || keys.length > 1)
    out.push(notSupported('spec.capacity', `map[${keys.sort().join(' ')}]`, ['storage']));
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
  if (isObj(spec.hostPath) && !str(spec.hostPath.path)) out.push(required('spec.hostPath.path'));
  if (isObj(spec.local) && !str(spec.local.path)) out.push(required('spec.local.path'));
  if (isObj(spec.nfs)) {
    if (!str(spec.nfs.server)) out.push(required('spec.nfs.server'));
    if (!str(spec.nfs.path)) out.push(required('spec.nfs.path'));
  }
  if (isObj(spec.csi)) {
    if (!str(spec.csi.driver)) out.push(required('spec.csi.driver'));
    if (!str(spec.csi.volumeHandle)) out.push(required('spec.csi.volumeHandle'));
  }
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
  validate: validatePersistentVolume,
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

// ---------------------------------------------------------------------------------------------
// ResourceQuotas

/** `helper.IsStandardQuotaResourceName`'s names (hugepages- ones are matched by prefix). */
const STANDARD_QUOTA_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
]);
/** `helper.IsIntegerResourceName`: object counts, which must be whole numbers. */
const INTEGER_RESOURCES = new Set([
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
]);
const isStandardQuotaName = (n: string): boolean =>
  STANDARD_QUOTA_RESOURCES.has(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-');

/** `validateResourceQuotaResourceName` and `ValidateResourceQuantityValue` over a hard/used list. */
function validateQuotaList(list: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!isObj(list)) return out;
  for (const [name, value] of Object.entries(list)) {
    const field = `${path}[${name}]`;
    const nameErrs = isQualifiedName(name);
    for (const msg of nameErrs) out.push(invalid(field, name, msg));
    if (nameErrs.length === 0 && !name.includes('/') && !isStandardQuotaName(name))
      out.push(invalid(field, name, 'must be a standard resource for quota'));
    const q = parseQuantity(value);
    if (q && q.num < 0n) out.push(invalid(field, quantityText(value), 'must be greater than or equal to 0'));
    if (q && INTEGER_RESOURCES.has(name) && (q.num * 1000n) % q.den !== 0n)
      out.push(invalid(field, quantityText(value), 'must be an integer'));
    else if (q && INTEGER_RESOURCES.has(name) && q.num % q.den !== 0n)
      out.push(invalid(field, quantityText(value), 'must be an integer'));
  }
  return out;
}

const QUOTA_SCOPES = [
  'BestEffort',
  'CrossNamespacePodAffinity',
  'NotBestEffort',
  'NotTerminating',
  'PriorityClass',
  'Terminating',
];

const resourcequotas: KindBehaviour = {
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out = [
      ...validateQuotaList(spec.hard, 'spec.hard'),
      ...validateQuotaList(dig(obj, 'status', 'hard'), 'status.hard'),
      ...validateQuotaList(dig(obj, 'status', 'used'), 'status.used'),
    ];
    for (const scope of strs(spec.scopes))
      if (!QUOTA_SCOPES.includes(scope)) out.push(notSupported('spec.scopes', scope, QUOTA_SCOPES));
    return out;
  },
  columns: [
    nameColumn(),
    ageColumn(),
    col(
      'Request',
      'string',
      'Request represents a minimum amount of cpu/memory that a container may consume.',
    ),
    col(
      'Limit',
      'string',
      'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
    ),
  ],
  row(obj, now) {
    const hard = isObj(dig(obj, 'spec', 'hard')) ? (dig(obj, 'spec', 'hard') as Obj) : {};
    const used = isObj(dig(obj, 'status', 'used')) ? (dig(obj, 'status', 'used') as Obj) : {};
    const requests: string[] = [];
    const limits: string[] = [];
    for (const name of Object.keys(hard).sort()) {
      const cell = `${name}: ${used[name] === undefined ? '0' : quantityText(used[name])}/${quantityText(hard[name])}`;
      (name.startsWith('limits.') ? limits : requests).push(cell);
    }
    return [
      str(dig(obj, 'metadata', 'name')),
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
      requests.join(', '),
      limits.join(', '),
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// LimitRanges (no printer in printers.go: Name and Created At).

const LIMIT_TYPES = ['Container', 'Pod', 'PersistentVolumeClaim'];

/** `SetDefaults_LimitRangeItem`: a container's default limit from max, default request from default/min. */
function defaultLimitRange(obj: Obj): void {
  for (const item of objs(dig(obj, 'spec', 'limits'))) {
    if (item.type !== 'Container') continue;
    const dflt: Obj = isObj(item.default) ? { ...item.default } : {};
    const request: Obj = isObj(item.defaultRequest) ? { ...item.defaultRequest } : {};
    for (const [k, v] of Object.entries(isObj(item.max) ? item.max : {})) if (!(k in dflt)) dflt[k] = v;
    for (const [k, v] of Object.entries(dflt)) if (!(k in request)) request[k] = v;
    for (const [k, v] of Object.entries(isObj(item.min) ? item.min : {})) if (!(k in request)) request[k] = v;
    if (Object.keys(dflt).length > 0) item.default = dflt;
    if (Object.keys(request).length > 0) item.defaultRequest = request;
  }
}

/** `ValidateLimitRange`: one item per type, and min ≤ default request ≤ default ≤ max per resource. */
function validateLimitRange(obj: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  objs(dig(obj, 'spec', 'limits')).forEach((item, i) => {
    const path = `spec.limits[${i}]`;
    const type = str(item.type);
    if (seen.has(type)) out.push(duplicate(`${path}.type`, type));
    seen.add(type);
    if (!LIMIT_TYPES.includes(type) && !type.includes('/'))
      out.push(notSupported(`${path}.type`, type, LIMIT_TYPES));
    const get = (field: string, k: string) => {
      const m = item[field];
      return isObj(m) && m[k] !== undefined
        ? { text: quantityText(m[k]), q: parseQuantity(m[k]) }
        : undefined;
    };
    const keys = new Set<string>();
    for (const f of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'])
      if (isObj(item[f])) for (const k of Object.keys(item[f] as Obj)) keys.add(k);
    if (type === 'Pod') {
      for (const f of ['default', 'defaultRequest'])
        if (isObj(item[f]) && Object.keys(item[f] as Obj).length > 0)
          out.push(forbidden(`${path}.${f}`, "may not be specified when `type` is 'Pod'"));
    }
    for (const k of [...keys].sort()) {
      const min = get('min', k);
      const max = get('max', k);
      const dflt = get('default', k);
      const req = get('defaultRequest', k);
      const gt = (
        a?: { q?: ReturnType<typeof parseQuantity> },
        b?: { q?: ReturnType<typeof parseQuantity> },
      ) => a?.q !== undefined && b?.q !== undefined && compareQuantity(a.q, b.q) > 0;
      if (gt(min, max))
        out.push(
          invalid(
            `${path}.min[${k}]`,
            min!.text,
            `min value ${min!.text} is greater than max value ${max!.text}`,
          ),
        );
      if (gt(min, req))
        out.push(
          invalid(
            `${path}.defaultRequest[${k}]`,
            req!.text,
            `min value ${min!.text} is greater than default request value ${req!.text}`,
          ),
        );
      if (gt(req, max))
        out.push(
          invalid(
            `${path}.defaultRequest[${k}]`,
            req!.text,
            `default request value ${req!.text} is greater than max value ${max!.text}`,
          ),
        );
      if (gt(req, dflt))
        out.push(
          invalid(
            `${path}.defaultRequest[${k}]`,
            req!.text,
            `default request value ${req!.text} is greater than default limit value ${dflt!.text}`,
          ),
        );
      if (gt(min, dflt))
        out.push(
          invalid(
            `${path}.default[${k}]`,
            dflt!.text,
            `min value ${min!.text} is greater than default value ${dflt!.text}`,
          ),
        );
      if (gt(dflt, max))
        out.push(
          invalid(
            `${path}.default[${k}]`,
            dflt!.text,
            `default value ${dflt!.text} is greater than max value ${max!.text}`,
          ),
        );
      const ratio = get('maxLimitRequestRatio', k);
      if (ratio?.q && ratio.q.num < ratio.q.den)
        out.push(
          invalid(`${path}.maxLimitRequestRatio[${k}]`, ratio.text, `ratio ${ratio.text} is less than 1`),
        );
    }
  });
  return out;
}

const limitranges: KindBehaviour = {
  ...createdAtBehaviour(),
  defaults: defaultLimitRange,
  validate: validateLimitRange,
};

// ---------------------------------------------------------------------------------------------
// ComponentStatuses

const componentstatuses: KindBehaviour = {
  columns: [
    nameColumn(),
    col('Status', 'string', 'Status of the component conditions'),
    col('Message', 'string', 'Message of the component conditions'),
    col('Error', 'string', 'Error of the component conditions'),
  ],
  row(obj) {
    const healthy = objs(obj.conditions).find((c) => c.type === 'Healthy');
    const status =
      healthy?.status === 'True' ? 'Healthy' : healthy?.status === 'False' ? 'Unhealthy' : 'Unknown';
    return [str(dig(obj, 'metadata', 'name')), status, str(healthy?.message), str(healthy?.error)];
  },
};

/** core/v1 cluster-level kinds, keyed by plural resource. */
export const coreClusterBehaviours: Record<string, KindBehaviour> = {
  persistentvolumes,
  resourcequotas,
  limitranges,
  componentstatuses,
};
