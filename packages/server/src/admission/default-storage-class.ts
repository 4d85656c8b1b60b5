import type { ResourceType } from '../registry/types.js';
import { collectionPrefix, type Store } from '../storage/store.js';
import type { Obj } from '../util/object.js';

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
  return (op: 'CREATE' | 'UPDATE' | 'DELETE', t: ResourceType, obj: Obj): void => {
    if (op !== 'CREATE' || t.group !== '' || t.resource !== 'persistentvolumeclaims') return;
    const spec = obj.spec as Obj | undefined;
    if (!spec || (spec.storageClassName !== undefined && spec.storageClassName !== null)) return;
    let chosen: { name: string; created: number } | undefined;
    for (const { object } of store.list(collectionPrefix('storage.k8s.io', 'storageclasses')).items) {
      const m = (object.metadata ?? {}) as {
        name?: string;
        creationTimestamp?: string;
        annotations?: Record<string, string>;
      };
      if (!DEFAULT_ANNOTATIONS.some((a) => m.annotations?.[a] === 'true')) continue;
      const created = Date.parse(m.creationTimestamp ?? '') || 0;
      const name = m.name ?? '';
      // GetDefaultClass: the newest, then the first by name.
      if (!chosen || created > chosen.created || (created === chosen.created && name < chosen.name))
        chosen = { name, created };
    }
    if (chosen) spec.storageClassName = chosen.name;
  };
}
