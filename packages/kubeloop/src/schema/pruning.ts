/**
 * Pruning of unknown fields (apiextensions `schema/pruning`, `PruneWithOptions` with
 * `ReturnPruned`) and the coercion of embedded ObjectMeta (`schema/objectmeta.Coerce`),
 * returning the paths that strict field validation reports (`unknown field "spec.foo"`).
 */

import { hasEmbeddedResource } from './objectmeta.js';
import type { Structural } from './structural.js';
import { isObj } from './util.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** Where the walk is (keys and indices, joined only when a field is pruned) and what it pruned. */
class PathTracker {
  parts: (string | number)[] = [];
  pruned: string[] = [];
  record(key: string): void {
    let path = '';
    for (const p of this.parts) path += typeof p === 'number' ? `[${p}]` : path ? `.${p}` : p;
    this.pruned.push(path ? `${path}.${key}` : key);
  }
}

function prune(x: unknown, s: Structural | undefined, t: PathTracker): void {
  if (s?.preserveUnknownFields) {
    skipPrune(x, s, t);
    return;
  }
  if (isObj(x)) {
    if (!s) {
      for (const k of Object.keys(x)) {
        t.record(k);
        delete x[k];
      }
      return;
    }
    for (const k of Object.keys(x)) {
      if (s.embeddedResource && META_FIELDS.has(k)) continue;
      const prop = s.properties?.[k];
      if (prop || s.additionalProperties) {
        const v = x[k];
        // Scalars hold nothing to prune.
        if (v === null || typeof v !== 'object') continue;
        t.parts.push(k);
        prune(v, prop ?? s.additionalProperties?.schema, t);
        t.parts.pop();
      } else {
        if (!META_FIELDS.has(k) || t.parts.length > 0) t.record(k);
        delete x[k];
      }
    }
  } else if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      t.parts.push(i);
      prune(x[i], s?.items, t);
      t.parts.pop();
    }
  }
}

function skipPrune(x: unknown, s: Structural, t: PathTracker): void {
  if (isObj(x)) {
    for (const k of Object.keys(x)) {
      if (s.embeddedResource && META_FIELDS.has(k)) continue;
      const prop = s.properties?.[k];
      const v = x[k];
      if ((prop || s.additionalProperties) && v !== null && typeof v === 'object') {
        t.parts.push(k);
        prune(v, prop ?? s.additionalProperties?.schema, t);
        t.parts.pop();
      }
    }
  } else if (Array.isArray(x)) {
    // Like kube's skipPrune: items of a preserved array keep their unknown fields too.
    const items = s.items;
    if (!items) return;
    for (let i = 0; i < x.length; i++) {
      t.parts.push(i);
      skipPrune(x[i], items, t);
      t.parts.pop();
    }
  }
}

/** The fields of ObjectMeta (metav1), which pruning keeps inside `metadata`. */
export const OBJECT_META_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

function coerceMeta(
  x: unknown,
  s: Structural | undefined,
  path: string,
  isRoot: boolean,
  out: string[],
): void {
  if (isObj(x)) {
    if (isRoot || s?.embeddedResource) {
      const meta = x.metadata;
      if (isObj(meta)) {
        for (const k of Object.keys(meta)) {
          if (!OBJECT_META_FIELDS.has(k)) {
            out.push(`${path ? `${path}.` : ''}metadata.${k}`);
            delete meta[k];
          }
        }
      }
    }
    if (!s) return;
    for (const k of Object.keys(x)) {
      if ((isRoot || s.embeddedResource) && META_FIELDS.has(k)) continue;
      const prop = s.properties?.[k] ?? s.additionalProperties?.schema;
      // Only embedded resources below have metadata to coerce.
      if (prop && hasEmbeddedResource(prop)) coerceMeta(x[k], prop, path ? `${path}.${k}` : k, false, out);
    }
  } else if (Array.isArray(x) && s?.items && hasEmbeddedResource(s.items)) {
    for (let i = 0; i < x.length; i++) coerceMeta(x[i], s.items, `${path}[${i}]`, false, out);
  }
}

const resourceRoots = new WeakMap<Structural, Structural>();

/** The schema of a whole resource, which keeps apiVersion, kind and metadata (made once per schema). */
function resourceRoot(s: Structural): Structural {
  let r = resourceRoots.get(s);
  if (!r) {
    r = { ...s, embeddedResource: true };
    resourceRoots.set(s, r);
  }
  return r;
}

/** Options of {@link pruneStructural}. */
export interface PruneOptions {
  /** Treat the value as a whole resource (keep apiVersion, kind and metadata at the root). Default true. */
  isResourceRoot?: boolean;
  /**
   * Also drop unknown fields inside `metadata` (at the root and in embedded resources) and report
   * them, as the apiserver's ObjectMeta coercion does. Default true.
   */
  pruneMetadata?: boolean;
}

/**
 * Removes fields the schema does not specify, in place, and returns their paths sorted as
 * kube sorts them (`spec.foo`, `spec.items[0].bar`, `metadata.foo`). `x-kubernetes-preserve-
 * unknown-fields` keeps unknown fields (but still prunes inside known ones); apiVersion, kind
 * and metadata are kept at the root and in embedded resources.
 *
 * @example
 * ```ts
 * const obj = { apiVersion: 'x/v1', kind: 'Foo', metadata: { name: 'a' }, spec: { foo: 1 } };
 * pruneStructural(toStructural({ type: 'object', properties: { spec: { type: 'object' } } }), obj);
 * // ['spec.foo']; obj.spec is {}
 * ```
 */
export function pruneStructural(s: Structural, obj: unknown, opts: PruneOptions = {}): string[] {
  const isRoot = opts.isResourceRoot ?? true;
  const root: Structural = isRoot && !s.embeddedResource ? resourceRoot(s) : s;
  const t = new PathTracker();
  prune(obj, root, t);
  const paths = t.pruned;
  if (opts.pruneMetadata ?? true) coerceMeta(obj, s, '', isRoot, paths);
  return paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
