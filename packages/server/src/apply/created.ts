/**
 * The managed fields of a create, built directly: what the general update path computes when
 * the object before the write holds nothing but its type meta (`apiVersion`, `kind`) and nobody
 * managed anything — every field of the new object is "added", so the creator owns each field it
 * reaches, containers included (`"."`). The general path gets there by comparing the two objects
 * into path sets, combining and stripping the sets, then serializing them; here one walk of the
 * object writes the FieldsV1 JSON text, keys already in FieldsV1 order. The output is the same,
 * byte for byte (`created.test.ts` compares both on many objects).
 *
 * Objects of a kind created by the same client mostly have the same fields, hence the same
 * FieldsV1: the tree of each text is parsed once, frozen and shared by every object that has it
 * (FieldsV1 is only ever read, and stored objects are frozen anyway).
 */
import { comparePathElements, type PathElement, serializePathElement } from './path.js';
import type { Atom } from './schema.js';
import type { FieldSet } from './set.js';
import { entryAtom, handlerFor, listItemElement, UNTYPED_LEAF } from './typed.js';
import { compareStrings, isObj, type Obj } from './value.js';

/** Thrown inside the walk for what only the general path handles (duplicate list items). */
class Unsupported extends Error {}

// Bounded caches: field names and field sets can be arbitrary data.
const CACHE_MAX = 4096;
const quotedFields = new Map<string, string>();
const trees = new Map<string, Obj>();
let lastText: string | undefined;
let lastTree: Obj | undefined;

/** `"f:name"`: the FieldsV1 key of a field as JSON text. */
function quotedField(field: string): string {
  let q = quotedFields.get(field);
  if (q === undefined) {
    if (quotedFields.size >= CACHE_MAX) quotedFields.clear();
    q = JSON.stringify(`f:${field}`);
    quotedFields.set(field, q);
  }
  return q;
}

function freezeTree(o: Obj): Obj {
  Object.freeze(o);
  for (const k in o) freezeTree(o[k] as Obj);
  return o;
}

/** The frozen, shared tree of a FieldsV1 text. */
function treeOf(text: string): Obj {
  // Consecutive creates mostly repeat the last text: comparing is cheaper than hashing it.
  if (text === lastText) return lastTree!;
  let t = trees.get(text);
  if (t === undefined) {
    if (trees.size >= CACHE_MAX) trees.clear();
    t = freezeTree(JSON.parse(text) as Obj);
    trees.set(text, t);
  }
  lastText = text;
  lastTree = t;
  return t;
}

/**
 * The FieldsV1 a create records for its manager (frozen, possibly shared with other objects),
 * or `undefined` when the general path must compute it (the object is not a granular map at its
 * root, or a list repeats an item). `null` when the creator owns nothing (no entry at all).
 *
 * @param obj the created object, without `metadata.managedFields`.
 * @param atom the type of the object.
 * @param ignored fields the write resets (`status` when there is a status subresource), recursively.
 * @param stripped fields never owned by themselves (`apiVersion`, `metadata.name`…): their
 *   children stay owned.
 * @internal
 */
