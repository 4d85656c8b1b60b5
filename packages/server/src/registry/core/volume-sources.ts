/**
 * Storage-backed volume sources as `validateVolumeSource` and `ValidatePersistentVolumeSpec`
 * check them: NFS, iSCSI, CSI, RBD, CephFS, Fibre Channel, git repositories, Azure File,
 * GlusterFS, FlexVolume, GCE and AWS disks, and a pod's ephemeral volume claim templates.
 */
import type { StatusCause } from 'kubeloop/api';
import {
  invalid,
  isDNS1123Subdomain,
  isObj,
  type Obj,
  required,
  str,
  strs,
  tooLong,
  validateLabels,
} from '../shared/util.js';
import { validateClaimSpec } from './persistentvolumeclaim.js';
import { localDescendingPath } from './podspec-sources.js';

/** core's `ValidateCSIDriverName`: required, at most 63 bytes, a subdomain once lowercased. */
export function validateCSIDriverName(name: string, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!name) out.push(required(path));
  if (Buffer.byteLength(name) > 63) out.push(tooLong(path, 63));
  for (const msg of isDNS1123Subdomain(name.toLowerCase())) out.push(invalid(path, name, msg));
  return out;
}

/** `validateNFSVolumeSource` (pods and PVs): an empty path is both missing and not absolute. */
export function validateNFS(nfs: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!str(nfs.server)) out.push(required(`${path}.server`));
  const p = str(nfs.path);
  if (!p) out.push(required(`${path}.path`));
  if (!p.startsWith('/')) out.push(invalid(`${path}.path`, p, 'must be an absolute path'));
  return out;
}

const IQN = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\s]+)$/;
const EUI = /^eui.[A-Za-z0-9]{16}$/;
const NAA = /^naa.[A-Za-z0-9]{32}$/;

/** An IQN's error: a pod's source names the prefixes it wants, a PV's does not. */
function iqnError(iqn: string, pv: boolean): string | undefined {
  if (iqn.startsWith('iqn')) return IQN.test(iqn) ? undefined : 'must be valid format';
  if (iqn.startsWith('eui')) return EUI.test(iqn) ? undefined : 'must be valid format';
  if (iqn.startsWith('naa')) return NAA.test(iqn) ? undefined : 'must be valid format';
  return pv ? 'must be valid format' : 'must be valid format starting with iqn, eui, or naa';
}

/** `validateISCSIVolumeSource` / `validateISCSIPersistentVolumeSource`. */
export function validateISCSI(iscsi: Obj, path: string, pv: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  if (!str(iscsi.targetPortal)) out.push(required(`${path}.targetPortal`));
  const iqn = str(iscsi.iqn);
  if (!iqn) out.push(required(`${path}.iqn`));
  else {
    const msg = iqnError(iqn, pv);
    if (msg) out.push(invalid(`${path}.iqn`, iqn, msg));
  }
  const lun = typeof iscsi.lun === 'number' ? iscsi.lun : 0;
  if (lun < 0 || lun > 255) out.push(invalid(`${path}.lun`, lun, 'must be between 0 and 255, inclusive'));
  if ((iscsi.chapAuthDiscovery === true || iscsi.chapAuthSession === true) && !isObj(iscsi.secretRef))
    out.push(required(`${path}.secretRef`));
  if (pv && isObj(iscsi.secretRef) && !str(iscsi.secretRef.name))
    out.push(required(`${path}.secretRef.name`));
  if (typeof iscsi.initiatorName === 'string') {
    const msg = iqnError(iscsi.initiatorName, pv);
    if (msg) out.push(invalid(`${path}.initiatorname`, iscsi.initiatorName, msg));
  }
  return out;
}

const PARTITION = 'must be between 1 and 255, inclusive';

/** Required string fields of a source, as `field.Required(path, "")`. */
const need =
  (...fields: string[]) =>
  (s: Obj, p: string): StatusCause[] =>
    fields.filter((f) => !str(s[f])).map((f) => required(`${p}.${f}`));

