/**
 * Owner references: how a child says which object made it (garbage collection, `owns()`).
 */
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { KubeObject } from '../../client/types.js';

/** `setControllerReference` refused: another controller owns the object, or namespaces differ. */
export class OwnerReferenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OwnerReferenceError';
  }
}

function refTo(owner: KubeObject, controller: boolean): OwnerReference {
  const m = owner.metadata;
  if (!owner.apiVersion || !owner.kind || !m?.name || !m.uid) {
    throw new OwnerReferenceError(
      'the owner needs apiVersion, kind, metadata.name and metadata.uid (read it from the server first)',
    );
  }
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: m.name,
    uid: m.uid,
    ...(controller && { controller: true, blockOwnerDeletion: true }),
  };
}

const groupOf = (apiVersion: string) =>
  apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
const sameOwner = (a: OwnerReference, b: OwnerReference) =>
  groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;

function checkNamespaces(owner: KubeObject, child: KubeObject): void {
  const ons = owner.metadata?.namespace ?? '';
  const cns = child.metadata?.namespace ?? '';
  // A namespaced owner can only own objects of its namespace; a cluster-scoped one can own any.
  if (ons !== '' && ons !== cns) {
    throw new OwnerReferenceError(
      `cross-namespace owner references are not allowed: owner ${owner.kind} ${ons}/${owner.metadata?.name}, object in namespace ${JSON.stringify(cns)}`,
    );
  }
}

/**
 * Makes `owner` the controller of `child` (in place; returns `child`): the garbage collector
 * deletes the child with its owner, and `owns()` reconciles the owner when the child changes.
 * Throws {@link OwnerReferenceError} when another object already controls the child or when
 * the namespaces do not allow it.
 *
 * @example
 * ```ts
 * await client.apply(setControllerReference(foo, deploymentFor(foo)), { fieldManager: 'foo' });
 * ```
 */
export function setControllerReference<C extends KubeObject>(owner: KubeObject, child: C): C {
  checkNamespaces(owner, child);
  const ref = refTo(owner, true);
  const refs = child.metadata?.ownerReferences ?? [];
  const other = refs.find((r) => r.controller && !sameOwner(r, ref));
  if (other) {
    throw new OwnerReferenceError(
      `${child.kind ?? 'object'} ${child.metadata?.name} is already controlled by ${other.kind} ${other.name}`,
    );
  }
  child.metadata = { ...child.metadata, ownerReferences: [...refs.filter((r) => !sameOwner(r, ref)), ref] };
  return child;
}

/** Adds (or refreshes) a non-controller owner reference to `owner` on `child` (in place). */
export function setOwnerReference<C extends KubeObject>(owner: KubeObject, child: C): C {
  checkNamespaces(owner, child);
  const ref = refTo(owner, false);
  const refs = child.metadata?.ownerReferences ?? [];
  const existing = refs.find((r) => sameOwner(r, ref));
  const merged = existing ? { ...existing, uid: ref.uid, apiVersion: ref.apiVersion } : ref;
  child.metadata = {
    ...child.metadata,
    ownerReferences: [...refs.filter((r) => !sameOwner(r, ref)), merged],
  };
  return child;
}

/** The controller owner reference of `obj`, if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}
