/**
 * Values walked with their types (structured-merge-diff's `typed` package): validation, the
 * field set a value specifies (`ToFieldSet`), the difference of two values (`Compare`), the merge
 * of a configuration into a live object (`Merge`), and the removal of fields (`RemoveItems`).
 */
import {
  type KeyField,
  keyElement,
  type Path,
  type PathElement,
  pathElementString,
  pathString,
} from './path.js';
import type { Atom, ListType, MapType, ScalarKind } from './schema.js';
import { FieldSet } from './set.js';
import { isObj, type Obj, own, put, valueEquals } from './value.js';

/** One problem of a value against its type, at a path. */
export interface TypedProblem {
  path: string;
  message: string;
}

/** A value that does not conform to its type (`typed.ValidationErrors`). */
export class TypedError extends Error {
  constructor(readonly problems: readonly TypedProblem[]) {
    super(
      problems.length === 1
        ? `${problems[0]!.path}: ${problems[0]!.message}`
        : `errors:\n  ${problems.map((p) => `${p.path}: ${p.message}`).join('\n  ')}`,
    );
    this.name = 'TypedError';
  }
}

/** Which part of an atom a value is walked with. @internal */
export type Handler = 'map' | 'list' | 'scalar';

function isScalar(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean';
}

/**
 * `deduceAtom` + `handleAtom`: the part of the atom that applies to a value (a scalar atom for a
 * scalar, a list atom for a list, a map atom for a map), else the first of map, scalar, list.
 */
export function handlerFor(atom: Atom, v: unknown): Handler | undefined {
  if (v !== null && v !== undefined) {
    if (isScalar(v)) {
      if (atom.scalar) return 'scalar';
    } else if (Array.isArray(v)) {
      if (atom.list) return 'list';
    } else if (atom.map) return 'map';
  }
  if (atom.map) return 'map';
  if (atom.scalar) return 'scalar';
  if (atom.list) return 'list';
  return undefined;
}

/** The type of a map's entry: its declared field's, else the map's element type. */
export function entryAtom(t: MapType, key: string): Atom | undefined {
  const ref = t.field(key) ?? t.elementType;
  return ref?.();
}

/** The path element of a list item (`listItemToPathElement`), or an error message. */
export function listItemElement(t: ListType, item: unknown): PathElement | string {
  if (t.keys.length > 0) {
    if (!isObj(item)) return 'associative list with keys may not have non-map elements';
    const fields: KeyField[] = [];
    for (const name of t.keys) {
      if (Object.hasOwn(item, name)) {
        fields.push({ name, value: item[name] });
        continue;
      }
      const def = t.elementType().map?.fieldDefault(name);
      if (def === undefined)
        return `associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`;
      fields.push({ name, value: def });
    }
    return keyElement(fields);
  }
  if (item === null || item === undefined)
    return "associative list without keys has an element that's an explicit null";
  if (isObj(item)) return "associative list without keys has an element that's a map type";
  if (Array.isArray(item)) return 'not supported: associative list with lists as elements';
  return { value: item };
}

function goTypeName(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (Array.isArray(v)) return '[]interface {}';
  if (isObj(v)) return 'map[string]interface {}';
  return '<nil>';
}

