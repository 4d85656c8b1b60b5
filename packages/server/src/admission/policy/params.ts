/**
 * The params of a binding (policy/generic `CollectParams`): the object its `paramRef` names, or
 * the objects its selector selects, of the policy's `paramKind`, read from the store.
 */
import type { Registry } from '../../registry/registry.js';
import { labelSelectorAsSelector, selectorMatches } from '../../registry/shared/util.js';
import { storageOf } from '../../registry/types.js';
import { collectionPrefix, objectKey, type Store } from '../../storage/store.js';
import type { Obj } from '../../util/object.js';
import type { CompiledPolicy } from './compile.js';

/** A binding's params: `[null]` when the policy or the binding has none. Throws the configuration error. */
export function collectParams(
  policy: CompiledPolicy,
  paramRef: Obj | undefined,
  namespace: string,
  store: Store,
  registry: Registry | undefined,
): (Obj | null)[] {
  const pk = policy.paramKind;
  if (!pk || !paramRef) return [null];
  const t = registry?.byKind(pk.group, pk.version, pk.kind);
  if (!t) {
    // The policy source cannot find the kind: kube reports it as the policy's configuration error.
    throw new PolicyConfigError(
      `failed to find resource referenced by paramKind: '${pk.group}/${pk.version}, Kind=${pk.kind}'`,
    );
  }
  const refNamespace = typeof paramRef.namespace === 'string' ? paramRef.namespace : '';
  const name = typeof paramRef.name === 'string' ? paramRef.name : '';
  let ns: string | undefined;
  if (t.namespaced) {
    ns = refNamespace || namespace;
    if (!ns)
      throw new Error(
        'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources',
      );
  } else if (refNamespace) {
    throw new Error('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  }
  const { group, resource } = storageOf(t);
  let params: Obj[];
  if (name) {
    if (paramRef.selector !== undefined && paramRef.selector !== null)
      throw new Error('paramRef.name and paramRef.selector are mutually exclusive');
    const found = store.get(objectKey(group, resource, ns, name))?.object as Obj | undefined;
    params = found ? [found] : [];
  } else if (paramRef.selector !== undefined && paramRef.selector !== null) {
    const selector = labelSelectorAsSelector(paramRef.selector);
    if (!selector) throw new Error('invalid label selector');
    params = store
      .list(collectionPrefix(group, resource, ns))
      .items.map((s) => s.object as Obj)
      .filter((o) =>
        selectorMatches(selector, ((o.metadata as Obj | undefined)?.labels ?? {}) as Record<string, string>),
      );
  } else {
    throw new Error('one of name or selector must be provided');
  }
  if (params.length === 0 && paramRef.parameterNotFoundAction === 'Deny')
    throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
  return params;
}

/** A configuration error of the policy itself (not of one binding). */
export class PolicyConfigError extends Error {}
