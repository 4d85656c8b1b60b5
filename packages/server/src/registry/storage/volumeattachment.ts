/**
 * The registry entry of `VolumeAttachment` (storage.k8s.io/v1 `volumeattachments`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import { resetMetaStatusStrategy } from '../shared/status-strategy.js';
import { dig, FIELD_IMMUTABLE, invalid, isObj, required, semanticEqual, str } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE } from './shared.js';

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

/** `VolumeAttachment` (storage.k8s.io/v1 `volumeattachments`): how the registry serves, validates and prints it. */
export const volumeAttachmentKind: ResourceType = storageKind({
  statusStrategy: resetMetaStatusStrategy,
  behaviour: volumeattachments,
  resource: 'volumeattachments',
  kind: 'VolumeAttachment',
  subresources: { status: true },
});
