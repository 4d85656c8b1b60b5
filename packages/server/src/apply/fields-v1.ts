/**
 * The `FieldsV1` format of `metadata.managedFields[].fieldsV1`: a field set as nested JSON
 * objects keyed by serialized path elements, where `{}` marks a member and `".": {}` marks a
 * node that is a member and also has children (`fieldpath.Set.ToJSON` / `FromJSON`).
 */
import {
  comparePathElements,
  deserializePathElement,
  type PathElement,
  serializePathElement,
  UnknownPathElementType,
} from './path.js';
import { FieldSet } from './set.js';
import { isObj, type Obj, put } from './value.js';

/**
 * Serializes a set as kube-apiserver writes it (structured-merge-diff's `emitContentsV1`): the
 * `"."` member marker first, then the keys in path-element order.
 *
 * @example
 * ```ts
 * toFieldsV1(FieldSet.of([{ field: 'data' }, { field: 'a' }])); // { 'f:data': { 'f:a': {} } }
 * ```
 */
export function toFieldsV1(set: FieldSet): Obj {
  let out = encodings.get(set);
  if (out === undefined) {
    out = deepFreeze(emit(set, false));
    encodings.set(set, out);
    decodings.set(out, set);
  }
  return out;
}

/**
 * Encodings of sets, and sets of frozen encodings, both ways: a write re-encodes the entries of
 * every manager, most of them unchanged since they were decoded from the stored object. Sets are
 * never changed once built, and frozen encodings cannot change, so either side stays valid; the
 * encodings are frozen because they are shared between objects.
 */
const encodings = new WeakMap<FieldSet, Obj>();
const decodings = new WeakMap<Obj, FieldSet>();

function deepFreeze(o: Obj): Obj {
  for (const k in o) {
    const v = o[k];
    if (isObj(v) && !Object.isFrozen(v)) deepFreeze(v);
  }
  return Object.freeze(o);
}

/**
 * The `{}` of every member without children, shared: FieldsV1 is only ever read (and stored
 * objects are frozen anyway), so one frozen empty object saves an allocation per field.
 */
const MEMBER: Obj = Object.freeze({});

function emit(s: FieldSet, includeSelf: boolean): Obj {
  const out: Obj = {};
  if (includeSelf && (s.members.length > 0 || s.children.length > 0)) out['.'] = MEMBER;
  let mi = 0;
  let ci = 0;
  const m = s.members;
  const c = s.children;
  while (mi < m.length || ci < c.length) {
    const order = mi >= m.length ? 1 : ci >= c.length ? -1 : comparePathElements(m[mi]!, c[ci]!.pe);
    if (order < 0) {
      put(out, serializePathElement(m[mi++]!), MEMBER);
    } else if (order > 0) {
      const child = c[ci++]!;
      put(out, serializePathElement(child.pe), emit(child.set, false));
    } else {
      const child = c[ci++]!;
      mi++;
      put(out, serializePathElement(child.pe), emit(child.set, true));
    }
  }
  return out;
}

/** Error of a FieldsV1 value that cannot be read. */
export class FieldsV1Error extends Error {}

/**
 * Parses a FieldsV1 value; keys of unknown kinds are dropped, as a newer format would be.
 *
 * @example
 * ```ts
 * fromFieldsV1({ 'f:spec': { 'f:replicas': {} } }).has([{ field: 'spec' }, { field: 'replicas' }]); // true
 * ```
 */
export function fromFieldsV1(fields: unknown): FieldSet {
  if (!isObj(fields)) throw new FieldsV1Error('FieldsV1 must be a JSON object');
  const frozen = Object.isFrozen(fields);
  if (frozen) {
    const known = decodings.get(fields);
    if (known) return known;
  }
  const set = read(fields).children ?? new FieldSet();
  // Not an encoding of the set: a stored entry need not be in canonical form.
  if (frozen) decodings.set(fields, set);
  return set;
}

function read(node: Obj): { children: FieldSet | undefined; isMember: boolean } {
  let children: FieldSet | undefined;
  let isMember = false;
  for (const [key, value] of Object.entries(node)) {
    if (key === '.') {
      isMember = true;
      continue;
    }
    let pe: PathElement;
    try {
      pe = deserializePathElement(key);
    } catch (err) {
      if (err instanceof UnknownPathElementType) continue;
      throw new FieldsV1Error(
        `parsing key as path element: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (!isObj(value)) throw new FieldsV1Error(`expected an object for ${key}`);
    const sub = read(value);
    if (sub.isMember) {
      children ??= new FieldSet();
      children.insertMember(pe);
    }
    if (sub.children) {
      children ??= new FieldSet();
      const existing = children.child(pe);
      if (existing) {
        const merged = existing.union(sub.children);
        existing.members = merged.members;
        existing.children = merged.children;
      } else {
        const target = children.descend(pe);
        target.members = sub.children.members;
        target.children = sub.children.children;
      }
    }
  }
  if (!children) isMember = true;
  return { children, isMember };
}
