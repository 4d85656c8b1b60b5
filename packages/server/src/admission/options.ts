/**
 * What admission plugins know of a request beyond its object. Kept apart from `chain.ts` so that
 * plugins (webhooks, policies, the shared matching) can name it without importing the chain that
 * imports them.
 */
import type { Obj } from '../util/object.js';

/** What a plugin may need to know of the request beyond its object. */
export interface AdmissionOptions {
  /** A dry run: the plugin decides, but changes nothing (a quota is not charged). */
  dryRun?: boolean;
  /** The request's warnings: a plugin that admits with a warning (PodSecurity) adds it here. */
  warnings?: string[];
  /** The subresource the request writes through (`status`, `scale`), if any. */
  subresource?: string;
  /** The request's user; undefined for the server's own writes. */
  user?: { username: string; groups: readonly string[]; uid?: string; extra?: Record<string, string[]> };
  /**
   * The request's name: the URL's, or the object's as sent on a create ('' with `generateName`,
   * since admission sees the create before the name is generated). Unset: the object's.
   */
  name?: string;
  /** The request's namespace ('' when cluster-scoped). Unset: the object's. */
  namespace?: string;
  /**
   * The request's kind when it is not the resource's (an `autoscaling/v1` Scale for `/scale`).
   * Unset: the resource's kind.
   */
  kind?: { group: string; version: string; kind: string };
  /** CreateOptions, UpdateOptions or DeleteOptions as kube passes them to admission. */
  operationOptions?: Obj;
  /** Where plugins put audit annotations (`<webhook name>/<key>` → value); unset, they are dropped. */
  auditAnnotations?: Record<string, string>;
  /**
   * A write through `/scale`: the Scale of the parent object, and how a Scale's replicas go back
   * to the parent. Webhooks see (and may patch) the Scale; built-in plugins see the parent.
   */
  scale?: { of(parent: Obj): Obj; apply(parent: Obj, scale: Obj): void };
  /**
   * Kube's reinvocation context: a mutating plugin that changed the object sets
   * `shouldReinvoke`, and the chain then runs its mutating plugins once more with `isReinvoke`
   * (webhooks with `reinvocationPolicy: IfNeeded` are called again). `values` is per-plugin state.
   */
  reinvocation?: { shouldReinvoke: boolean; isReinvoke: boolean; values: Map<string, unknown> };
}