export function createdFieldsV1(
  obj: Obj,
  atom: Atom,
  ignored: FieldSet | undefined,
  stripped: FieldSet,
): Obj | null | undefined {
  if (handlerFor(atom, obj) !== 'map' || atom.map!.atomic) return undefined;
  let text: string | undefined;
  try {
    // The object before the create has `apiVersion` and `kind`: comparing them gives at most
    // the member itself, which is stripped; every other root field is new.
    text = mapChildren(obj, atom, ignored, stripped, true);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  return text === undefined ? null : treeOf(`{${text}}`);
}

/** The JSON members of a node's children, or `undefined` when it has none. */
function nodeChildren(
  v: unknown,
  atom: Atom,
  ignored: FieldSet | undefined,
  stripped: FieldSet | undefined,
): string | undefined {
  const h = handlerFor(atom, v);
  if (h === 'map') {
    if (atom.map!.atomic || !isObj(v)) return undefined;
    return mapChildren(v, atom, ignored, stripped, false);
  }
  if (h === 'list') {
    if (atom.list!.atomic || !Array.isArray(v) || v.length === 0) return undefined;
    return listChildren(v, atom, ignored, stripped);
  }
  return undefined;
}

function mapChildren(
  v: Obj,
  atom: Atom,
  ignored: FieldSet | undefined,
  stripped: FieldSet | undefined,
  root: boolean,
): string | undefined {
  const t = atom.map!;
  const keys = sortedKeys(t, Object.keys(v));
  if (keys.length === 0) return undefined;
  let out: string | undefined;
  for (const key of keys) {
    if (root && (key === 'apiVersion' || key === 'kind')) continue;
    const sub = entryAtom(t, key) ?? UNTYPED_LEAF;
    const entry = child(quotedField(key), key, v[key], sub, ignored, stripped);
    if (entry !== undefined) out = out === undefined ? entry : `${out},${entry}`;
  }
  return out;
}

/**
 * The last unsorted key list of a map type and its FieldsV1 order: objects of a kind mostly come
 * with their fields in the same order (a JSON body, then defaults), which then need no sort.
 */
const lastKeys = new WeakMap<object, { keys: string[]; sorted: string[] }>();

function sortedKeys(type: object, keys: string[]): readonly string[] {
  let i = 1;
  while (i < keys.length && compareStrings(keys[i - 1]!, keys[i]!) <= 0) i++;
  if (i >= keys.length) return keys;
  const last = lastKeys.get(type);
  if (last !== undefined && sameKeys(last.keys, keys)) return last.sorted;
  const sorted = [...keys].sort(compareStrings);
  lastKeys.set(type, { keys, sorted });
  return sorted;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function listChildren(
  v: readonly unknown[],
  atom: Atom,
  ignored: FieldSet | undefined,
  stripped: FieldSet | undefined,
): string | undefined {
  const t = atom.list!;
  const items: { pe: PathElement; value: unknown }[] = [];
  for (const value of v) {
    const pe = listItemElement(t, value);
    if (typeof pe !== 'string') items.push({ pe, value });
  }
  items.sort((a, b) => comparePathElements(a.pe, b.pe));
  for (let i = 1; i < items.length; i++) {
    // The general path keeps the first of equal items and merges what their fields own.
    if (comparePathElements(items[i - 1]!.pe, items[i]!.pe) === 0) throw new Unsupported();
  }
  const element = t.elementType();
  let out: string | undefined;
  for (const { pe, value } of items) {
    const entry = child(JSON.stringify(serializePathElement(pe)), pe, value, element, ignored, stripped);
    if (entry !== undefined) out = out === undefined ? entry : `${out},${entry}`;
  }
  return out;
}

/**
 * The JSON member of a child: `{}` for a leaf, `"."` then its children otherwise; `undefined`
 * when nothing of it is owned. `step` is the child's path element, or the name of a map field
 * (its element is only built when the ignored or stripped fields need it).
 */
function child(
  key: string,
  step: PathElement | string,
  value: unknown,
  atom: Atom,
  ignored: FieldSet | undefined,
  stripped: FieldSet | undefined,
): string | undefined {
  let ig: FieldSet | undefined;
  let st: FieldSet | undefined;
  let member = true;
  if (ignored || stripped) {
    const pe = typeof step === 'string' ? { field: step } : step;
    if (ignored) {
      if (ignored.hasMember(pe)) return undefined;
      ig = ignored.child(pe);
    }
    if (stripped) {
      member = !stripped.hasMember(pe);
      st = stripped.child(pe);
    }
  }
  const children = nodeChildren(value, atom, ig, st);
  if (children === undefined) return member ? `${key}:{}` : undefined;
  return member ? `${key}:{".":{},${children}}` : `${key}:{${children}}`;
}
