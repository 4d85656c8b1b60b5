/**
 * Field paths of structured-merge-diff (`fieldpath.PathElement`, `fieldpath.Path`): how one step
 * from a value to a child is named, ordered, printed (`.spec.containers[name="app"].image`) and
 * serialized in FieldsV1 (`f:spec`, `k:{"name":"app"}`, `v:"x"`, `i:0`).
 */
import {
  compareStrings,
  compareValues,
  goJson,
  goJsonString,
  isObj,
  valueEquals,
  valueToString,
} from './value.js';

/** One field of a list-map key: the key field's name and the item's value for it. */
export interface KeyField {
  readonly name: string;
  readonly value: unknown;
}

/**
 * One step of a field path: a field of a map or struct, the item of an associative list with
 * these key fields (sorted by name), the item of a set with this value, or an index.
 */
export type PathElement =
  | { readonly field: string }
  | { readonly key: readonly KeyField[] }
  | { readonly value: unknown }
  | { readonly index: number };

/** A path from the root of an object to one of its fields. */
export type Path = readonly PathElement[];

/** Which of the four kinds a path element is, in their sort order. */
function kindOf(pe: PathElement): number {
  if ('field' in pe) return 0;
  if ('key' in pe) return 1;
  if ('value' in pe) return 2;
  return 3;
}

/** Go's `FieldList.Compare`: field by field (name, then value), a shorter list first. */
function compareKeys(a: readonly KeyField[], b: readonly KeyField[]): number {
  for (let i = 0; ; i++) {
    if (i >= a.length && i >= b.length) return 0;
    if (i >= a.length) return -1;
    if (i >= b.length) return 1;
    const c = compareStrings(a[i]!.name, b[i]!.name);
    if (c !== 0) return c;
    const d = compareValues(a[i]!.value, b[i]!.value);
    if (d !== 0) return d;
  }
}

/** The order of `PathElement.Compare`: field names, then keys, values and indices. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka !== kb) return ka < kb ? -1 : 1;
  if ('field' in a) return compareStrings(a.field, (b as { field: string }).field);
  if ('key' in a) return compareKeys(a.key, (b as { key: readonly KeyField[] }).key);
  if ('value' in a) return compareValues(a.value, (b as { value: unknown }).value);
  const ia = a.index;
  const ib = (b as { index: number }).index;
  return ia < ib ? -1 : ia > ib ? 1 : 0;
}

/** Whether two path elements name the same child. */
export function pathElementEquals(a: PathElement, b: PathElement): boolean {
  if ('field' in a) return 'field' in b && a.field === b.field;
  if ('key' in a) {
    if (!('key' in b) || a.key.length !== b.key.length) return false;
    return a.key.every((f, i) => f.name === b.key[i]!.name && valueEquals(f.value, b.key[i]!.value));
  }
  if ('value' in a) return 'value' in b && valueEquals(a.value, b.value);
  return 'index' in b && a.index === b.index;
}

/** A key path element from key fields in any order (they are kept sorted by name). */
export function keyElement(fields: readonly KeyField[]): PathElement {
  return { key: [...fields].sort((x, y) => compareStrings(x.name, y.name)) };
}

/** `PathElement.String()`: `.name`, `[k=v,…]`, `[=value]`, `[3]`. */
export function pathElementString(pe: PathElement): string {
  if ('field' in pe) return `.${pe.field}`;
  if ('key' in pe) return `[${pe.key.map((f) => `${f.name}=${valueToString(f.value)}`).join(',')}]`;
  if ('value' in pe) return `[=${valueToString(pe.value)}]`;
  return `[${pe.index}]`;
}

/** `Path.String()`: the elements' strings joined, as in conflict messages (`.spec.replicas`). */
export function pathString(p: Path): string {
  return p.map(pathElementString).join('');
}

// The same few field names come back in every object of a kind: one string per name, so that the
// key is built (and internalized as a property key) once. Bounded: names can be arbitrary data keys.
const fieldKeys = new Map<string, string>();
const FIELD_KEYS_MAX = 4096;

function fieldKey(field: string): string {
  let k = fieldKeys.get(field);
  if (k === undefined) {
    if (fieldKeys.size >= FIELD_KEYS_MAX) fieldKeys.clear();
    k = `f:${field}`;
    fieldKeys.set(field, k);
  }
  return k;
}

/** The FieldsV1 key of a path element (`f:name`, `k:{"name":"x"}`, `v:1`, `i:0`). */
export function serializePathElement(pe: PathElement): string {
  if ('field' in pe) return fieldKey(pe.field);
  if ('key' in pe) return `k:{${pe.key.map((f) => `${goJsonString(f.name)}:${goJson(f.value)}`).join(',')}}`;
  if ('value' in pe) return `v:${goJson(pe.value)}`;
  return `i:${pe.index}`;
}

/** A FieldsV1 key whose prefix is none of `f:`, `k:`, `v:`, `i:` (ignored, as a newer format). */
export class UnknownPathElementType extends Error {}

/** Parses a FieldsV1 key; throws on a malformed one, {@link UnknownPathElementType} on an unknown kind. */
export function deserializePathElement(s: string): PathElement {
  if (s.length < 2) throw new Error('key must be 2 characters long:');
  if (s[1] !== ':') throw new Error(`missing colon: ${s}`);
  const rest = s.slice(2);
  switch (s[0]) {
    case 'f':
      return { field: rest };
    case 'v':
      return { value: JSON.parse(rest) as unknown };
    case 'k': {
      const parsed = JSON.parse(rest) as unknown;
      if (!isObj(parsed)) throw new Error(`expected an object key, got ${rest}`);
      return keyElement(Object.entries(parsed).map(([name, value]) => ({ name, value })));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(rest))
        throw new Error(`strconv.Atoi: parsing ${JSON.stringify(rest)}: invalid syntax`);
      return { index: Number(rest) };
    }
    default:
      throw new UnknownPathElementType('unknown path element type');
  }
}
