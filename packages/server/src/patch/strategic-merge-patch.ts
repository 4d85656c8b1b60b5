/**
 * Strategic merge patch (`application/strategic-merge-patch+json`), applied the way
 * kube-apiserver applies it: a port of `StrategicMergeMapPatch` from
 * `k8s.io/apimachinery/pkg/util/strategicpatch` (`mergeMap` and the functions it calls), with
 * the merge options the server uses (`MergeParallelList`, `IgnoreUnmatchedNulls`).
 *
 * In short:
 * - maps merge recursively and `null` deletes a key;
 * - a list whose field has strategy `merge` is merged element by element on its merge key
 *   (containers by `name`), or, for scalars, unioned; every other list is replaced;
 * - directives: `$patch: replace|delete` on a map or a list element, `$retainKeys`,
 *   `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`;
 * - the order of merged lists follows Go's algorithm exactly, including its use of
 *   `sort.SliceStable` with a comparator that is not a strict ordering.
 *
 * The port follows the library as shipped with Kubernetes 1.32, including its later fixes: a
 * `$deleteFromPrimitiveList` never adds the list and deletes whatever the field's strategy, and
 * values added wholesale lose their `null`s and the maps carrying `$patch`.
 *
 * A field the {@link PatchMeta} does not describe has no strategy, so it merges like a JSON merge
 * patch (maps merge, lists are replaced). The Go code fails on such fields when both sides hold
 * a map or a list there; built-in objects never have unknown fields, so the difference only
 * shows in free-form fields (`RawExtension`), where merging is the friendlier answer.
 *
 * The Go server decodes the patched map into the typed object, which drops any directive key
 * still left in the result (under a `$patch: replace`, a `replace` strategy or a new value);
 * here they are stripped instead, and only from objects that came from the patch.
 */
import { patchBadRequest, patchInternal } from './errors.js';
import {
  cloneJson,
  deleteOwn,
  getOwn,
  goEqual,
  goSprint,
  hasOwn,
  isObj,
  jsonKindName,
  type Obj,
  setOwn,
} from './json-value.js';
import type { PatchMeta } from './patch-meta.js';
import {
  badArgType,
  badPatchType,
  collectObjects,
  containsDirectiveMarker,
  DELETE_DIRECTIVE,
  DELETE_FROM_PRIMITIVE_LIST_PREFIX,
  DIRECTIVE_MARKER,
  ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS,
  extractKey,
  extractRetainKeysPatchStrategy,
  extractToDeleteItems,
  GO_MAP,
  GO_SLICE,
  goKind,
  MERGE_DIRECTIVE,
  mergeKeyValueEqual,
  noMergeKey,
  REPLACE_DIRECTIVE,
  RETAIN_KEYS_DIRECTIVE,
  removeDirectives,
  SET_ELEMENT_ORDER_PREFIX,
  sliceElementType,
  stripDirectives,
  takePatchValue,
} from './smp-helpers.js';
import { normalizeElementOrder } from './smp-ordering.js';

/**
 * Applies a strategic merge patch to `original` and returns the result; neither input is
 * modified.
 *
 * @param original - the current object, as JSON.
 * @param patch - the parsed request body.
 * @param meta - the patch metadata of the object's kind (see `patchMetaForDefinition`);
 *   `undefined` merges every field like a JSON merge patch, directives still apply.
 * @throws ApiError 400 for a body that is not an object or a malformed directive, 422 for a
 *   list of lists, 500 (no reason, the library's message) for the other failures, exactly like
 *   kube-apiserver (for example a list element without its merge key).
 *
 * @example
 * ```ts
 * const meta = patchMetaForDefinition('io.k8s.api.apps.v1.Deployment');
 * applyStrategicMergePatch(deployment, {
 *   spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } } },
 * }, meta);
 * // → the deployment with only the `app` container's image changed
 * ```
 */
