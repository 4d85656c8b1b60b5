/**
 * The directives, sentinel errors and value helpers of strategic merge patch
 * (k8s.io/apimachinery/pkg/util/strategicpatch), shared by the merge and the ordering.
 */
import { patchBadRequest, patchInternal, patchUnprocessable } from './errors.js';
import {
  deleteOwn,
  getOwn,
  goEqual,
  goSprint,
  goSprintS,
  goTypeName,
  hasOwn,
  isObj,
  type Obj,
  setOwn,
} from './json-value.js';
import type { PatchMeta } from './patch-meta.js';

export const DIRECTIVE_MARKER = '$patch';
export const DELETE_DIRECTIVE = 'delete';
export const REPLACE_DIRECTIVE = 'replace';
export const MERGE_DIRECTIVE = 'merge';
const RETAIN_KEYS_STRATEGY = 'retainKeys';
export const RETAIN_KEYS_DIRECTIVE = '$retainKeys';
export const DELETE_FROM_PRIMITIVE_LIST_PREFIX = '$deleteFromPrimitiveList';
export const SET_ELEMENT_ORDER_PREFIX = '$setElementOrder';

// Sentinel errors of k8s.io/apimachinery/pkg/util/mergepatch that the apiserver turns into 400.
const ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST = 'invalid patch format of primitive list';
export const ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS = 'invalid patch format of retainKeys';
const ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER_LIST = 'invalid patch format of setElementOrder list';

export const GO_MAP = 'map[string]interface {}';
export const GO_SLICE = '[]interface {}';

/** The Go kind of a decoded JSON value, as `reflect` sees it. */
export type GoKind = 'map' | 'slice' | 'string' | 'bool' | 'int64' | 'float64' | 'nil';
// ---------------------------------------------------------------------------------------------
// Helpers

export function validateMergeKeyInLists(mergeKey: string, lists: unknown[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isObj(item)) throw patchInternal(badArgType(GO_MAP, item));
      if (!hasOwn(item, mergeKey)) throw patchInternal(noMergeKey(item, mergeKey));
    }
  }
}

/** Splits a list of maps into the elements to keep and those carrying `$patch: delete`. */
export function extractToDeleteItems(list: unknown[]): [unknown[], unknown[]] {
  const keep: unknown[] = [];
  const toDelete: unknown[] = [];
  for (const item of list) {
    if (!isObj(item)) throw patchInternal(badArgType(GO_MAP, item));
    (getOwn(item, DIRECTIVE_MARKER) === DELETE_DIRECTIVE ? toDelete : keep).push(item);
  }
  return [keep, toDelete];
}

export function containsDirectiveMarker(item: unknown): boolean {
  return isObj(item) && hasOwn(item, DIRECTIVE_MARKER);
}

export function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey.length === 0) return goEqual(left, right);
  if (!isObj(left)) throw patchInternal(badArgType(GO_MAP, left));
  if (!isObj(right)) throw patchInternal(badArgType(GO_MAP, right));
  if (!hasOwn(left, mergeKey)) throw patchInternal(noMergeKey(left, mergeKey));
  if (!hasOwn(right, mergeKey)) throw patchInternal(noMergeKey(right, mergeKey));
  return goEqual(left[mergeKey], right[mergeKey]);
}

/** The field a `$deleteFromPrimitiveList/<field>` or `$setElementOrder/<field>` key is about. */
export function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw patchBadRequest(
      prefix === DELETE_FROM_PRIMITIVE_LIST_PREFIX
        ? ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST
        : ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER_LIST,
    );
  }
  return key.slice(slash + 1);
}

/** Splits `merge,retainKeys` into (has retainKeys, the other strategy). */
export function extractRetainKeysPatchStrategy(meta: PatchMeta | undefined): [boolean, string] {
  const strategies = meta?.strategy === undefined ? [] : meta.strategy.split(',');
  const [first = '', second = ''] = strategies;
  switch (strategies.length) {
    case 0:
      return [false, ''];
    case 1:
      return first === RETAIN_KEYS_STRATEGY ? [true, ''] : [false, first];
    case 2:
      if (first === RETAIN_KEYS_STRATEGY) return [true, second];
      if (second === RETAIN_KEYS_STRATEGY) return [true, first];
      break;
  }
  throw patchInternal(`unexpected patch strategy: ${goSprint(strategies)}`);
}

