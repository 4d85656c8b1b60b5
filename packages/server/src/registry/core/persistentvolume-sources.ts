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
import { nodeSelectorTerm } from './podspec-affinity.js';
import { validateCSIDriverName, validateISCSI, validateNFS } from './volume-sources.js';

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
  if (isObj(spec.iscsi)) out.push(...validateISCSI(spec.iscsi, 'spec.iscsi', true));
  if (isObj(spec.local) && !str(spec.local.path)) out.push(required('spec.local.path'));
  const affinity = spec.nodeAffinity;
  if (isObj(affinity)) {
    if (!isObj(affinity.required))
      out.push(required('spec.nodeAffinity.required', 'must specify required node constraints'));
    else {
      const terms = objs(affinity.required.nodeSelectorTerms);
      if (terms.length === 0)
        out.push(
          required(
            'spec.nodeAffinity.required.nodeSelectorTerms',
            'must have at least one node selector term',
          ),
        );
      terms.forEach((t, i) => {
        out.push(...nodeSelectorTerm(t, `spec.nodeAffinity.required.nodeSelectorTerms[${i}]`));
      });
    }
  } else if (isObj(spec.local))
    out.push(required('spec.nodeAffinity', 'Local volume requires node affinity'));
  return out;
}

/** `validateCSIPersistentVolumeSource`: the driver, the handle, secret references. */
function validateCSI(csi: Obj, path: string): StatusCause[] {
  const out = validateCSIDriverName(str(csi.driver), `${path}.driver`);
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