export function applyStrategicMergePatch(
  original: unknown,
  patch: unknown,
  meta: PatchMeta | undefined,
): unknown {
  // A `null` body decodes into a nil map, which merges as an empty patch.
  if (patch === null) return cloneJson(original);
  if (!isObj(patch)) {
    throw patchBadRequest(`json: cannot unmarshal ${jsonKindName(patch)} into Go value of type ${GO_MAP}`);
  }
  const work = cloneJson(patch);
  const fromPatch = new WeakSet<object>();
  collectObjects(work, fromPatch);
  const result = mergeMap(isObj(original) ? cloneJson(original) : undefined, work, meta);
  stripDirectives(result, fromPatch);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Maps

function mergeMap(original: Obj | undefined, patch: Obj, meta: PatchMeta | undefined): Obj {
  if (hasOwn(patch, DIRECTIVE_MARKER)) return handleDirectiveInMergeMap(patch[DIRECTIVE_MARKER], patch);
  const doc = original ?? {};
  applyRetainKeysDirective(doc, patch);
  mergePatchIntoOriginal(doc, patch, meta);

  for (const [patchKey, patchValue] of Object.entries(patch)) {
    let key = patchKey;
    let isDeleteList = false;
    if (patchKey.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)) {
      const originalKey = extractKey(patchKey, DELETE_FROM_PRIMITIVE_LIST_PREFIX);
      isDeleteList = true;
      if (originalKey.length > 0) key = originalKey;
    }
    if (patchValue === null) {
      deleteOwn(doc, key);
      continue;
    }
    // A deletion list never adds the field it deletes from.
    if (!hasOwn(doc, key)) {
      if (!isDeleteList) takePatchValue(doc, key, patchValue);
      continue;
    }
    const current = doc[key];
    const kind = goKind(current);
    if (kind !== goKind(patchValue)) {
      if (!isDeleteList) takePatchValue(doc, key, patchValue);
      continue;
    }
    if (kind === 'map') {
      const sub = meta?.field(key);
      const [, strategy] = extractRetainKeysPatchStrategy(sub);
      setOwn(
        doc,
        key,
        strategy === REPLACE_DIRECTIVE ? patchValue : mergeMap(current as Obj, patchValue as Obj, sub),
      );
    } else if (kind === 'slice') {
      const sub = meta?.field(key);
      const [, strategy] = extractRetainKeysPatchStrategy(sub);
      // A deletion list deletes whatever the field's strategy.
      const merged =
        strategy === MERGE_DIRECTIVE || isDeleteList
          ? mergeSlice(
              current as unknown[],
              patchValue as unknown[],
              sub?.items(),
              sub?.mergeKey ?? '',
              isDeleteList,
            ).merged
          : patchValue;
      setOwn(doc, key, merged);
    } else {
      setOwn(doc, key, patchValue);
    }
  }
  return doc;
}

function handleDirectiveInMergeMap(directive: unknown, patch: Obj): Obj {
  if (directive === REPLACE_DIRECTIVE) {
    // The rest of the map is taken as it is, without looking at nested directives.
    deleteOwn(patch, DIRECTIVE_MARKER);
    return patch;
  }
  if (directive === DELETE_DIRECTIVE) return {};
  throw patchInternal(badPatchType(directive, patch));
}

/** `$retainKeys`: drop every key of the original not listed; the patch may only set listed keys. */
function applyRetainKeysDirective(original: Obj, patch: Obj): void {
  if (!hasOwn(patch, RETAIN_KEYS_DIRECTIVE)) return;
  const retainKeys = patch[RETAIN_KEYS_DIRECTIVE];
  deleteOwn(patch, RETAIN_KEYS_DIRECTIVE);
  if (!Array.isArray(retainKeys)) throw patchBadRequest(ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS);
  const retained = (key: string) => retainKeys.some((k) => goEqual(k, key));
  for (const [key, value] of Object.entries(patch)) {
    if (
      value === null ||
      key.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX) ||
      key.startsWith(SET_ELEMENT_ORDER_PREFIX)
    ) {
      continue;
    }
    if (!retained(key)) throw patchBadRequest(ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS);
  }
  for (const key of Object.keys(original)) if (!retained(key)) deleteOwn(original, key);
}

/**
 * `$setElementOrder/<field>`: merges the field's list now (original and patch) and orders the
 * result: the directive's order first, then the patch's, then the live object's.
 */
