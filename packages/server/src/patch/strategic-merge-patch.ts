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
import { patchBadRequest, patchInternal, patchUnprocessable } from './errors.js';
import {
  cloneJson,
  deleteOwn,
  getOwn,
  goEqual,
  goSprint,
  goSprintS,
  goTypeName,
  hasOwn,
  isObj,
  jsonKindName,
  type Obj,
  setOwn,
} from './json-value.js';
import type { PatchMeta } from './patch-meta.js';

const DIRECTIVE_MARKER = '$patch';
const DELETE_DIRECTIVE = 'delete';
const REPLACE_DIRECTIVE = 'replace';
const MERGE_DIRECTIVE = 'merge';
const RETAIN_KEYS_STRATEGY = 'retainKeys';
const RETAIN_KEYS_DIRECTIVE = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST_PREFIX = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER_PREFIX = '$setElementOrder';

// Sentinel errors of k8s.io/apimachinery/pkg/util/mergepatch that the apiserver turns into 400.
const ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST = 'invalid patch format of primitive list';
const ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS = 'invalid patch format of retainKeys';
const ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER_LIST = 'invalid patch format of setElementOrder list';

const GO_MAP = 'map[string]interface {}';
const GO_SLICE = '[]interface {}';

/** The Go kind of a decoded JSON value, as `reflect` sees it. */
type GoKind = 'map' | 'slice' | 'string' | 'bool' | 'int64' | 'float64' | 'nil';

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

// ---------------------------------------------------------------------------------------------
// Ordering

/**
 * Sorts the patch's items by `patchOrder` and the server-only items by `serverOrder`, then
 * interleaves them, keeping each side's relative order.
 */
function normalizeElementOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: GoKind,
): unknown[] {
  const sortedPatch = normalizeSliceOrder(patchItems, patchOrder, mergeKey, kind);
  const sortedServer = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(sortedServer, sortedPatch, serverOrder, mergeKey, kind);
}

function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: GoKind): unknown[] {
  let items = toSort;
  let toDelete: unknown[] = [];
  if (kind === 'map') {
    validateMergeKeyInLists(mergeKey, [toSort, order]);
    [items, toDelete] = extractToDeleteItems(toSort);
  }
  const sorted = items.slice();
  // Not a strict weak ordering (anything absent from `order` is "less"): only Go's exact
  // algorithm yields Go's result.
  goSliceStable(sorted, (a, b) => {
    const ia = index(order, a, mergeKey, kind);
    if (ia >= 0) {
      const ib = index(order, b, mergeKey, kind);
      if (ib >= 0) return ia < ib;
    }
    return true;
  });
  return [...sorted, ...toDelete];
}

function mergeSortedSlice(
  left: unknown[],
  right: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: GoKind,
): unknown[] {
  const less = (l: unknown, r: unknown): [boolean, boolean] => {
    const li = index(serverOrder, l, mergeKey, kind);
    const ri = index(serverOrder, r, mergeKey, kind);
    return li >= 0 && ri >= 0 ? [li < ri, true] : [false, false];
  };
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  const size = left.length + right.length;
  for (let k = 0; k < size; k++) {
    if (i >= left.length && j < right.length) {
      out.push(right[j++]);
    } else if (j >= right.length && i < left.length) {
      out.push(left[i++]);
    } else {
      const [isLess, foundBoth] = less(left[i], right[j]);
      out.push(foundBoth && isLess ? left[i++] : right[j++]);
    }
  }
  return out;
}

/** Index of `value` in `list`, comparing merge key values for maps and values otherwise. */
function index(list: unknown[], value: unknown, mergeKey: string, kind: GoKind): number {
  const keyOf = (item: unknown): unknown => {
    if (kind !== 'map') return item;
    return isObj(item) ? (getOwn(item, mergeKey) ?? null) : null;
  };
  const wanted = keyOf(value);
  return list.findIndex((item) => goEqual(wanted, keyOf(item)));
}

