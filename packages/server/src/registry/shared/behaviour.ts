/**
 * The vocabulary of a kind's registry entry: its behaviour (defaults, validation, printer,
 * field selectors) and the storage hooks the generic storage calls for it.
 */

import type { StatusCause } from 'kubeloop/api';
import type { RbacPolicy } from '../../auth/authorization/rbac/policy.js';
import type { Authorizer } from '../../auth/authorization/types.js';
import { builtinSpec } from '../../openapi/builtin.js';
import type { Obj } from '../../util/object.js';
import { docs } from './descriptions.js';

/**
 * The strategy of an update: the main resource's (undefined), the status strategy (`/status`,
 * and a CertificateSigningRequest's `/approval`), or a Namespace's `/finalize` (the main
 * resource's, except that only it may change `spec.finalizers`).
 */
export type UpdateStrategy = 'status' | 'finalize' | 'ephemeralcontainers' | undefined;

/** `metav1.TableColumnDefinition`: one column of a server-side `Table`. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  /** 0 for the columns kubectl always shows, 1 for `-o wide` only. */
  priority: number;
}

/**
 * What the API server knows about one built-in kind beyond its OpenAPI schema: the defaulting
 * and kind-specific validation of its registry strategy, kubectl's Table printer and the extra
 * field selectors it supports.
 */
export interface KindBehaviour {
  /**
   * `SetDefaults_*` of `k8s.io/kubernetes/pkg/apis/<group>/v1/defaults.go` (plus what a create
   * strategy or admission plugin adds that a kubectl user sees), applied on create and update.
   * Mutates `obj`, a fresh deep copy the server owns.
   */
  defaults?(obj: Record<string, unknown>): void;
  /**
   * What the registry strategy's PrepareForCreate/PrepareForUpdate set beyond defaults, after
   * defaulting and before validation; `old` is set on update, `strategy` names the
   * subresource's strategy an update runs (undefined: the main resource's). May throw an ApiError.
   */
  prepare?(obj: Record<string, unknown>, old?: Record<string, unknown>, strategy?: UpdateStrategy): void;
  /**
   * What a create strategy records of the caller (a CertificateSigningRequest's requester):
   * called on create with the authenticated user, before defaulting.
   */
  setRequester?(
    obj: Record<string, unknown>,
    user: { username: string; groups: string[]; uid?: string },
  ): void;
  /** Kind-specific validation (`pkg/apis/<group>/validation`); `old` is set on update. */
  validate?(
    obj: Record<string, unknown>,
    old?: Record<string, unknown>,
    strategy?: UpdateStrategy,
  ): StatusCause[];
  /**
   * Loads what `defaults`/`prepare`/`validate` need that the server does not load at start (the
   * CEL compiler, the CRD schema checks): the registry awaits it before every write of the kind;
   * a promise until loaded, then undefined.
   */
  load?(): Promise<void> | undefined;
  /** The Table columns of printers.go, `Name` first; wide-only columns have priority 1. */
  columns: TableColumnDefinition[];
  /** The cells of one object, in column order, with ages relative to `now`. */
  row(obj: Record<string, unknown>, now: Date): unknown[];
  /**
   * The field labels of the kind's own field label conversion function (the scheme's
   * `AddFieldLabelConversionFunc`), with each one's string value ('' when unset). Absent: the
   * kind has none, and apimachinery's default accepts `metadata.name` and `metadata.namespace`
   * only, refusing any other with `"<label>" is not a known field selector: …`.
   */
  fieldSelectors?: Record<string, (obj: Record<string, unknown>) => string>;
  /**
   * With `fieldSelectors`: the metadata labels the kind's conversion function accepts (default
   * both; a Node, a Namespace or a CSR takes `metadata.name` only).
   */
  fieldSelectorMetadata?: readonly ('metadata.name' | 'metadata.namespace')[];
  /** With `fieldSelectors`: the conversion function's error for another label (default `field label not supported: <label>`). */
  unsupportedFieldLabel?: (label: string) => string;
  /** Steps of the generic storage that differ for this kind (a Pod's graceful deletion, …). */
  storage?: StorageHooks;
}

/**
 * The kind-specific steps of Kubernetes' generic registry (`registry.Store` calls them on its
 * strategy: `PrepareForCreate`, `CheckGracefulDelete`, `BeforeDelete`, subresource REST
 * storages). The generic storage calls them and names no kind itself; each is optional.
 */
