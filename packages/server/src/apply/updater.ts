/**
 * Ownership bookkeeping of structured-merge-diff's `merge.Updater`: how an update moves
 * ownership of the fields it changed to its manager, and how an apply merges a configuration,
 * removes the fields its manager stopped applying, and detects conflicts with other managers.
 *
 * Every API version of a kind is treated as the same schema (built-in kinds are served at one
 * version, and custom resources of strategy `None` convert between versions without changing
 * fields), unless a {@link VersionConverter} is given: then, as structured-merge-diff does,
 * each manager's fields are compared in the manager's own version, and an apply prunes in the
 * version the manager applied at last time.
 */
import { type Path, pathString } from './path.js';
import type { Atom } from './schema.js';
import { FieldSet } from './set.js';
import {
  type Comparison,
  compareTyped,
  ensureNamedFieldsAreMembers,
  mergeTyped,
  removeItems,
  toFieldSet,
} from './typed.js';
import { valueEquals } from './value.js';

/** The fields one manager owns, at the API version it used, and whether it applied them. */
export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
}

/**
 * Converts an object to another version of its kind, with that version's type; `undefined` when
 * the kind has no such version (its managers are dropped, as structured-merge-diff drops them).
 */
export type VersionConverter = (
  value: unknown,
  version: string,
) => { value: unknown; atom: Atom } | undefined;

/**
 * Thrown by a {@link VersionConverter} that cannot answer synchronously yet (the conversion goes
 * through a webhook): the caller converts what it asks for and runs the field manager again.
 */
export class ConversionPending extends Error {
  constructor() {
    super('conversion pending');
    this.name = 'ConversionPending';
  }
}

/** Field sets by manager identifier. */
export type ManagedFieldSets = Map<string, VersionedSet>;

/** One field another manager owns with a different value. */
export interface Conflict {
  readonly manager: string;
  readonly path: Path;
}

/** The conflicts of an apply (`merge.Conflicts`). */
export class Conflicts extends Error {
  constructor(readonly conflicts: readonly Conflict[]) {
    super(
      conflicts.map((c) => `conflict with ${JSON.stringify(c.manager)}: ${pathString(c.path)}`).join('\n'),
    );
    this.name = 'Conflicts';
  }
}

/** Excludes fields, and everything below them, from each part of a comparison. */
function exclude(c: Comparison, ignored: FieldSet | undefined): Comparison {
  if (!ignored || ignored.empty()) return c;
  return {
    added: c.added.recursiveDifference(ignored),
    modified: c.modified.recursiveDifference(ignored),
    removed: c.removed.recursiveDifference(ignored),
  };
}

/**
 * Computes managed fields for updates and merges applied configurations, for one type.
 *
 * @example
 * ```ts
 * const u = new Updater(atom);
 * const { managers } = u.update(live, next, 'v1', new Map(), 'kubectl-edit');
 * ```
 */
export class Updater {
  /**
   * @param atom the type of the objects.
   * @param ignored fields the write's strategy resets (`status` on the main resource, `spec` on
   * `/status`): nobody gains or loses them through this write.
   */
  constructor(
    readonly atom: Atom,
    readonly ignored?: FieldSet,
  ) {}

  private updateOwners(
    oldObject: unknown,
    newObject: unknown,
    managers: ManagedFieldSets,
    workflow: string,
    force: boolean,
    version: string,
    convert?: VersionConverter,
  ): Comparison {
    const compare = exclude(compareTyped(oldObject, newObject, this.atom), this.ignored);
    // The comparison in each other version managers use (converted objects), computed once.
    const versions = new Map<string, Comparison>();
    const compareAt = (v: string): Comparison | undefined => {
      if (!convert || v === version) return compare;
      let c = versions.get(v);
      if (!c) {
        const o = convert(oldObject, v);
        const n = convert(newObject, v);
        if (!o || !n) return undefined;
        c = exclude(compareTyped(o.value, n.value, o.atom), this.ignored);
        versions.set(v, c);
      }
      return c;
    };
    const conflicts = new Map<string, FieldSet>();
    const removed = new Map<string, FieldSet>();
    for (const [manager, vs] of [...managers]) {
      if (manager === workflow) continue;
      const c = compareAt(vs.apiVersion);
      if (!c) {
        managers.delete(manager);
        continue;
      }
      const conflictSet = vs.set.intersection(c.modified.union(c.added));
      if (!conflictSet.empty()) conflicts.set(manager, conflictSet);
      if (!c.removed.empty()) removed.set(manager, c.removed);
    }
    if (!force && conflicts.size > 0) {
      const list: Conflict[] = [];
      for (const manager of [...conflicts.keys()].sort()) {
        conflicts.get(manager)!.iterate((path) => list.push({ manager, path }));
      }
      throw new Conflicts(list);
    }
    for (const [manager, vs] of [...managers]) {
      if (manager === workflow) continue;
      let set = vs.set;
      const taken = conflicts.get(manager);
      if (taken) set = set.difference(taken);
      const gone = removed.get(manager);
      if (gone) set = set.difference(gone);
      if (set !== vs.set) managers.set(manager, { ...vs, set });
    }
    for (const [manager, vs] of [...managers]) if (vs.set.empty()) managers.delete(manager);
    return compare;
  }

  /**
   * A non-apply write (`Updater.Update`): `manager` takes the fields that were added or modified
   * from everyone else and loses the removed ones.
   */
  update(
    liveObject: unknown,
    newObject: unknown,
    version: string,
    managers: ManagedFieldSets,
    manager: string,
    convert?: VersionConverter,
  ): { managers: ManagedFieldSets } {
    const next = new Map(managers);
    const compare = this.updateOwners(liveObject, newObject, next, manager, true, version, convert);
    let set = (next.get(manager)?.set ?? new FieldSet())
      .union(compare.modified)
      .union(compare.added)
      .difference(compare.removed);
    if (this.ignored) set = set.recursiveDifference(this.ignored);
    if (set.empty()) next.delete(manager);
    else next.set(manager, { set, apiVersion: version, applied: false });
    return { managers: next };
  }

