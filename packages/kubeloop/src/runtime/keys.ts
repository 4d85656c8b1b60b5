/**
 * Object keys: `namespace/name` for namespaced objects, `name` for cluster-scoped ones
 * (client-go's `MetaNamespaceKeyFunc`). Names and namespaces never contain `/`, so a key splits
 * back unambiguously.
 */
import type { KubeObject } from '../client/types.js';

/**
 * The key of an object in a store or a workqueue.
 *
 * @example
 * ```ts
 * objectKey({ metadata: { namespace: 'default', name: 'web' } }); // 'default/web'
 * objectKey({ metadata: { name: 'node-1' } });                    // 'node-1'
 * ```
 */
export function objectKey(obj: KubeObject): string {
  const meta = obj.metadata;
  const name = meta?.name ?? '';
  const ns = meta?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/**
 * Splits a key made by {@link objectKey}; `namespace` is `''` for cluster-scoped objects.
 *
 * @example
 * ```ts
 * const { namespace, name } = splitKey('default/web');
 * ```
 */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: '', name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
