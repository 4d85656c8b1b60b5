/** What the generic REST storage calls out to: admission, allocations, the field manager. */
import type { AdmissionOptions } from '../../admission/options.js';
import type { Obj } from '../../util/object.js';
import type { WriteAuthorization } from '../shared/behaviour.js';
import type { ResourceType, UpdateStrategy } from '../types.js';

/**
 * Hooks the composition root plugs in: admission (namespace lifecycle, webhooks later) and
 * server-side allocations such as Service cluster IPs.
 */
export interface RestHooks {
  /**
   * Mutating admission: a create's before the registry's BeforeCreate (before the name is
   * generated and before validation), an update's on the updated object before the strategy's
   * preparation and validation, a delete's before anything; throws ApiError to refuse.
   */
  mutate?(
    op: 'CREATE' | 'UPDATE' | 'DELETE',
    t: ResourceType,
    obj: Obj,
    old: Obj | undefined,
    options?: AdmissionOptions,
  ): void | Promise<void>;
  /** Validating admission: after validation, before the write is persisted; throws ApiError to refuse. */
  admit?(
    op: 'CREATE' | 'UPDATE' | 'DELETE',
    t: ResourceType,
    obj: Obj,
    old: Obj | undefined,
    options?: AdmissionOptions,
  ): void | Promise<void>;
  /**
   * Whether a kubelet runs the node a pod is bound to: only then is a pod deleted gracefully
   * (it gets a `deletionTimestamp` and the kubelet removes it after the grace period). Pods on
   * other nodes go at once, as the pod garbage collector would remove them from a missing node.
   */
  hasKubelet?(nodeName: string): boolean;
  /** The server's authorization, for kinds whose storage checks the user's rights (RBAC's escalation prevention). */
  authorization?: WriteAuthorization;
  /**
   * Fills server-allocated fields (Service clusterIP…) on create and update; `dryRun` is a dry
   * run's, whose allocators check less (kube's dry-run port allocation skips the range).
   */
  allocate?(t: ResourceType, obj: Obj, old: Obj | undefined, dryRun?: boolean): void;
  /**
   * Records `manager`'s create (`old` undefined) or update in `next.metadata.managedFields`,
   * after defaulting and before server allocations, as kube-apiserver's field manager sees them.
   */
  manageFields?(
    t: ResourceType,
    old: Obj | undefined,
    next: Obj,
    manager: string,
    subresource: UpdateStrategy,
    /** Converts to the versions other managers used (the field manager's `VersionConverter`). */
    convert?: (value: unknown, version: string) => { value: unknown; atom: unknown } | undefined,
  ): void;
  /** The same for a write to `/scale`: moves ownership of the replicas on `parent`. */
  manageScaleFields?(
    t: ResourceType,
    parent: Obj,
    oldScale: Obj,
    newScale: Obj,
    manager: string,
    applied: boolean,
  ): void;
}