  /**
   * A server-side apply (`Updater.Apply`): merges `config` into the live object, removes what
   * `manager` applied last time but no longer does (unless someone else owns it), and gives
   * `manager` exactly the fields of `config`. Throws {@link Conflicts} when another manager owns
   * a field `config` changes, unless `force`.
   *
   * @returns the new object, or `undefined` when it equals the live one.
   */
  apply(
    liveObject: unknown,
    config: unknown,
    version: string,
    managers: ManagedFieldSets,
    manager: string,
    force: boolean,
    convert?: VersionConverter,
  ): { object: unknown; managers: ManagedFieldSets } {
    const next = new Map(managers);
    let newObject = mergeTyped(liveObject, config, this.atom);
    const lastSet = next.get(manager);
    let set = toFieldSet(config, this.atom);
    if (this.ignored) set = set.recursiveDifference(this.ignored);
    next.set(manager, { set, apiVersion: version, applied: true });
    newObject =
      convert && lastSet && lastSet.apiVersion !== version
        ? this.pruneAcrossVersions(newObject, next, lastSet, version, convert)
        : this.prune(newObject, next, lastSet);
    this.updateOwners(liveObject, newObject, next, manager, force, version, convert);
    return { object: valueEquals(liveObject, newObject) ? undefined : newObject, managers: next };
  }

  /**
   * `prune` when the manager applied at another version last time: the merged object is pruned
   * in that version (converted there and back), and owned items are added back in each
   * managers' version, as structured-merge-diff does.
   */
  private pruneAcrossVersions(
    merged: unknown,
    managers: ManagedFieldSets,
    lastSet: VersionedSet,
    version: string,
    convert: VersionConverter,
  ): unknown {
    if (lastSet.set.empty()) return merged;
    const at = convert(merged, lastSet.apiVersion);
    if (!at) return merged;
    const ensure = (set: FieldSet, atom: Atom) => ensureNamedFieldsAreMembers(set, atom);
    let mergedAt = at.value;
    let pruned = removeItems(mergedAt, ensure(lastSet.set, at.atom), at.atom);
    // addBackOwnedItems: the version pruned at first, then every other managers' version.
    const byVersion = new Map<string, FieldSet>();
    for (const vs of managers.values())
      byVersion.set(vs.apiVersion, (byVersion.get(vs.apiVersion) ?? new FieldSet()).union(vs.set));
    const order = [
      ...(byVersion.has(lastSet.apiVersion) ? [lastSet.apiVersion] : []),
      ...[...byVersion.keys()].filter((v) => v !== lastSet.apiVersion),
    ];
    let atom = at.atom;
    for (const v of order) {
      const m = convert(mergedAt, v);
      const p = convert(pruned, v);
      if (!m || !p) continue;
      atom = m.atom;
      mergedAt = m.value;
      const mergedSet = ensure(toFieldSet(m.value, atom), atom);
      const prunedSet = ensure(toFieldSet(p.value, atom), atom);
      pruned = removeItems(
        m.value,
        mergedSet.difference(prunedSet.union(ensure(byVersion.get(v)!, atom))),
        atom,
      );
    }
    // addBackDanglingItems, against the merged object in the last set's version.
    const p = convert(pruned, lastSet.apiVersion);
    if (p) {
      const prunedSet = ensure(toFieldSet(p.value, at.atom), at.atom);
      const mergedSet = ensure(toFieldSet(at.value, at.atom), at.atom);
      pruned = removeItems(
        at.value,
        mergedSet.difference(prunedSet).intersection(ensure(lastSet.set, at.atom)),
        at.atom,
      );
    }
    return convert(pruned, version)?.value ?? pruned;
  }

  private ensure(set: FieldSet): FieldSet {
    return ensureNamedFieldsAreMembers(set, this.atom);
  }

  /** Removes fields the manager applied last time and no longer applies, that nobody else owns. */
  private prune(merged: unknown, managers: ManagedFieldSets, lastSet: VersionedSet | undefined): unknown {
    if (!lastSet || lastSet.set.empty()) return merged;
    let pruned = removeItems(merged, this.ensure(lastSet.set), this.atom);
    pruned = this.addBackOwnedItems(merged, pruned, managers);
    return this.addBackDanglingItems(merged, pruned, lastSet);
  }

  /** Puts back what prune removed but some manager (or the new configuration) owns. */
  private addBackOwnedItems(merged: unknown, pruned: unknown, managers: ManagedFieldSets): unknown {
    let managed = new FieldSet();
    for (const vs of managers.values()) managed = managed.union(vs.set);
    const mergedSet = this.ensure(toFieldSet(merged, this.atom));
    const prunedSet = this.ensure(toFieldSet(pruned, this.atom));
    return removeItems(merged, mergedSet.difference(prunedSet.union(this.ensure(managed))), this.atom);
  }

  /** Makes sure that prune removed only fields the applying manager owned before. */
  private addBackDanglingItems(merged: unknown, pruned: unknown, lastSet: VersionedSet): unknown {
    const prunedSet = this.ensure(toFieldSet(pruned, this.atom));
    const mergedSet = this.ensure(toFieldSet(merged, this.atom));
    const last = this.ensure(lastSet.set);
    return removeItems(merged, mergedSet.difference(prunedSet).intersection(last), this.atom);
  }
}
