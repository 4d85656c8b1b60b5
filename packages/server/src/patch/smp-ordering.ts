import { getOwn, goEqual, isObj } from './json-value.js';
import { extractToDeleteItems, type GoKind, validateMergeKeyInLists } from './smp-helpers.js';

// ---------------------------------------------------------------------------------------------
// Ordering

/**
 * Sorts the patch's items by `patchOrder` and the server-only items by `serverOrder`, then
 * interleaves them, keeping each side's relative order.
 */
export function normalizeElementOrder(
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
export function index(list: unknown[], value: unknown, mergeKey: string, kind: GoKind): number {
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