function mergePatchIntoOriginal(original: Obj, patch: Obj, meta: PatchMeta | undefined): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(SET_ELEMENT_ORDER_PREFIX) || !hasOwn(patch, directiveKey)) continue;
    const setElementOrder = patch[directiveKey];
    deleteOwn(patch, directiveKey);
    if (!Array.isArray(setElementOrder)) throw patchInternal(badArgType(GO_SLICE, setElementOrder));
    const key = extractKey(directiveKey, SET_ELEMENT_ORDER_PREFIX);

    const foundOriginal = hasOwn(original, key);
    const foundPatch = hasOwn(patch, key);
    const originalList = getOwn(original, key);
    const patchList = getOwn(patch, key);
    if (foundOriginal && !Array.isArray(originalList))
      throw patchInternal(badArgType(GO_SLICE, originalList));
    if (foundPatch && !Array.isArray(patchList)) throw patchInternal(badArgType(GO_SLICE, patchList));
    const originalItems = (foundOriginal ? originalList : []) as unknown[];
    const patchItemsIn = (foundPatch ? patchList : []) as unknown[];

    const sub = meta?.field(key);
    const [, strategy] = extractRetainKeysPatchStrategy(sub);
    const mergeKey = sub?.mergeKey ?? '';
    validatePatchWithSetOrderList(patchItemsIn, setElementOrder, mergeKey);

    let merged: unknown[];
    // What Go still reads through its slice of the original list once the merge has written
    // into the array behind it (see mergeSlice).
    let originalSeen = originalItems;
    if (foundOriginal && !foundPatch) {
      merged = originalItems;
    } else if (!foundOriginal && foundPatch) {
      merged = removeDirectives(patchItemsIn)[0] as unknown[];
    } else if (foundOriginal && foundPatch) {
      if (strategy === MERGE_DIRECTIVE) {
        ({ merged, originalSeen } = mergeSlice(originalItems, patchItemsIn, sub?.items(), mergeKey, false));
      } else {
        merged = patchItemsIn;
      }
    } else {
      continue;
    }

    const [patchItems, serverOnlyItems] =
      mergeKey.length === 0
        ? partitionPrimitivesByPresentInList(merged, setElementOrder)
        : partitionMapsByPresentInList(merged, setElementOrder, mergeKey);
    const kind = sliceElementType([originalSeen, patchItemsIn]);
    setOwn(
      original,
      key,
      normalizeElementOrder(patchItems, serverOnlyItems, setElementOrder, originalSeen, mergeKey, kind),
    );
    deleteOwn(patch, key);
  }
}

