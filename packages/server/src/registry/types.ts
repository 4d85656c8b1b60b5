import type { NameValidation } from 'kubeloop/api';
import type { CompiledSchema, JSONSchemaProps } from 'kubeloop/schema';
import type { Authorizer } from '../auth/authorization/types.js';
import type { KindBehaviour } from './shared/behaviour.js';

export type { UpdateStrategy } from './shared/behaviour.js';

/** A verb of the Kubernetes API, as listed in discovery. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export const ALL_VERBS: readonly Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

/** Where the scale subresource finds replicas and the selector (JSON paths as in a CRD). */
export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/**
 * One resource the server serves at one group/version: what the registry knows to store,
 * validate, default, print and describe it. Built-in kinds come from a static table; custom
 * resources are added when their CRD is established.
 */
export interface ResourceType {
  group: string;
  version: string;
  /** Plural lowercase name in the URL. */
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories: readonly string[];
  verbs: readonly Verb[];
  /**
   * `approval`: a CertificateSigningRequest's, which changes only its Approved/Denied conditions;
   * `token`: a ServiceAccount's, which issues a TokenRequest (create only).
   */
  subresources: {
    status?: boolean;
    scale?: ScaleSubresource;
    approval?: boolean;
    token?: boolean;
    finalize?: boolean;
    /** `pods/eviction`: a POST of a policy/v1 Eviction deletes the pod as its budget allows. */
    eviction?: boolean;
    /** `pods/ephemeralcontainers`: reads the Pod, writes only its `spec.ephemeralContainers`. */
    ephemeralContainers?: boolean;
  };
  /**
   * What a write to `/status` takes from the stored object besides what every write keeps (the
   * kind's status strategy's PrepareForUpdate); undefined: the whole stored object but its status
   * and managedFields, as for custom resources (and kinds whose strategy was not checked).
   */
  statusStrategy?: StatusStrategy;
  /**
   * Whether `metadata.generation` tracks changes of the spec (everything but metadata/status);
   * `'create'`: it is set to 1 on create and never changes (a PriorityClass's strategy).
   */
  generation: boolean | 'create';
  /**
   * Whether an update of the main resource that changes `metadata.annotations` bumps the
   * generation too (Deployment: its annotations are copied to its ReplicaSets, so kube's
   * strategy counts them as desired state; a status write never bumps it).
   */
  annotationsBumpGeneration?: boolean;
  /** Which rule `metadata.name` follows. */
  nameValidation: NameValidation;
  /** Definition name in the built-in OpenAPI schemas (built-in kinds). */
  definition?: string;
  /** Whether an update without `metadata.resourceVersion` is allowed (true for most built-in kinds). */
  allowUnconditionalUpdate: boolean;
  /** Whether DELETE answers with the deleted object (true) or a `Status` (false). */
  returnDeletedObject: boolean;
  /** Defaults, validation, printing and field selectors. */
  behaviour: KindBehaviour;
  /** Finalizers the server adds when a deletion starts (a CRD's `customresourcecleanup`). */
  deletionFinalizers?: readonly string[];
  /** Set for custom resources: their schema and how versions are stored. */
  custom?: CustomResourceInfo;
  /** Set where a kind lives in another resource's storage, in that resource's form. */
  storedAs?: StoredAs;
  /** Set for kinds without storage of their own (reviews, bindings, component statuses). */
  virtual?: VirtualResource;
}

/** Who asks, and what a virtual resource may consult to answer. */
export interface VirtualContext {
  user: { username: string; groups: string[]; uid?: string; extra?: Record<string, string[]> };
  /** The namespace of the URL, for namespaced kinds. */
  namespace: string | undefined;
  /** The request's `labelSelector`, for kinds that filter their own lists (metrics). */
  labelSelector?: string | undefined;
  /**
   * What a TokenReview answers for a bearer token meant for `audiences` (default: the API
   * audiences): the user and the audiences it was accepted for, or the error.
   */
  authenticateToken(
    token: string,
    audiences?: readonly string[],
  ): {
    user?: VirtualContext['user'] | undefined;
    audiences?: string[] | undefined;
    error?: string | undefined;
  };
  /** The server's authorizer, which the access reviews ask (none: every review is denied). */
  authorizer?: Authorizer;
  /**
   * POSTs to another kind's subresource that rewrites its parent (the `bindings` kind through
   * `pods/binding`), with the request's dry run; a 404 when the target has no such subresource.
   */
  postSubresource(
    target: { group: string; version: string; resource: string; subresource: string },
    namespace: string | undefined,
    name: string,
    body: Record<string, unknown>,
  ): Promise<void>;
  dryRun: boolean;
}

/**
 * A kind kube-apiserver answers without storing it: `create` computes the answer (a review with
 * its status, a binding's Status), `list` the current objects (component statuses).
 */
export interface VirtualResource {
  /** POST: the answer, sent with 201; a `Status` when the kind answers with one. */
  create?(obj: Record<string, unknown>, ctx: VirtualContext): Promise<Record<string, unknown>>;
  /** GET of the collection: the current objects. */
  list?(ctx: VirtualContext): Record<string, unknown>[];
}

/**
 * A built-in kind whose objects live in another resource's storage, as kube-apiserver keeps
 * events.k8s.io/v1 Events as core/v1 Events: one collection, seen through both APIs.
 */
export interface StoredAs {
  group: string;
  resource: string;
  /** An object of this kind in the stored form (a new object; the argument is not changed). */
  toStored(obj: Record<string, unknown>): Record<string, unknown>;
  /** A stored object as this kind (a new object; the argument is not changed). */
  fromStored(obj: Record<string, unknown>): Record<string, unknown>;
}

/** The group and resource whose storage holds `t`'s objects. */
export function storageOf(t: ResourceType): { group: string; resource: string } {
  return t.storedAs ?? t;
}

/** What the server knows of a custom resource version beyond the generic type. */
export interface CustomResourceInfo {
  /** The version's `openAPIV3Schema`, compiled once (validation, defaulting, pruning, CEL). */
  compiled: CompiledSchema;
  schema: JSONSchemaProps;
  /** The version objects are stored at; reads and writes through other versions are converted. */
  storageVersion: string;
  /**
   * Every version's compiled schema, served or not: an object read from storage is pruned and
   * defaulted with the schema of the version it was stored at.
   */
  versionSchemas?: ReadonlyMap<string, CompiledSchema>;
  conversion: 'None' | 'Webhook';
  /** `Warning` sent with every request to a deprecated version. */
  deprecationWarning?: string;
}

/** `apiVersion` of a resource type: `v1` or `group/version`. */
/** The Go package of a group's internal types, as kube's messages name them (`core` for the legacy group). */
export const internalPackage = (group: string): string => (group === '' ? 'core' : group.split('.')[0]!);

export function apiVersionOf(t: { group: string; version: string }): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/**
 * A built-in kind's status strategy (`xxxStatusStrategy` in pkg/registry/<group>/<kind>/strategy.go):
 * a status write keeps the request's object but for these fields, taken from the stored object.
 */
export interface StatusStrategy {
  /** Top-level fields taken from the stored object (`newX.Spec = oldX.Spec`). */
  readonly keep: readonly string[];
  /** `metadata` fields taken from the stored object (`newX.Labels = oldX.Labels`). */
  readonly keepMetadata: readonly string[];
  /**
   * The strategy's `GetResetFields`, as paths of field names (`['metadata', 'labels']`): what
   * nobody comes to own through a status write.
   */
  readonly resetFields: readonly (readonly string[])[];
}
