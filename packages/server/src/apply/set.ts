/**
 * Sets of field paths (`fieldpath.Set` of structured-merge-diff): what a manager owns, what an
 * apply configuration specifies, what changed between two objects. A set is a tree: `members` are
 * the paths that end at this node, `children` the subtrees below it; a parent is not a member
 * because a child is.
 */
import { comparePathElements, type Path, type PathElement, pathElementEquals } from './path.js';

interface Child {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

/**
 * Index of `pe` in a sorted array; when absent, `-1 - i` where `i` is where it would be inserted.
 * A number rather than an `[index, found]` pair: every walk of a set asks here, per path element.
 */
function search<T>(items: readonly T[], pe: PathElement, get: (t: T) => PathElement): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (comparePathElements(get(items[mid]!), pe) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < items.length && pathElementEquals(get(items[lo]!), pe) ? lo : -1 - lo;
}

const self = (pe: PathElement) => pe;
const childPe = (c: Child) => c.pe;

/**
 * A set of field paths, ordered as structured-merge-diff orders them (which is also the order of
 * their FieldsV1 serialization).
 *
 * @example
 * ```ts
 * const s = new FieldSet();
 * s.insert([{ field: 'spec' }, { field: 'replicas' }]);
 * s.has([{ field: 'spec' }, { field: 'replicas' }]); // true
 * s.has([{ field: 'spec' }]); // false: parents are not members
 * ```
 */
export class FieldSet {
  /** Path elements that are members at this level, sorted. */
  members: PathElement[];
  /** Subsets below path elements, sorted by path element. */
  children: Child[];

  constructor(members: PathElement[] = [], children: Child[] = []) {
    this.members = members;
    this.children = children;
  }

  /** A set of these paths. */
  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (its parents are not added); the empty path (the whole object) is never tracked. */
  insert(p: Path): void {
    if (p.length === 0) return;
    let s: FieldSet = this;
    for (let i = 0; i < p.length - 1; i++) s = s.descend(p[i]!);
    s.insertMember(p[p.length - 1]!);
  }

  /** Adds a member at this level. */
  insertMember(pe: PathElement): void {
    const m = this.members;
    // Paths often come in order (a FieldsV1 read, a sorted object): append without a search.
    if (m.length === 0 || comparePathElements(m[m.length - 1]!, pe) < 0) {
      m.push(pe);
      return;
    }
    const at = search(m, pe, self);
    if (at < 0) m.splice(-1 - at, 0, pe);
  }

  /** The child subset for `pe`, created when absent. */
  descend(pe: PathElement): FieldSet {
    const c = this.children;
    if (c.length === 0 || comparePathElements(c[c.length - 1]!.pe, pe) < 0) {
      const set = new FieldSet();
      c.push({ pe, set });
      return set;
    }
    const at = search(c, pe, childPe);
    if (at >= 0) return this.children[at]!.set;
    const set = new FieldSet();
    this.children.splice(-1 - at, 0, { pe, set });
    return set;
  }

  /** Whether `pe` is a member at this level. */
  hasMember(pe: PathElement): boolean {
    return search(this.members, pe, self) >= 0;
  }

  /** The child subset for `pe`, if any. */
  child(pe: PathElement): FieldSet | undefined {
    const at = search(this.children, pe, childPe);
    return at >= 0 ? this.children[at]!.set : undefined;
  }

  /** Whether the path is a member of the set. */
  has(p: Path): boolean {
    if (p.length === 0) return false;
    let s: FieldSet | undefined = this;
    for (let i = 0; i < p.length - 1; i++) {
      s = s.child(p[i]!);
      if (!s) return false;
    }
    return s.hasMember(p[p.length - 1]!);
  }

  /** The paths below `pe`, without the `pe` prefix (an empty set when none). */
  withPrefix(pe: PathElement): FieldSet {
    return this.child(pe) ?? new FieldSet();
  }

  /** True when no path is a member. */
  empty(): boolean {
    if (this.members.length > 0) return false;
    return this.children.every((c) => c.set.empty());
  }

  /** Number of member paths. */
  size(): number {
    let n = this.members.length;
    for (const c of this.children) n += c.set.size();
    return n;
  }

  /** Paths in either set. */
  union(other: FieldSet): FieldSet {
    const members: PathElement[] = [];
    let i = 0;
    let j = 0;
    const a = this.members;
    const b = other.members;
    while (i < a.length && j < b.length) {
      const c = comparePathElements(a[i]!, b[j]!);
      if (c < 0) members.push(a[i++]!);
      else {
        members.push(b[j]!);
        if (c === 0) i++;
        j++;
      }
    }
    while (i < a.length) members.push(a[i++]!);
    while (j < b.length) members.push(b[j++]!);

