/**
 * A PersistentVolume's sources and node affinity as `ValidatePersistentVolumeSpec` checks them
 * beyond their presence: NFS paths, CSI drivers, handles and secret references, iSCSI targets,
 * local volumes (which need node affinity), the affinity's terms.
 */
import type { StatusCause } from 'kubeloop/api';
import {
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isObj,
  type Obj,
  objs,
  required,
  str,
  tooLong,
} from '../shared/util.js';

const CSI_SECRET_REFS = [
  'controllerPublishSecretRef',
  'nodeStageSecretRef',
  'nodePublishSecretRef',
  'controllerExpandSecretRef',
  'nodeExpandSecretRef',
];

export function validatePVSources(spec: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  if (isObj(spec.nfs)) out.push(...validateNFS(spec.nfs, 'spec.nfs'));
  if (isObj(spec.csi)) out.push(...validateCSI(spec.csi, 'spec.csi'));
  if (isObj(spec.iscsi)) out.push(...validateISCSI(spec.iscsi, 'spec.iscsi'));
  if (isObj(spec.local) && !str(spec.local.path)) out.push(required('spec.local.path'));
  const affinity = spec.nodeAffinity;
  if (isObj(affinity)) {
    if (!isObj(affinity.required))
      out.push(required('spec.nodeAffinity.required', 'must specify required node constraints'));
    else if (objs(affinity.required.nodeSelectorTerms).length === 0)
      out.push(
        required('spec.nodeAffinity.required.nodeSelectorTerms', 'must have at least one node selector term'),
      );
  } else if (isObj(spec.local))
    out.push(required('spec.nodeAffinity', 'Local volume requires node affinity'));
  return out;
}

function validateNFS(nfs: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!str(nfs.server)) out.push(required(`${path}.server`));
  const p = str(nfs.path);
  if (!p) out.push(required(`${path}.path`));
  else if (!p.startsWith('/')) out.push(invalid(`${path}.path`, p, 'must be an absolute path'));
  return out;
}

/** `validateCSIPersistentVolumeSource`: the driver (core's `ValidateCSIDriverName`), the handle, secret references. */
function validateCSI(csi: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const driver = str(csi.driver);
  if (!driver) out.push(required(`${path}.driver`));
  if (Buffer.byteLength(driver) > 63) out.push(tooLong(`${path}.driver`, 63));
  for (const msg of driver ? isDNS1123Subdomain(driver.toLowerCase()) : [])
    out.push(invalid(`${path}.driver`, driver, msg));
  if (!str(csi.volumeHandle)) out.push(required(`${path}.volumeHandle`));
  for (const ref of CSI_SECRET_REFS) {
    const r = csi[ref];
    if (!isObj(r)) continue;
    const name = str(r.name);
    if (!name) out.push(required(`${path}.${ref}.name`));
    else for (const msg of isDNS1123Subdomain(name)) out.push(invalid(`${path}.${ref}.name`, name, msg));
    const ns = str(r.namespace);
    if (!ns) out.push(required(`${path}.${ref}.namespace`));
    else for (const msg of isDNS1123Label(ns)) out.push(invalid(`${path}.${ref}.namespace`, ns, msg));
  }
  return out;
}

const IQN = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\s]+)$/;
const EUI = /^eui.[A-Za-z0-9]{16}$/;
const NAA = /^naa.[A-Za-z0-9]{32}$/;

/** `validateISCSIVolumeSource` (as a PV's `validateISCSIPersistentVolumeSource`). */
function validateISCSI(iscsi: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!str(iscsi.targetPortal)) out.push(required(`${path}.targetPortal`));
  const iqn = str(iscsi.iqn);
  if (!iqn) out.push(required(`${path}.iqn`));
  else {
    const kind = ['iqn', 'eui', 'naa'].find((p) => iqn.startsWith(p));
    const ok =
      kind === 'iqn' ? IQN.test(iqn) : kind === 'eui' ? EUI.test(iqn) : kind === 'naa' && NAA.test(iqn);
    if (!ok)
      out.push(
        invalid(
          `${path}.iqn`,
          iqn,
          kind ? `must be valid format starting with ${kind}` : 'must be valid format',
        ),
      );
  }
  const lun = typeof iscsi.lun === 'number' ? iscsi.lun : 0;
  if (lun < 0 || lun > 255) out.push(invalid(`${path}.lun`, lun, 'must be between 0 and 255, inclusive'));
  if ((iscsi.chapAuthDiscovery === true || iscsi.chapAuthSession === true) && !isObj(iscsi.secretRef))
    out.push(required(`${path}.secretRef`));
  return out;
}
