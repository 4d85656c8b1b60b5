/**
 * The admission stage: the plugins a create, update or delete passes after authorization and
 * before it is stored, in kube-apiserver's order. The registry calls {@link AdmissionChain.mutate}
 * (its `mutate` hook) before its strategy prepares and validates the object, and
 * {@link AdmissionChain.validate} (its `admit` hook) after; a plugin mutates the object or throws
 * an ApiError to refuse the request.
 *
 * Phases, as in kube-apiserver: mutating plugins (namespace lifecycle, Priority, default StorageClass
 * and IngressClass),
 * then the schema checks of the kind (the registry's strategy: validation, CRD schemas), then
 * validating plugins (a terminating CRD's custom resources). Admission webhooks and
 * ValidatingAdmissionPolicies are to take their places in the same two lists.
 */
import type { ResourceType } from '../registry/types.js';
import type { Store } from '../storage/store.js';
import type { Obj } from '../util/object.js';
import { defaultIngressClass } from './default-ingress-class.js';
import { defaultStorageClass } from './default-storage-class.js';
import { namespaceLifecycle } from './namespace-lifecycle.js';
import { priorityAdmission } from './priority.js';

/** An admission operation. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** One admission plugin: mutates `obj`, or throws an ApiError to refuse. */
export type AdmissionPlugin = (
  op: AdmissionOperation,
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
) => void;

/** The plugins of a server, run in order: mutating ones, then validating ones. */
export class AdmissionChain {
  private readonly mutating: AdmissionPlugin[];
  private readonly validating: AdmissionPlugin[] = [];

  constructor(mutating: readonly AdmissionPlugin[] = []) {
    this.mutating = [...mutating];
  }

  /** Adds a validating plugin (after the others): for plugins made after the registry they guard. */
  addValidating(plugin: AdmissionPlugin): void {
    this.validating.push(plugin);
  }

  /** Runs the mutating plugins on one request's object (before the registry validates it). */
  readonly mutate = (op: AdmissionOperation, t: ResourceType, obj: Obj, old: Obj | undefined): void => {
    for (const plugin of this.mutating) plugin(op, t, obj, old);
  };

  /** Runs the validating plugins on one request's object (once the registry validated it). */
  readonly validate = (op: AdmissionOperation, t: ResourceType, obj: Obj, old: Obj | undefined): void => {
    for (const plugin of this.validating) plugin(op, t, obj, old);
  };
}

/** The built-in plugins kube-apiserver enables by default that this server has, over `store`. */
export function builtinAdmission(store: Store): AdmissionChain {
  return new AdmissionChain([
    namespaceLifecycle(store),
    priorityAdmission(store),
    defaultStorageClass(store),
    defaultIngressClass(store),
  ]);
}
