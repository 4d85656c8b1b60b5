/**
 * How the client names a kind: group, version and kind, plus (when known up front) the plural
 * resource name of its URLs and whether it lives in namespaces.
 */
import type { KubeObject } from './types.js';

/** A group, version and kind, e.g. `{ group: 'apps', version: 'v1', kind: 'Deployment' }` (`''` is the core group). */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

declare const objectType: unique symbol;

/**
 * What the client needs to address a kind. `plural` and `namespaced` are looked up by resource
 * discovery when omitted. The type parameter is the object type of the kind; it only exists
 * at compile time.
 *
 * Built-in kinds come ready-made (`Pod`, `Deployment`, …). A custom kind is described once:
 * @example
 * ```ts
 * interface Foo extends KubeObject { spec?: { replicas?: number } }
 * const FooKind: ResourceDescriptor<Foo> = { group: 'example.com', version: 'v1', kind: 'Foo' };
 * const foos = client.api(FooKind, 'default');
 * ```
 */
export interface ResourceDescriptor<T extends KubeObject = KubeObject> extends GroupVersionKind {
  /** Lowercase plural name used in URLs (`deployments`); discovered when omitted. */
  readonly plural?: string;
  /** Whether objects of the kind live in namespaces; discovered when omitted. */
  readonly namespaced?: boolean;
  /** Phantom: carries the object type; never set at run time. */
  readonly [objectType]?: T;
}

/** The object type a descriptor stands for. */
export type ObjectOf<D> = D extends ResourceDescriptor<infer T> ? T : never;

/** A descriptor whose URL shape is known without asking the server. */
export interface ResolvedResource extends GroupVersionKind {
  readonly plural: string;
  readonly namespaced: boolean;
  /** Verbs from discovery; undefined when the descriptor was complete and discovery was not asked. */
  readonly verbs?: readonly string[];
}

/** `apiVersion` of a group and version: `v1` for the core group, else `group/version`. */
export function apiVersionOf(gv: { group: string; version: string }): string {
  return gv.group ? `${gv.group}/${gv.version}` : gv.version;
}

/** Splits an `apiVersion` (`apps/v1`, `v1`) into group and version. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** `kind.version.group` (`Deployment.v1.apps`), the way Kubernetes prints a GroupVersionKind. */
export function formatGvk(gvk: GroupVersionKind): string {
  return gvk.group ? `${gvk.kind}.${gvk.version}.${gvk.group}` : `${gvk.kind}.${gvk.version}`;
}
