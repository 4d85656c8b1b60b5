import type { ResourceType } from '../registry/types.js';
import type { Store } from '../storage/store.js';
import type { Obj } from '../util/object.js';
import { newestDefaultClass } from './default-class.js';
import { actsOn, isCore } from './plugin-kinds.js';

const DEFAULT_ANNOTATIONS = [
  'storageclass.kubernetes.io/is-default-class',
  'storageclass.beta.kubernetes.io/is-default-class',
];

/**
 * kube-apiserver's DefaultStorageClass admission plugin: a PersistentVolumeClaim created without
 * `spec.storageClassName` gets the default StorageClass (annotated `is-default-class: "true"`;
 * the newest one when several are). An explicit `""` asks for no class and is kept.
 */
export function defaultStorageClass(store: Store) {
  return actsOn(
    (_op, t) => isCore(t, 'persistentvolumeclaims'),
    (op: 'CREATE' | 'UPDATE' | 'DELETE', t: ResourceType, obj: Obj): void => {
      if (op !== 'CREATE' || t.group !== '' || t.resource !== 'persistentvolumeclaims') return;
      const spec = obj.spec as Obj | undefined;
      if (!spec || (spec.storageClassName !== undefined && spec.storageClassName !== null)) return;
      const chosen = newestDefaultClass(store, 'storage.k8s.io', 'storageclasses', DEFAULT_ANNOTATIONS);
      if (chosen !== undefined) spec.storageClassName = chosen;
    },
  );
}