/** The element kind shared by all the lists' items; lists of lists are refused (422). */
export function sliceElementType(lists: unknown[][]): GoKind {
  let previous: GoKind | undefined;
  for (const list of lists) {
    for (const item of list) {
      const kind = goKind(item);
      if (previous === undefined) {
        // Go calls a method on the nil reflect.Type of a null element and panics.
        if (kind === 'nil')
          throw patchInternal('This request caused apiserver to panic. Look in the logs for details.');
        if (kind === 'slice') throw patchUnprocessable();
        previous = kind;
      } else if (previous !== kind) {
        throw patchInternal(`list element types are not identical: ${goSprint(lists)}`);
      }
    }
  }
  if (previous === undefined) throw patchInternal('no elements in any of the given slices');
  return previous;
}

export function goKind(value: unknown): GoKind {
  if (value === null || value === undefined) return 'nil';
  if (Array.isArray(value)) return 'slice';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(value) ? 'int64' : 'float64';
    default:
      return 'map';
  }
}

export function badArgType(expected: string, actual: unknown): string {
  return `expected a ${expected}, but received a ${goTypeName(actual)}`;
}

export function noMergeKey(map: Obj, mergeKey: string): string {
  return `map: ${goSprint(map)} does not contain declared merge key: ${mergeKey}`;
}

export function badPatchType(directive: unknown, map: Obj): string {
  return `unknown patch type: ${goSprintS(directive)} in map: ${goSprint(map)}`;
}

/**
 * Takes a patch value for a field the original lacks (or holds with another type): nulls inside
 * it are dropped, and maps carrying `$patch` are left out, as they are meaningless there.
 */
export function takePatchValue(doc: Obj, key: string, value: unknown): void {
  discardNullValuesFromPatch(value);
  const [kept, keep] = removeDirectives(value);
  if (keep) setOwn(doc, key, kept);
  else deleteOwn(doc, key);
}

function discardNullValuesFromPatch(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) discardNullValuesFromPatch(item);
  } else if (isObj(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (v === null) deleteOwn(value, k);
      else discardNullValuesFromPatch(v);
    }
  }
}

/** Drops every map holding `$patch` (and the list elements that are such maps). */
export function removeDirectives(value: unknown): [unknown, boolean] {
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    for (const item of value) {
      const [v, keep] = removeDirectives(item);
      if (keep) kept.push(v);
    }
    return [kept, true];
  }
  if (isObj(value)) {
    if (hasOwn(value, DIRECTIVE_MARKER)) return [undefined, false];
    for (const [k, v] of Object.entries(value)) {
      const [kept, keep] = removeDirectives(v);
      if (keep) setOwn(value, k, kept);
      else deleteOwn(value, k);
    }
  }
  return [value, true];
}

export function collectObjects(value: unknown, into: WeakSet<object>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectObjects(item, into);
  } else if (isObj(value)) {
    into.add(value);
    for (const item of Object.values(value)) collectObjects(item, into);
  }
}

function isDirectiveKey(key: string): boolean {
  return (
    key === DIRECTIVE_MARKER ||
    key === RETAIN_KEYS_DIRECTIVE ||
    key.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX) ||
    key.startsWith(SET_ELEMENT_ORDER_PREFIX)
  );
}

/** Removes directive keys left in objects that came from the patch. */
export function stripDirectives(value: unknown, fromPatch: WeakSet<object>): void {
  if (Array.isArray(value)) {
    for (const item of value) stripDirectives(item, fromPatch);
  } else if (isObj(value)) {
    if (fromPatch.has(value)) {
      for (const key of Object.keys(value)) if (isDirectiveKey(key)) deleteOwn(value, key);
    }
    for (const item of Object.values(value)) stripDirectives(item, fromPatch);
  }
}
