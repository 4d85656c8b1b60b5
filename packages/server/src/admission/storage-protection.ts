import type { ResourceType } from '../registry/types.js';
import { isObject, type Obj } from '../util/object.js';
import { actsOn, isCore } from './plugin-kinds.js';

/** The finalizers of the StorageObjectInUseProtection plugin, by resource (core group). */
const FINALIZERS: Record<string, string> = {
  persistentvolumeclaims: 'kubernetes.io/pvc-protection',
  persistentvolumes: 'kubernetes.io/pv-protection',
};

/**
 * kube-apiserver's StorageObjectInUseProtection admission plugin: every new claim and volume
 * gets the finalizer the kube-controller-manager's protection controllers remove once nothing
 * uses it, so a claim a pod mounts is not deleted under it.
 */
export function storageObjectInUseProtection() {
  return actsOn(
    (_op, t) => isCore(t, ...Object.keys(FINALIZERS)),
    (op: 'CREATE' | 'UPDATE' | 'DELETE', t: ResourceType, obj: Obj): void => {
      if (op !== 'CREATE' || t.group !== '') return;
      const finalizer = FINALIZERS[t.resource];
      if (!finalizer) return;
      if (!isObject(obj.metadata)) obj.metadata = {};
      const m = obj.metadata as Obj;
      const finalizers = Array.isArray(m.finalizers) ? m.finalizers : [];
      if (!finalizers.includes(finalizer)) m.finalizers = [...finalizers, finalizer];
    },
  );
}