function scalarProblem(kind: ScalarKind, v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  switch (kind) {
    case 'numeric':
      return typeof v === 'number' ? undefined : `expected numeric (int or float), got ${goTypeName(v)}`;
    case 'string':
      return typeof v === 'string' ? undefined : `expected string, got ${JSON.stringify(v)}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `expected boolean, got ${JSON.stringify(v)}`;
    default:
      return undefined;
  }
}

/**
 * Checks a value against its type as `ObjectToTyped` does: scalar types, undeclared fields,
 * list items without their keys, duplicate keys (unless `allowDuplicates`).
 *
 * @throws {@link TypedError} listing the problems.
 */
export function validateTyped(value: unknown, atom: Atom, allowDuplicates = false): void {
  const problems: TypedProblem[] = [];
  validateAt(value, atom, [], problems, allowDuplicates);
  if (problems.length > 0) throw new TypedError(problems);
}

function validateAt(v: unknown, atom: Atom, path: PathElement[], out: TypedProblem[], dup: boolean): void {
  const h = handlerFor(atom, v);
  const here = () => pathString(path);
  if (h === undefined) {
    out.push({ path: here(), message: 'schema error: invalid atom: inlined' });
    return;
  }
  if (h === 'scalar') {
    const p = scalarProblem(atom.scalar!, v);
    if (p) out.push({ path: here(), message: p });
    return;
  }
  if (v === null || v === undefined) return;
  if (h === 'map') {
    const t = atom.map!;
    if (!isObj(v)) {
      out.push({ path: here(), message: `expected map, got ${JSON.stringify(v)}` });
      return;
    }
    if (t.atomic) return;
    for (const key of Object.keys(v)) {
      const sub = entryAtom(t, key);
      path.push({ field: key });
      if (!sub) {
        out.push({ path: here(), message: 'field not declared in schema' });
        path.pop();
        return;
      }
      validateAt(v[key], sub, path, out, dup);
      path.pop();
    }
    return;
  }
  const t = atom.list!;
  if (!Array.isArray(v)) {
    out.push({ path: here(), message: `expected list, got ${JSON.stringify(v)}` });
    return;
  }
  if (t.atomic) return;
  const seen = new FieldSet();
  const element = t.elementType();
  v.forEach((item, i) => {
    const pe = listItemElement(t, item);
    if (typeof pe === 'string') {
      out.push({ path: here(), message: `element ${i}: ${pe}` });
      return;
    }
    if (seen.hasMember(pe) && !dup) {
      out.push({ path: here(), message: `duplicate entries for key ${pathElementString(pe)}` });
    }
    seen.insertMember(pe);
    path.push(pe);
    validateAt(item, element, path, out, dup);
    path.pop();
  });
}

/**
 * The fields a value specifies (`ToFieldSet`): its scalars, atomic lists and maps, list items,
 * and the keys of maps that are not structs. Struct fields holding a granular map or list are
 * not members by themselves, nor are empty granular containers.
 */
export function toFieldSet(value: unknown, atom: Atom): FieldSet {
  const set = new FieldSet();
  fieldSetAt(value, atom, [], set);
  return set;
}

function fieldSetAt(v: unknown, atom: Atom, path: PathElement[], set: FieldSet): void {
  const h = handlerFor(atom, v);
  if (h === 'scalar' || h === undefined) {
    set.insert(path);
    return;
  }
  if (h === 'list') {
    const t = atom.list!;
    if (t.atomic || (v !== null && v !== undefined && !Array.isArray(v))) {
      set.insert(path);
      return;
    }
    if (!Array.isArray(v)) return;
    const element = t.elementType();
    for (const item of v) {
      const pe = listItemElement(t, item);
      if (typeof pe === 'string') continue;
      path.push(pe);
      fieldSetAt(item, element, path, set);
      set.insert(path);
      path.pop();
    }
    return;
  }
  const t = atom.map!;
  if (t.atomic || (v !== null && v !== undefined && !isObj(v))) {
    set.insert(path);
    return;
  }
  if (!isObj(v)) return;
  for (const key of Object.keys(v)) {
    const declared = t.field(key);
    const sub = (declared ?? t.elementType)?.();
    path.push({ field: key });
    if (sub) fieldSetAt(v[key], sub, path, set);
    else set.insert(path);
    if (!declared) set.insert(path);
    path.pop();
  }
}

/** What changed from one value to another (`typed.Comparison`). */
export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * Compares two values (`TypedValue.Compare`): leaves (scalars, atomic and empty containers) that
 * appeared, changed or disappeared, plus the granular containers that appeared or disappeared.
 * `undefined` stands for an absent value, `null` for an explicit null.
 */
export function compareTyped(lhs: unknown, rhs: unknown, atom: Atom): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  compareAt(lhs, rhs, atom, [], c);
  return c;
}

function leafCompare(lhs: unknown, rhs: unknown, path: Path, c: Comparison): void {
  if (lhs === undefined) c.added.insert(path);
  else if (rhs === undefined) c.removed.insert(path);
  else if (!valueEquals(lhs, rhs)) c.modified.insert(path);
}

/** The handler shared by both sides, or undefined when they are of different shapes (a leaf). */
function pairHandler(atom: Atom, lhs: unknown, rhs: unknown): Handler | undefined {
  const primary = rhs !== undefined && rhs !== null ? rhs : lhs;
  const h = handlerFor(atom, primary);
  const other = primary === rhs ? lhs : rhs;
  if (h === undefined || other === undefined || other === null) return h;
  const ho = handlerFor(atom, other);
  if (ho !== h) return undefined;
  if (h === 'map' && !isObj(other)) return undefined;
  if (h === 'list' && !Array.isArray(other)) return undefined;
  if (h === 'map' && !isObj(primary)) return undefined;
  if (h === 'list' && !Array.isArray(primary)) return undefined;
  return h;
}

function emptyish(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObj(v) && Object.keys(v).length === 0;
}

function compareAt(lhs: unknown, rhs: unknown, atom: Atom, path: PathElement[], c: Comparison): void {
  const h = pairHandler(atom, lhs, rhs);
  if (h === undefined || h === 'scalar') {
    leafCompare(lhs, rhs, path, c);
    return;
  }
  const atomic = h === 'map' ? atom.map!.atomic : atom.list!.atomic;
  if (atomic || (emptyish(lhs) && emptyish(rhs))) {
    leafCompare(lhs, rhs, path, c);
    return;
  }
  if (h === 'map') {
    const t = atom.map!;
    const l = isObj(lhs) ? lhs : undefined;
    const r = isObj(rhs) ? rhs : undefined;
    if (l) {
      for (const key of Object.keys(l)) {
        const sub = entryAtom(t, key) ?? UNTYPED_LEAF;
        path.push({ field: key });
        compareAt(l[key], r ? own(r, key) : undefined, sub, path, c);
        path.pop();
      }
    }
    if (r) {
      for (const key of Object.keys(r)) {
        if (l && Object.hasOwn(l, key)) continue;
        const sub = entryAtom(t, key) ?? UNTYPED_LEAF;
        path.push({ field: key });
        compareAt(undefined, r[key], sub, path, c);
        path.pop();
      }
    }
  } else {
    const t = atom.list!;
    const element = t.elementType();
    const li = indexList(t, lhs);
    const ri = indexList(t, rhs);
    for (const [k, item] of li.items) {
      const other = ri.items.get(k);
      path.push(item.pe);
      compareAt(item.value, other?.value, element, path, c);
      path.pop();
    }
    for (const [k, item] of ri.items) {
      if (li.items.has(k)) continue;
      path.push(item.pe);
      compareAt(undefined, item.value, element, path, c);
      path.pop();
    }
  }
  // postItemHook: a granular container that appeared or disappeared.
  if (lhs === undefined) c.added.insert(path);
  else if (rhs === undefined) c.removed.insert(path);
}

/** A map or list whose type is unknown is compared as a whole. */
export const UNTYPED_LEAF: Atom = { scalar: 'untyped' };

interface Indexed {
  /** Items by serialized path element, first occurrence of each key, in list order. */
  items: Map<string, { pe: PathElement; value: unknown }>;
  order: string[];
}

function peKey(pe: PathElement): string {
  if ('field' in pe) return `f${pe.field}`;
  if ('key' in pe) return `k${JSON.stringify(pe.key.map((f) => [f.name, f.value]))}`;
  if ('value' in pe) return `v${JSON.stringify(pe.value)}`;
  return `i${pe.index}`;
}

function indexList(t: ListType, v: unknown): Indexed {
  const items = new Map<string, { pe: PathElement; value: unknown }>();
  const order: string[] = [];
  if (Array.isArray(v)) {
    for (const item of v) {
      const pe = listItemElement(t, item);
      if (typeof pe === 'string') continue;
      const k = peKey(pe);
      if (items.has(k)) continue;
      items.set(k, { pe, value: item });
      order.push(k);
    }
  }
  return { items, order };
}

/**
 * Merges a configuration into a live value (`TypedValue.Merge` with "keep RHS"): the
 * configuration's leaves win, granular maps merge key by key, associative lists item by item
 * (live order kept, new items placed after the live items that precede them in the configuration).
 */
export function mergeTyped(lhs: unknown, rhs: unknown, atom: Atom): unknown {
  return mergeAt(lhs, rhs, atom);
}

function mergeAt(lhs: unknown, rhs: unknown, atom: Atom): unknown {
  const h = pairHandler(atom, lhs, rhs);
  if (h === undefined || h === 'scalar') return rhs !== undefined ? rhs : lhs;
  const atomic = h === 'map' ? atom.map!.atomic : atom.list!.atomic;
  if (atomic || (emptyish(lhs) && emptyish(rhs))) return rhs !== undefined ? rhs : lhs;
  if (h === 'map') {
    const t = atom.map!;
    const l = isObj(lhs) ? lhs : undefined;
    const r = isObj(rhs) ? rhs : undefined;
    const out: Obj = {};
    if (l) {
      for (const key of Object.keys(l)) {
        const sub = entryAtom(t, key) ?? UNTYPED_LEAF;
        const m = mergeAt(l[key], r ? own(r, key) : undefined, sub);
        if (m !== undefined) put(out, key, m);
      }
    }
    if (r) {
      for (const key of Object.keys(r)) {
        if (l && Object.hasOwn(l, key)) continue;
        const sub = entryAtom(t, key) ?? UNTYPED_LEAF;
        const m = mergeAt(undefined, r[key], sub);
        if (m !== undefined) put(out, key, m);
      }
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  const t = atom.list!;
  const element = t.elementType();
  const li = indexList(t, lhs);
  const ri = indexList(t, rhs);
  const out: unknown[] = [];
  const push = (v: unknown) => {
    if (v !== undefined) out.push(v);
  };
  // Port of visitListItems' ordering: walk both orders, keeping the live order for items the
  // configuration does not reorder, and inserting configuration items where they belong.
  const shared = ri.order.filter((k) => li.items.has(k));
  let sharedAt = 0;
  let nextShared: string | undefined = shared[sharedAt++];
  let lI = 0;
  let rI = 0;
  const lLen = li.order.length;
  const rLen = ri.order.length;
  while (lI < lLen || rI < rLen) {
    if (lI < lLen && rI < rLen) {
      const k = li.order[lI]!;
      if (k === ri.order[rI]) {
        push(mergeAt(li.items.get(k)!.value, ri.items.get(k)!.value, element));
        lI++;
        rI++;
        nextShared = shared[sharedAt++];
        continue;
      }
      if (ri.items.has(k) && nextShared !== undefined && nextShared !== k) {
        lI++;
        continue;
      }
    }
    if (lI < lLen) {
      const k = li.order[lI]!;
      if (!ri.items.has(k)) {
        push(mergeAt(li.items.get(k)!.value, undefined, element));
        lI++;
        continue;
      }
    }
    if (rI < rLen) {
      const k = ri.order[rI]!;
      push(mergeAt(li.items.get(k)?.value, ri.items.get(k)!.value, element));
      rI++;
      if (nextShared !== undefined && nextShared === k) nextShared = shared[sharedAt++];
    }
  }
  return out.length > 0 ? out : undefined;
}

/**
 * Removes the members of `toRemove` from a value (`RemoveItems`): a member path goes away with
 * everything below it; atomic containers are never entered. A granular container left empty by
 * the removal is dropped.
 */
export function removeItems(value: unknown, toRemove: FieldSet, atom: Atom): unknown {
  if (toRemove.empty()) return value;
  return removeAt(value, toRemove, atom);
}

function removeAt(v: unknown, toRemove: FieldSet, atom: Atom): unknown {
  const h = handlerFor(atom, v);
  if (h === 'map' && isObj(v)) {
    const t = atom.map!;
    if (t.atomic || Object.keys(v).length === 0) return v;
    const out: Obj = {};
    for (const key of Object.keys(v)) {
      const pe: PathElement = { field: key };
      if (toRemove.hasMember(pe)) continue;
      const sub = toRemove.child(pe);
      if (sub && !sub.empty()) {
        const child = removeAt(v[key], sub, entryAtom(t, key) ?? UNTYPED_LEAF);
        if (child !== undefined) put(out, key, child);
      } else put(out, key, v[key]);
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (h === 'list' && Array.isArray(v)) {
    const t = atom.list!;
    if (t.atomic || v.length === 0) return v;
    const element = t.elementType();
    const out: unknown[] = [];
    for (const item of v) {
      const pe = listItemElement(t, item);
      if (typeof pe === 'string') {
        out.push(item);
        continue;
      }
      if (toRemove.hasMember(pe)) continue;
      const sub = toRemove.child(pe);
      if (sub && !sub.empty()) {
        const child = removeAt(item, sub, element);
        out.push(child === undefined ? {} : child);
      } else out.push(item);
    }
    return out.length > 0 ? out : undefined;
  }
  return v;
}

/**
 * `Set.EnsureNamedFieldsAreMembers`: adds to a set the declared (struct) fields that lead to its
 * members, so that pruning removes a whole struct field, not only what was inside it.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, atom: Atom | undefined): FieldSet {
  const members = [...set.members];
  const out = new FieldSet(members, []);
  for (const c of set.children) {
    let sub: Atom | undefined;
    if ('field' in c.pe && atom?.map) {
      const declared = atom.map.field(c.pe.field);
      if (declared) out.insertMember(c.pe);
      sub = (declared ?? atom.map.elementType)?.();
    } else if ('key' in c.pe && atom?.list) {
      sub = atom.list.elementType();
    }
    out.children.push({ pe: c.pe, set: ensureNamedFieldsAreMembers(c.set, sub) });
  }
  return out;
}
