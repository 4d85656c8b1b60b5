import { collectionPrefix, type Store } from '../storage/store.js';

/**
 * The default class of a kind of class (StorageClass, IngressClass): the one annotated
 * `<annotation>: "true"`; when several are, the newest, then the first by name (what the
 * DefaultStorageClass and DefaultIngressClass plugins choose since Kubernetes 1.25/1.26).
 */
export function newestDefaultClass(
  store: Store,
  group: string,
  resource: string,
  annotations: readonly string[],
): string | undefined {
  let chosen: { name: string; created: number } | undefined;
  for (const { object } of store.list(collectionPrefix(group, resource)).items) {
    const m = (object.metadata ?? {}) as {
      name?: string;
      creationTimestamp?: string;
      annotations?: Record<string, string>;
    };
    if (!annotations.some((a) => m.annotations?.[a] === 'true')) continue;
    const created = Date.parse(m.creationTimestamp ?? '') || 0;
    const name = m.name ?? '';
    if (!chosen || created > chosen.created || (created === chosen.created && name < chosen.name))
      chosen = { name, created };
  }
  return chosen?.name;
}
