/**
 * What a Namespace's storage does beyond the generic registry's (`pkg/registry/core/namespace`):
 * its deletion waits for the namespace controller to empty it and clear `spec.finalizers`.
 */
import { isObject, type Obj } from '../../util/object.js';
import { strings } from '../generic/object-meta.js';
import type { StorageHooks } from '../shared/behaviour.js';

export const namespaceStorage: StorageHooks = {
  statusOnCreate(obj) {
    // No phase yet: the namespace defaults read its absence as "create" and add both the
    // `kubernetes` finalizer and phase Active (PrepareForCreate), so deletion waits for the controller.
    obj.status = {};
  },
  waitsForFinalization: (obj) => strings((obj.spec as Obj | undefined)?.finalizers).length > 0,
  onDeletionStart(obj) {
    obj.status = { ...(isObject(obj.status) ? obj.status : {}), phase: 'Terminating' };
  },
};