/** Go's `sort.SliceStable`: insertion sort on blocks of 20, then in-place SymMerge. */
function goSliceStable<T>(data: T[], less: (a: T, b: T) => boolean): void {
  const lessAt = (i: number, j: number) => less(data[i] as T, data[j] as T);
  const swap = (i: number, j: number) => {
    const t = data[i] as T;
    data[i] = data[j] as T;
    data[j] = t;
  };
  const insertionSort = (a: number, b: number) => {
    for (let i = a + 1; i < b; i++) {
      for (let j = i; j > a && lessAt(j, j - 1); j--) swap(j, j - 1);
    }
  };
  const swapRange = (a: number, b: number, n: number) => {
    for (let i = 0; i < n; i++) swap(a + i, b + i);
  };
  const rotate = (a: number, m: number, b: number) => {
    let i = m - a;
    let j = b - m;
    while (i !== j) {
      if (i > j) {
        swapRange(m - i, m, j);
        i -= j;
      } else {
        swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    swapRange(m - i, m, i);
  };
  const symMerge = (a: number, m: number, b: number): void => {
    if (m - a === 1) {
      let i = m;
      let j = b;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (lessAt(h, a)) i = h + 1;
        else j = h;
      }
      for (let k = a; k < i - 1; k++) swap(k, k + 1);
      return;
    }
    if (b - m === 1) {
      let i = a;
      let j = m;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (!lessAt(m, h)) i = h + 1;
        else j = h;
      }
      for (let k = m; k > i; k--) swap(k, k - 1);
      return;
    }
    const mid = (a + b) >>> 1;
    const n = mid + m;
    let start: number;
    let r: number;
    if (m > mid) {
      start = n - b;
      r = mid;
    } else {
      start = a;
      r = m;
    }
    const p = n - 1;
    while (start < r) {
      const c = (start + r) >>> 1;
      if (!lessAt(p - c, c)) start = c + 1;
      else r = c;
    }
    const end = n - start;
    if (start < m && m < end) rotate(start, m, end);
    if (a < start && start < mid) symMerge(a, start, mid);
    if (mid < end && end < b) symMerge(mid, end, b);
  };

  const n = data.length;
  let blockSize = 20;
  let a = 0;
  let b = blockSize;
  while (b <= n) {
    insertionSort(a, b);
    a = b;
    b += blockSize;
  }
  insertionSort(a, n);
  while (blockSize < n) {
    a = 0;
    b = 2 * blockSize;
    while (b <= n) {
      symMerge(a, a + blockSize, b);
      a = b;
      b += 2 * blockSize;
    }
    const m = a + blockSize;
    if (m < n) symMerge(a, m, n);
    blockSize *= 2;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

function validateMergeKeyInLists(mergeKey: string, lists: unknown[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isObj(item)) throw patchInternal(badArgType(GO_MAP, item));
      if (!hasOwn(item, mergeKey)) throw patchInternal(noMergeKey(item, mergeKey));
    }
  }
}

/** Splits a list of maps into the elements to keep and those carrying `$patch: delete`. */
function extractToDeleteItems(list: unknown[]): [unknown[], unknown[]] {
  const keep: unknown[] = [];
  const toDelete: unknown[] = [];
  for (const item of list) {
    if (!isObj(item)) throw patchInternal(badArgType(GO_MAP, item));
    (getOwn(item, DIRECTIVE_MARKER) === DELETE_DIRECTIVE ? toDelete : keep).push(item);
  }
  return [keep, toDelete];
}

function containsDirectiveMarker(item: unknown): boolean {
  return isObj(item) && hasOwn(item, DIRECTIVE_MARKER);
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey.length === 0) return goEqual(left, right);
  if (!isObj(left)) throw patchInternal(badArgType(GO_MAP, left));
  if (!isObj(right)) throw patchInternal(badArgType(GO_MAP, right));
  if (!hasOwn(left, mergeKey)) throw patchInternal(noMergeKey(left, mergeKey));
  if (!hasOwn(right, mergeKey)) throw patchInternal(noMergeKey(right, mergeKey));
  return goEqual(left[mergeKey], right[mergeKey]);
}

/** The field a `$deleteFromPrimitiveList/<field>` or `$setElementOrder/<field>` key is about. */
function extractKey(key: string, prefix: string): string {
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
function extractRetainKeysPatchStrategy(meta: PatchMeta | undefined): [boolean, string] {
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
function sliceElementType(lists: unknown[][]): GoKind {
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

function goKind(value: unknown): GoKind {
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

function badArgType(expected: string, actual: unknown): string {
  return `expected a ${expected}, but received a ${goTypeName(actual)}`;
}

function noMergeKey(map: Obj, mergeKey: string): string {
  return `map: ${goSprint(map)} does not contain declared merge key: ${mergeKey}`;
}

function badPatchType(directive: unknown, map: Obj): string {
  return `unknown patch type: ${goSprintS(directive)} in map: ${goSprint(map)}`;
}

/**
 * Takes a patch value for a field the original lacks (or holds with another type): nulls inside
 * it are dropped, and maps carrying `$patch` are left out, as they are meaningless there.
 */
function takePatchValue(doc: Obj, key: string, value: unknown): void {
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
function removeDirectives(value: unknown): [unknown, boolean] {
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

function collectObjects(value: unknown, into: WeakSet<object>): void {
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
function stripDirectives(value: unknown, fromPatch: WeakSet<object>): void {
  if (Array.isArray(value)) {
    for (const item of value) stripDirectives(item, fromPatch);
  } else if (isObj(value)) {
    if (fromPatch.has(value)) {
      for (const key of Object.keys(value)) if (isDirectiveKey(key)) deleteOwn(value, key);
    }
    for (const item of Object.values(value)) stripDirectives(item, fromPatch);
  }
}