export interface StorageHooks {
  /**
   * Create: what becomes of the status the client sent (a kind with a status subresource).
   * Without this hook it is dropped; a Pod starts `Pending`, a Namespace empty, a Node keeps it.
   */
  statusOnCreate?(obj: Obj): void;
  /**
   * Delete: the grace period in seconds (`CheckGracefulDelete`); above 0 the object only gets a
   * `deletionTimestamp` that far ahead, and whoever runs it removes it. `requested` is the
   * request's `gracePeriodSeconds`; `env` says which nodes a kubelet runs.
   */
  gracePeriod?(obj: Obj, requested: number | undefined, env: DeletionEnv): number;
  /**
   * Delete: whether the object waits for something besides `metadata.finalizers` before it is
   * removed (a Namespace's `spec.finalizers`, which its controller empties).
   */
  waitsForFinalization?(obj: Obj): boolean;
  /**
   * Delete: the kind's `DefaultGarbageCollectionPolicy` when the request names none (default
   * `DeleteDependents`): a v1 ReplicationController orphans its pods, an Event has no dependents
   * (`Unsupported`: no `orphan` or `foregroundDeletion` finalizer, whatever the request asks).
   */
  garbageCollectionPolicy?: 'OrphanDependents' | 'Unsupported';
  /**
   * Delete: a refusal the kind's REST storage makes before anything else, by name (a system
   * PriorityClass "cannot be deleted"); the message of the 403.
   */
  refuseDelete?(name: string): string | undefined;
  /** Delete: what else changes when a deletion starts (a Namespace turns `Terminating`). */
  onDeletionStart?(obj: Obj): void;
  /**
   * Subresources answered by a POST that changes the parent (`pods/<name>/binding`), by
   * subresource name.
   */
  postSubresources?: Readonly<Record<string, PostSubresource>>;
  /**
   * Create and update of a request with a user: what the kind's policy-based storage refuses
   * before anything is stored (RBAC's escalation prevention), after admission's mutations and
   * before validation; `old` is set on update. Throws an ApiError (a 403) to refuse.
   */
  confirmWrite?(obj: Obj, old: Obj | undefined, env: WriteEnv): void;
}

/** The request a {@link StorageHooks.confirmWrite} judges: its user, namespace and the server's authorization. */
export interface WriteEnv {
  user: { username: string; groups: string[]; uid?: string };
  /** The request's namespace ('' for cluster-scoped kinds). */
  namespace: string;
  /** The server's authorizer and RBAC policy, to ask what the user may do and holds. */
  authorization: WriteAuthorization;
}

/** What {@link WriteEnv} carries of the server's authorization (kept opaque to the generic storage). */
export interface WriteAuthorization {
  authorizer: Authorizer;
  policy: RbacPolicy;
}

/** What the generic storage lets a grace period depend on. */
export interface DeletionEnv {
  /** Whether a kubelet runs `nodeName` (only its pods are deleted gracefully). */
  hasKubelet(nodeName: string): boolean;
}

/**
 * A subresource whose POST rewrites its parent (Kubernetes' `BindingREST`): the storage reads
 * the parent, lets `apply` change a copy and writes it, retrying on a conflict.
 */
export interface PostSubresource {
  /** Checks the request body against the parent's name before anything is read; throws ApiError. */
  check(body: Obj, name: string): void;
  /** The parent (a mutable copy) as the POST leaves it; throws ApiError to refuse. */
  apply(parent: Obj, body: Obj, name: string): Obj;
}

/** A column definition; `priority` 1 marks a wide-only column. */
export const col = (
  name: string,
  type: string,
  description: string,
  priority = 0,
  format = '',
): TableColumnDefinition => ({
  name,
  type,
  format,
  description,
  priority,
});

/** The `Name` column every printer starts with. */
export const nameColumn = (): TableColumnDefinition => col('Name', 'string', docs.meta.name, 0, 'name');

/** The `Age` column. */
export const ageColumn = (): TableColumnDefinition => col('Age', 'string', docs.meta.creationTimestamp);

export const CONTAINERS_DOC = 'Names of each container in the template.';
export const IMAGES_DOC = 'Images referenced by each container in the template.';

/**
 * The OpenAPI description of `definition`'s field, which printers.go's column descriptions are
 * (`SwaggerDoc()` text); '' when the field has none.
 */
export function fieldDoc(definition: string, field: string): string {
  const schema = builtinSpec().schemas.get(definition);
  const prop = (schema?.properties as Record<string, { description?: string }> | undefined)?.[field];
  return prop?.description ?? '';
}