/** Checks that the patch list's items appear in the `$setElementOrder` list, in its order. */
function validatePatchWithSetOrderList(
  patchList: unknown[],
  setOrderList: unknown[],
  mergeKey: string,
): void {
  if (setOrderList.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey.length > 0 ? extractToDeleteItems(patchList)[0] : patchList;
  let patchIndex = 0;
  let setOrderIndex = 0;
  while (patchIndex < nonDelete.length && setOrderIndex < setOrderList.length) {
    if (containsDirectiveMarker(nonDelete[patchIndex])) {
      patchIndex++;
      continue;
    }
    if (mergeKeyValueEqual(nonDelete[patchIndex], setOrderList[setOrderIndex], mergeKey)) patchIndex++;
    setOrderIndex++;
  }
  if (patchIndex < nonDelete.length && setOrderIndex >= setOrderList.length) {
    throw patchInternal(
      `The order in patch list:\n${goSprint(patchList)}\n doesn't match ${SET_ELEMENT_ORDER_PREFIX} list:\n${goSprint(setOrderList)}\n`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Lists

/** A merged list, and the original list as the caller's Go slice header sees it afterwards. */
interface SliceMerge {
  merged: unknown[];
  originalSeen: unknown[];
}

/**
 * Merges two lists. Go deletes and appends in place in the array behind the original list, as
 * long as its capacity lasts, and `$setElementOrder` later orders by that same array through the
 * original (longer) slice header: the result depends on it, so `backing` replays those writes.
 * Objects reach the patch engine deep-copied (the apiserver's watch cache copies them), so the
 * capacity of every original list equals its length.
 */
function mergeSlice(
  original: unknown[],
  patch: unknown[],
  elementMeta: PatchMeta | undefined,
  mergeKey: string,
  isDeleteList: boolean,
): SliceMerge {
  if (original.length === 0 && patch.length === 0) return { merged: original, originalSeen: original };
  const kind = sliceElementType([original, patch]);
  const backing = original.slice();
  let base: unknown[];
  let patchItems = patch;
  let merged: unknown[];
  if (kind !== 'map') {
    if (isDeleteList) return { merged: deleteFromSlice(original, patch), originalSeen: backing };
    // `append(original, patch...)` reuses the original array only when nothing is appended.
    merged =
      patch.length === 0 ? deduplicateScalars(backing, backing) : deduplicateScalars([...original, ...patch]);
    base = backing;
  } else {
    if (mergeKey === '') throw patchInternal('cannot merge lists without merge key for struct');
    const special = mergeSliceWithSpecialElements(backing, patch, mergeKey);
    base = special.base;
    patchItems = special.patch;
    merged = mergeSliceWithoutSpecialElements(
      base,
      patchItems,
      mergeKey,
      elementMeta,
      special.replaced ? undefined : backing,
    );
  }
  const [inPatch, serverOnly] =
    mergeKey.length === 0
      ? partitionPrimitivesByPresentInList(merged, patchItems)
      : partitionMapsByPresentInList(merged, patchItems, mergeKey);
  return {
    merged: normalizeElementOrder(inPatch, serverOnly, patchItems, base, mergeKey, kind),
    originalSeen: backing,
  };
}

/**
 * Handles list elements carrying `$patch`: `delete` removes every original element with that
 * merge key value (shifting the rest down in `backing`, like Go's in-place `append`), `replace`
 * makes the patch's other elements the whole list.
 */
function mergeSliceWithSpecialElements(
  backing: unknown[],
  patch: unknown[],
  mergeKey: string,
): { base: unknown[]; patch: unknown[]; replaced: boolean } {
  const plain: unknown[] = [];
  let replace = false;
  let length = backing.length;
  for (const item of patch) {
    const element = item as Obj;
    if (!hasOwn(element, DIRECTIVE_MARKER)) {
      plain.push(item);
      continue;
    }
    const directive = element[DIRECTIVE_MARKER];
    if (directive === DELETE_DIRECTIVE) {
      if (!hasOwn(element, mergeKey)) throw patchInternal(noMergeKey(element, mergeKey));
      const value = element[mergeKey];
      for (;;) {
        const found = findMapInSliceBasedOnKeyValue(backing.slice(0, length), mergeKey, value);
        if (found < 0) break;
        for (let i = found; i < length - 1; i++) backing[i] = backing[i + 1];
        length--;
      }
    } else if (directive === REPLACE_DIRECTIVE) {
      replace = true;
    } else if (directive === MERGE_DIRECTIVE) {
      throw patchInternal('merging lists cannot yet be specified in the patch');
    } else {
      throw patchInternal(badPatchType(directive, element));
    }
  }
  if (replace) return { base: plain, patch: [], replaced: true };
  return { base: backing.slice(0, length), patch: plain, replaced: false };
}

/**
 * Merges each patch element into the element with the same merge key, or appends it. While
 * `backing` (the original's array) has room, Go's `append` writes into it.
 */
function mergeSliceWithoutSpecialElements(
  base: unknown[],
  patch: unknown[],
  mergeKey: string,
  elementMeta: PatchMeta | undefined,
  backing: unknown[] | undefined,
): unknown[] {
  const result = base.slice();
  let inPlace = backing !== undefined;
  for (const item of patch) {
    const element = item as Obj;
    if (!hasOwn(element, mergeKey)) throw patchInternal(noMergeKey(element, mergeKey));
    const index = findMapInSliceBasedOnKeyValue(result, mergeKey, element[mergeKey]);
    if (index >= 0) {
      result[index] = mergeMap(result[index] as Obj, element, elementMeta);
      continue;
    }
    if (inPlace && backing !== undefined && result.length < backing.length) backing[result.length] = item;
    else inPlace = false;
    result.push(item);
  }
  return result;
}

function deleteFromSlice(current: unknown[], toDelete: unknown[]): unknown[] {
  return current.filter((value) => !toDelete.some((d) => goEqual(d, value)));
}

/**
 * Go's in-place de-duplication, kept as is because it moves the last element into each hole;
 * it writes into `target` (a copy of `values` unless given).
 */
function deduplicateScalars(values: unknown[], target: unknown[] = values.slice()): unknown[] {
  const s = target;
  let length = s.length - 1;
  let size = s.length;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (goEqual(s[i], s[j])) {
        s[j] = s[length];
        size = length;
        length--;
        j--;
      }
    }
  }
  return s.slice(0, size);
}

function findMapInSliceBasedOnKeyValue(list: unknown[], key: string, value: unknown): number {
  for (const [index, item] of list.entries()) {
    if (!isObj(item)) throw patchInternal(`value for key ${index} is not a map`);
    if (hasOwn(item, key) && goEqual(item[key], value)) return index;
  }
  return -1;
}

function partitionPrimitivesByPresentInList(list: unknown[], partitionBy: unknown[]): [unknown[], unknown[]] {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const value of list) (partitionBy.some((p) => goEqual(p, value)) ? inPatch : serverOnly).push(value);
  return [inPatch, serverOnly];
}

function partitionMapsByPresentInList(
  list: unknown[],
  partitionBy: unknown[],
  mergeKey: string,
): [unknown[], unknown[]] {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const value of list) {
    if (!isObj(value)) throw patchInternal(badArgType(GO_MAP, value));
    if (!hasOwn(value, mergeKey)) throw patchInternal(noMergeKey(value, mergeKey));
    const found = findMapInSliceBasedOnKeyValue(partitionBy, mergeKey, value[mergeKey]) >= 0;
    (found ? inPatch : serverOnly).push(value);
  }
  return [inPatch, serverOnly];
}
