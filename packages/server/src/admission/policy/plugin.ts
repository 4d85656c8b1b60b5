/**
 * The ValidatingAdmissionPolicy admission plugin: a request is checked against the policies
 * bound to it (`dispatch.ts`, kube's dispatcher and validator).
 *
 * Policies and bindings are read from the store as they are at each request; while none of
 * them is written, a request costs a look-up of the bindings' change count. The policy machinery and its CEL environment load with the first binding,
 * so that a server with no policy does not carry them (they were a tenth of its start-up's
 * modules).
 */
import type { ResourceType } from '../../registry/types.js';
import { collectionPrefix, type Store } from '../../storage/store.js';
import type { Obj } from '../../util/object.js';
import type { AdmissionAttributes } from '../matching.js';
import type { AdmissionOptions } from '../options.js';
import type { PolicyDispatch, PolicyPluginDeps } from './dispatch.js';

export type { PolicyPluginDeps } from './dispatch.js';

const BINDINGS = collectionPrefix('admissionregistration.k8s.io', 'validatingadmissionpolicybindings');

/** The plugin over `store`; `deps` may be filled in after (the authorizer comes after the chain). */
export function validatingAdmissionPolicy(
  store: Store,
  deps: PolicyPluginDeps = {},
): (
  op: AdmissionAttributes['operation'],
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  options?: AdmissionOptions,
) => Promise<void> | undefined {
  let dispatch: PolicyDispatch | undefined;
  let loading: Promise<PolicyDispatch> | undefined;
  // Whether a binding is stored, as of the bindings' change count `seen`.
  let seen = -1;
  let bound = false;
  const changeCount = store.changeCounter(BINDINGS);
  const hasBindings = (): boolean => {
    const changes = changeCount();
    if (changes !== seen) {
      seen = changes;
      bound = store.has(BINDINGS);
    }
    return bound;
  };
  return (op, t, obj, old, options) => {
    if (!hasBindings()) return undefined;
    if (dispatch) {
      dispatch(op, t, obj, old, options);
      return undefined;
    }
    // The first request that meets a binding waits for the machinery (once); the bindings are
    // read then, as the request is checked against the store as it is at that moment.
    loading ??= import('./dispatch.js').then((m) => {
      dispatch = m.policyDispatch(store, deps);
      return dispatch;
    });
    return loading.then((d) => {
      if (hasBindings()) d(op, t, obj, old, options);
    });
  };
}