    const children: Child[] = [];
    i = 0;
    j = 0;
    const x = this.children;
    const y = other.children;
    while (i < x.length && j < y.length) {
      const c = comparePathElements(x[i]!.pe, y[j]!.pe);
      if (c < 0) children.push(x[i++]!);
      else if (c > 0) children.push(y[j++]!);
      else {
        children.push({ pe: x[i]!.pe, set: x[i]!.set.union(y[j]!.set) });
        i++;
        j++;
      }
    }
    while (i < x.length) children.push(x[i++]!);
    while (j < y.length) children.push(y[j++]!);
    return new FieldSet(members, children);
  }

  /** Paths in both sets. */
  intersection(other: FieldSet): FieldSet {
    const members: PathElement[] = [];
    let i = 0;
    let j = 0;
    const a = this.members;
    const b = other.members;
    while (i < a.length && j < b.length) {
      const c = comparePathElements(a[i]!, b[j]!);
      if (c < 0) i++;
      else {
        if (c === 0) members.push(a[i++]!);
        j++;
      }
    }
    const children: Child[] = [];
    i = 0;
    j = 0;
    const x = this.children;
    const y = other.children;
    while (i < x.length && j < y.length) {
      const c = comparePathElements(x[i]!.pe, y[j]!.pe);
      if (c < 0) i++;
      else {
        if (c === 0) {
          const s = x[i]!.set.intersection(y[j]!.set);
          if (!s.empty()) children.push({ pe: x[i]!.pe, set: s });
          i++;
        }
        j++;
      }
    }
    return new FieldSet(members, children);
  }

  /**
   * Paths of this set that are not in `other`. A parent minus its child stays; a child minus
   * its parent stays too (use {@link recursiveDifference} to drop whole subtrees).
   */
  difference(other: FieldSet): FieldSet {
    const members = differenceOfMembers(this.members, other.members);
    const children: Child[] = [];
    let i = 0;
    let j = 0;
    const x = this.children;
    const y = other.children;
    while (i < x.length && j < y.length) {
      const c = comparePathElements(x[i]!.pe, y[j]!.pe);
      if (c < 0) children.push(x[i++]!);
      else {
        if (c === 0) {
          const s = x[i]!.set.difference(y[j]!.set);
          if (!s.empty()) children.push({ pe: x[i]!.pe, set: s });
          i++;
        }
        j++;
      }
    }
    while (i < x.length) children.push(x[i++]!);
    return new FieldSet(members, children);
  }

  /** Paths of this set that are neither in `other` nor below a member of `other`. */
  recursiveDifference(other: FieldSet): FieldSet {
    const members = differenceOfMembers(this.members, other.members);
    const children: Child[] = [];
    let i = 0;
    let j = 0;
    const x = this.children;
    const y = other.children;
    while (i < x.length && j < y.length) {
      const c = comparePathElements(x[i]!.pe, y[j]!.pe);
      if (c < 0) {
        if (!other.hasMember(x[i]!.pe)) children.push(x[i]!);
        i++;
      } else {
        if (c === 0) {
          if (!other.hasMember(x[i]!.pe)) {
            const s = x[i]!.set.recursiveDifference(y[j]!.set);
            if (!s.empty()) children.push({ pe: x[i]!.pe, set: s });
          }
          i++;
        }
        j++;
      }
    }
    for (; i < x.length; i++) if (!other.hasMember(x[i]!.pe)) children.push(x[i]!);
    return new FieldSet(members, children);
  }

  /** Whether both sets have exactly the same members. */
  equals(other: FieldSet): boolean {
    if (this.members.length !== other.members.length || this.children.length !== other.children.length)
      return false;
    for (let i = 0; i < this.members.length; i++)
      if (!pathElementEquals(this.members[i]!, other.members[i]!)) return false;
    for (let i = 0; i < this.children.length; i++) {
      const a = this.children[i]!;
      const b = other.children[i]!;
      if (!pathElementEquals(a.pe, b.pe) || !a.set.equals(b.set)) return false;
    }
    return true;
  }

  /** Calls `f` with each member path, in pre-order (members of a level before its children). */
  iterate(f: (p: Path) => void, prefix: PathElement[] = []): void {
    for (const m of this.members) f([...prefix, m]);
    for (const c of this.children) c.set.iterate(f, [...prefix, c.pe]);
  }

  /** Every member path. */
  paths(): Path[] {
    const out: Path[] = [];
    this.iterate((p) => out.push(p));
    return out;
  }
}

function differenceOfMembers(a: readonly PathElement[], b: readonly PathElement[]): PathElement[] {
  const out: PathElement[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const c = comparePathElements(a[i]!, b[j]!);
    if (c < 0) out.push(a[i++]!);
    else {
      if (c === 0) i++;
      j++;
    }
  }
  while (i < a.length) out.push(a[i++]!);
  return out;
}