/** A cloud disk's id and partition. */
const disk =
  (id: string) =>
  (s: Obj, p: string): StatusCause[] => {
    const out = need(id)(s, p);
    const partition = typeof s.partition === 'number' ? s.partition : 0;
    if (partition < 0 || partition > 255) out.push(invalid(`${p}.partition`, partition, PARTITION));
    return out;
  };

const monitors = (s: Obj, p: string): StatusCause[] =>
  strs(s.monitors).length === 0 ? [required(`${p}.monitors`)] : [];

/**
 * The sources a pod's volume may have beyond ConfigMaps, Secrets and the like, in kube's order,
 * with the field name kube's errors use (a GCE disk's is `persistentDisk`).
 */
const POD_SOURCES: [string, string, (s: Obj, p: string) => StatusCause[]][] = [
  [
    'gitRepo',
    'gitRepo',
    (s, p) => [...need('repository')(s, p), ...localDescendingPath(str(s.directory), `${p}.directory`)],
  ],
  ['gcePersistentDisk', 'persistentDisk', disk('pdName')],
  ['awsElasticBlockStore', 'awsElasticBlockStore', disk('volumeID')],
  ['nfs', 'nfs', validateNFS],
  ['iscsi', 'iscsi', (s, p) => validateISCSI(s, p, false)],
  ['glusterfs', 'glusterfs', need('endpoints', 'path')],
  ['rbd', 'rbd', (s, p) => [...monitors(s, p), ...need('image')(s, p)]],
  ['flexVolume', 'flexVolume', need('driver')],
  ['cephfs', 'cephfs', monitors],
  ['fc', 'fc', (s, p) => validateFC(s, p)],
  ['azureFile', 'azureFile', need('secretName', 'shareName')],
  ['csi', 'csi', (s, p) => validateInlineCSI(s, p)],
  ['ephemeral', 'ephemeral', (s, p) => validateEphemeral(s, p)],
];

export function validateStorageSources(v: Obj, vp: string): StatusCause[] {
  const out: StatusCause[] = [];
  for (const [field, shown, check] of POD_SOURCES) {
    const s = v[field];
    if (isObj(s)) out.push(...check(s, `${vp}.${shown}`));
  }
  return out;
}

function validateFC(fc: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const wwns = strs(fc.targetWWNs);
  const wwids = strs(fc.wwids);
  if (wwns.length === 0 && wwids.length === 0)
    out.push(required(`${path}.targetWWNs`, 'must specify either targetWWNs or wwids, but not both'));
  if (wwns.length > 0 && wwids.length > 0)
    out.push(invalid(`${path}.targetWWNs`, wwns, 'targetWWNs and wwids can not be specified simultaneously'));
  if (wwns.length > 0) {
    if (typeof fc.lun !== 'number')
      out.push(required(`${path}.lun`, 'lun is required if targetWWNs is specified'));
    else if (fc.lun < 0 || fc.lun > 255)
      out.push(invalid(`${path}.lun`, fc.lun, 'must be between 0 and 255, inclusive'));
  }
  return out;
}

/** `validateCSIVolumeSource`: kube names a bad secret name's field `csi.name`. */
function validateInlineCSI(csi: Obj, path: string): StatusCause[] {
  const out = validateCSIDriverName(str(csi.driver), `${path}.driver`);
  if (isObj(csi.nodePublishSecretRef)) {
    const name = str(csi.nodePublishSecretRef.name);
    if (!name) out.push(required(`${path}.nodePublishSecretRef.name`));
    else for (const msg of isDNS1123Subdomain(name)) out.push(invalid(`${path}.name`, name, msg));
  }
  return out;
}

/** `validateEphemeralVolumeSource`: a claim template, its metadata and spec. */
function validateEphemeral(ephemeral: Obj, path: string): StatusCause[] {
  const template = ephemeral.volumeClaimTemplate;
  if (!isObj(template)) return [required(`${path}.volumeClaimTemplate`)];
  const tp = `${path}.volumeClaimTemplate`;
  const meta = isObj(template.metadata) ? template.metadata : {};
  return [
    ...validateLabels(meta.labels, `${tp}.metadata.labels`),
    ...validateClaimSpec(template.spec, `${tp}.spec`),
  ];
}
