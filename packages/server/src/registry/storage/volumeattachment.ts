/**
 * The registry entry of `VolumeAttachment` (storage.k8s.io/v1 `volumeattachments`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import { resetMetaStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  ensureObj,
  FIELD_IMMUTABLE,
  forbidden,
  invalid,
  isDNS1123Subdomain,
  isObj,
  isSet,
  numOr,
  type Obj,
  required,
  semanticEqual,
  str,
  tooLong,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE, validateCSIDriverName } from './shared.js';

// ---------------------------------------------------------------------------------------------
// VolumeAttachments
const ONE_SOURCE = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName';

/** `validateVolumeAttachmentSource`. */
function validateSource(source: Obj): StatusCause[] {
  const pv = source.persistentVolumeName;
  const inline = isSet(source.inlineVolumeSpec);
  if (!isSet(pv) && !inline) return [required('spec.source', ONE_SOURCE)];
  if (isSet(pv) && inline) return [forbidden('spec.source', ONE_SOURCE)];
  if (isSet(pv) && !str(pv))
    return [required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName')];
  return [];
}

/** `validateVolumeAttachmentStatus`: the metadata's size and the errors' messages and codes. */
function validateStatus(status: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const metadata = isObj(status.attachmentMetadata) ? status.attachmentMetadata : {};
  let size = 0;
  for (const [k, v] of Object.entries(metadata)) size += Buffer.byteLength(k) + Buffer.byteLength(str(v));
  if (size > MAX_METADATA) out.push(tooLong('status.attachmentMetadata', MAX_METADATA));
  for (const f of ['attachError', 'detachError']) {
    const e = status[f];
    if (!isObj(e)) continue;
    // kube's TooLong names the metadata's limit here, not the message's.
    if (Buffer.byteLength(str(e.message)) > 1024) out.push(tooLong(`status.${f}.message`, MAX_METADATA));
    const code = numOr(e.errorCode);
    if (code !== undefined && code < 0)
      out.push(invalid(`status.${f}.errorCode`, code, 'must be between 0 and 2147483647, inclusive'));
  }
  return out;
}
const MAX_METADATA = 256 * 1024;
const volumeattachments: KindBehaviour = {
  /** The status struct's `attached` has no omitempty: false until the attacher says so. */
  defaults(obj) {
    def(ensureObj(obj, 'status'), 'attached', false);
  },
  /** `ValidateVolumeAttachment` and `ValidateVolumeAttachmentV1`, and on update the spec frozen. */
  validate(obj, old) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const attacher = str(spec.attacher);
    if (!attacher) out.push(required('spec.attacher'));
    out.push(...validateSource(isObj(spec.source) ? spec.source : {}));
    const node = str(spec.nodeName);
    for (const msg of isDNS1123Subdomain(node)) out.push(invalid('spec.nodeName', node, msg));
    out.push(...validateStatus(isObj(obj.status) ? obj.status : {}));
    out.push(...validateCSIDriverName(attacher, 'spec.attacher'));
    const pv = dig(spec, 'source', 'persistentVolumeName');
    if (typeof pv === 'string')
      for (const msg of isDNS1123Subdomain(pv))
        out.push(invalid('spec.source.persistentVolumeName', pv, msg));
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

/** `VolumeAttachment` (storage.k8s.io/v1 `volumeattachments`): how the registry serves, validates and prints it. */
export const volumeAttachmentKind: ResourceType = storageKind({
  statusStrategy: resetMetaStatusStrategy,
  behaviour: volumeattachments,
  resource: 'volumeattachments',
  kind: 'VolumeAttachment',
  subresources: { status: true },
});
