/**
 * Test cases ported from k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go, applied
 * the way the Go tests apply them: `twoWay` to `original` gives `twoWayResult` (or
 * `modified`), `threeWay` to `current` gives `result`. The schema mirrors the Go test's
 * `MergeItem` struct tags.
 */
import { isBadRequest } from 'kubeloop/api';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { patchMetaFromSchema } from './patch-meta.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

const ref = (name: string) => ({ $ref: `#/definitions/${name}` });
const definitions: Record<string, unknown> = {
  mergeItem: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      value: { type: 'string' },
      other: { type: 'string' },
      mergingList: {
        type: 'array',
        items: ref('mergeItem'),
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-patch-merge-key': 'name',
      },
      nonMergingList: { type: 'array', items: ref('mergeItem') },
      mergingIntList: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-patch-strategy': 'merge' },
      nonMergingIntList: { type: 'array', items: { type: 'integer' } },
      mergeItemPtr: {
        type: 'array',
        items: ref('mergeItem'),
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-patch-merge-key': 'name',
      },
      simpleMap: { type: 'object', additionalProperties: { type: 'string' } },
      replacingItem: { type: 'object', 'x-kubernetes-patch-strategy': 'replace' },
      retainKeysMap: { ...ref('retainKeysMergeItem'), 'x-kubernetes-patch-strategy': 'retainKeys' },
      retainKeysMergingList: {
        type: 'array',
        items: ref('mergeItem'),
        'x-kubernetes-patch-strategy': 'merge,retainKeys',
        'x-kubernetes-patch-merge-key': 'name',
      },
    },
  },
  retainKeysMergeItem: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      value: { type: 'string' },
      other: { type: 'string' },
      simpleMap: { type: 'object', additionalProperties: { type: 'string' } },
      mergingIntList: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-patch-strategy': 'merge' },
      mergingList: {
        type: 'array',
        items: ref('mergeItem'),
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-patch-merge-key': 'name',
      },
      nonMergingList: { type: 'array', items: ref('mergeItem') },
    },
  },
};
const mergeItem = patchMetaFromSchema(ref('mergeItem'), (r) => definitions[r.slice('#/definitions/'.length)]);

interface GoCase {
  description: string;
  original?: unknown;
  twoWay?: unknown;
  modified?: unknown;
  twoWayResult?: unknown;
  current?: unknown;
  threeWay?: unknown;
  result?: unknown;
  expectedError?: string;
}

/** Two tests per case, as the Go suite runs them. */
function runCases(cases: GoCase[]): void {
  for (const c of cases) {
    if (c.twoWay !== undefined) {
      it(`${c.description} (two-way)`, () => {
        const apply = () => applyStrategicMergePatch(c.original ?? {}, c.twoWay, mergeItem);
        if (c.expectedError) {
          expect(apply).toThrow(c.expectedError);
        } else {
          expect(apply()).toStrictEqual(c.twoWayResult ?? c.modified);
        }
      });
    }
    if (c.threeWay !== undefined && c.result !== undefined) {
      it(`${c.description} (three-way)`, () => {
        expect(applyStrategicMergePatch(c.current ?? {}, c.threeWay, mergeItem)).toStrictEqual(c.result);
      });
    }
  }
}

const cases = (text: string) => (parse(text) as { testCases: GoCase[] }).testCases;

describe('customStrategicMergePatchTestCaseData', () => {
  runCases(
    cases(`
testCases:
  - description: unique scalars when merging lists
    original:
      mergingIntList: [1, 2]
    twoWay:
      mergingIntList: [2, 3]
    modified:
      mergingIntList: [1, 2, 3]
  - description: delete map from nested map
    original:
      simpleMap: {key1: 1, key2: 1}
    twoWay:
      simpleMap:
        $patch: delete
    modified:
      simpleMap: {}
  - description: delete all items from merging list
    original:
      mergingList: [{name: 1}, {name: 2}]
    twoWay:
      mergingList:
        - $patch: replace
    modified:
      mergingList: []
  - description: merge empty merging lists
    original:
      mergingList: []
    twoWay:
      mergingList: []
    modified:
      mergingList: []
  - description: delete all keys from map
    original: {name: 1, value: 1}
    twoWay:
      $patch: replace
    modified: {}
  - description: add key and delete all keys from map
    original: {name: 1, value: 1}
    twoWay:
      other: a
      $patch: replace
    modified:
      other: a
  - description: delete all duplicate entries in a merging list
    original:
      mergingList: [{name: 1}, {name: 1}, {name: 2, value: a}, {name: 3}, {name: 3}]
    twoWay:
      mergingList: [{name: 1, $patch: delete}, {name: 3, $patch: delete}]
    modified:
      mergingList: [{name: 2, value: a}]
  - description: retainKeys map can add a field when no retainKeys directive present
    original:
      retainKeysMap: {name: foo}
    twoWay:
      retainKeysMap: {value: bar}
    modified:
      retainKeysMap: {name: foo, value: bar}
  - description: retainKeys map can delete a field when no retainKeys directive present
    original:
      retainKeysMap: {name: foo, value: a}
    twoWay:
      retainKeysMap: {value: null}
    modified:
      retainKeysMap: {name: foo}
  - description: retainKeys map merge an empty map
    original:
      retainKeysMap: {name: foo, value: a}
    twoWay:
      retainKeysMap: {}
    modified:
      retainKeysMap: {name: foo, value: a}
  - description: retainKeys list can change a field when no retainKeys directive present
    original:
      retainKeysMergingList: [{name: bar}, {name: foo, value: a}]
    twoWay:
      retainKeysMergingList: [{name: foo, value: b}]
    modified:
      retainKeysMergingList: [{name: bar}, {name: foo, value: b}]
  - description: retainKeys list can delete a field when no retainKeys directive present
    original:
      retainKeysMergingList: [{name: bar}, {name: foo, value: a}]
    twoWay:
      retainKeysMergingList: [{name: foo, value: null}]
    modified:
      retainKeysMergingList: [{name: bar}, {name: foo}]
`),
  );
});

describe('customStrategicMergePatchRawTestCases', () => {
  runCases(
    cases(`
testCases:
  - description: $setElementOrder contains item that is not present in the list to be merged
    original:
      mergingList: [{name: 1}, {name: 3}]
    twoWay:
      $setElementOrder/mergingList: [{name: 3}, {name: 2}, {name: 1}]
      mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]
    modified:
      mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]
  - description: $setElementOrder contains item that is not present in the int list to be merged
    original:
      mergingIntList: [1, 3]
    twoWay:
      $setElementOrder/mergingIntList: [3, 2, 1]
    modified:
      mergingIntList: [3, 1]
  - description: should check if order in $setElementOrder and patch list match
    original:
      mergingList: [{name: 1}, {name: 3}, {name: 2}]
    twoWay:
      $setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}]
      mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]
    expectedError: doesn't match
  - description: should check if order in $setElementOrder and patch int list match
    original:
      mergingIntList: [1, 3, 2]
    twoWay:
      $setElementOrder/mergingIntList: [1, 2, 3]
      mergingIntList: [3, 1]
    expectedError: doesn't match
  - description: missing merge key should error out
    original:
      mergingList: [{name: 1, value: a}]
    twoWay:
      mergingList: [{value: b}]
    expectedError: does not contain declared merge key
  - description: $deleteFromPrimitiveList of nonexistent item in primitive list should not add the item to the list
    original:
      mergingIntList: [1, 2]
    twoWay:
      $deleteFromPrimitiveList/mergingIntList: [3]
    modified:
      mergingIntList: [1, 2]
  - description: $deleteFromPrimitiveList on empty primitive list should not add the item to the list
    original:
      mergingIntList:
    twoWay:
      $deleteFromPrimitiveList/mergingIntList: [3]
    modified:
      mergingIntList:
  - description: $deleteFromPrimitiveList on nonexistent primitive list should not add the primitive list
    original:
      foo: [bar]
    twoWay:
      $deleteFromPrimitiveList/mergingIntList: [3]
    modified:
      foo: [bar]
  - description: $deleteFromPrimitiveList should delete item from a list with merge patch strategy
    original:
      mergingIntList: [1, 2, 3]
    twoWay:
      $deleteFromPrimitiveList/mergingIntList: [2]
    modified:
      mergingIntList: [1, 3]
  - description: $deleteFromPrimitiveList should delete item from a list without merge patch strategy
    original:
      nonMergingIntList: [1, 2, 3]
    twoWay:
      $deleteFromPrimitiveList/nonMergingIntList: [2]
    modified:
      nonMergingIntList: [1, 3]
`),
  );
});

describe('createStrategicMergePatchTestCaseData', () => {
  runCases(
    cases(`
testCases:
  - description: nil original
    twoWay: {name: 1, value: 1}
    modified: {name: 1, value: 1}
    current: {name: 1, other: a}
    threeWay: {value: 1}
    result: {name: 1, value: 1, other: a}
  - description: add field and delete field from map
    original: {name: 1}
    twoWay: {name: null, value: 1}
    modified: {value: 1}
    current: {name: 1, other: a}
    threeWay: {name: null, value: 1}
    result: {value: 1, other: a}
  - description: delete field from nested map
    original:
      simpleMap: {key1: 1, key2: 1}
    twoWay:
      simpleMap: {key2: null}
    modified:
      simpleMap: {key1: 1}
    current:
      simpleMap: {key1: 1, key2: 1, other: a}
    threeWay:
      simpleMap: {key2: null}
    result:
      simpleMap: {key1: 1, other: a}
  - description: replace list of scalars
    original:
      nonMergingIntList: [1, 2]
    twoWay:
      nonMergingIntList: [2, 3]
    modified:
      nonMergingIntList: [2, 3]
    current:
      nonMergingIntList: [1, 2]
    threeWay:
      nonMergingIntList: [2, 3]
    result:
      nonMergingIntList: [2, 3]
  - description: delete all maps from merging list with conflict
    original:
      mergingList: [{name: 1}, {name: 2}]
    twoWay:
      mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]
    modified:
      mergingList: []
    current:
      mergingList: [{name: 1, other: a}, {name: 2, other: b}]
    threeWay:
      mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]
    result:
      mergingList: []
  - description: delete all maps from empty merging list
    original:
      mergingList: [{name: 1}, {name: 2}]
    current:
      mergingList: []
    threeWay:
      mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]
    result:
      mergingList: []
  - description: defined null values should propagate overwrite current fields (with conflict)
    original: {name: 2}
    twoWay: {name: 1, value: 1, other: null}
    twoWayResult: {name: 1, value: 1}
    current: {name: a, other: a}
    threeWay: {name: 1, value: 1, other: null}
    result: {name: 1, value: 1}
  - description: retainKeys map with no change should not be present
    original:
      name: a
      retainKeysMap: {name: foo}
    current:
      name: a
      other: c
      retainKeysMap: {name: foo}
    twoWay: {value: b}
    modified:
      name: a
      value: b
      retainKeysMap: {name: foo}
    threeWay: {value: b}
    result:
      name: a
      value: b
      other: c
      retainKeysMap: {name: foo}
`),
  );
});

describe('strategicMergePatchRawTestCases', () => {
  runCases(
    cases(`
testCases:
  - description: nested patch merge with empty list
    original:
      name: hi
    twoWay:
      mergingList: [{name: hello}, {$patch: delete, name: doesntexist}]
    twoWayResult:
      name: hi
      mergingList: [{name: hello}]
    current:
      name: hi
      mergingList: [{name: hello2}]
    threeWay:
      $setElementOrder/mergingList: [{name: hello}, {name: doesntexist}]
      mergingList: [{name: hello}, {$patch: delete, name: doesntexist}]
    result:
      name: hi
      mergingList: [{name: hello}, {name: hello2}]
  - description: delete items in lists of scalars
    original:
      mergingIntList: [1, 2, 3]
    twoWay:
      $setElementOrder/mergingIntList: [1, 2]
      $deleteFromPrimitiveList/mergingIntList: [3]
    modified:
      mergingIntList: [1, 2]
    current:
      mergingIntList: [1, 2, 3, 4]
    threeWay:
      $setElementOrder/mergingIntList: [1, 2]
      $deleteFromPrimitiveList/mergingIntList: [3]
    result:
      mergingIntList: [1, 2, 4]
  - description: delete all duplicate items in lists of scalars
    original:
      mergingIntList: [1, 2, 3, 3]
    twoWay:
      $setElementOrder/mergingIntList: [1, 2]
      $deleteFromPrimitiveList/mergingIntList: [3]
    modified:
      mergingIntList: [1, 2]
    current:
      mergingIntList: [1, 2, 3, 3, 4]
    threeWay:
      $setElementOrder/mergingIntList: [1, 2]
      $deleteFromPrimitiveList/mergingIntList: [3]
    result:
      mergingIntList: [1, 2, 4]
  - description: add and delete items in lists of scalars
    original:
      mergingIntList: [1, 2, 3]
    twoWay:
      $setElementOrder/mergingIntList: [1, 2, 4]
      $deleteFromPrimitiveList/mergingIntList: [3]
      mergingIntList: [4]
    modified:
      mergingIntList: [1, 2, 4]
    current:
      mergingIntList: [1, 2, 3, 4]
    threeWay:
      $setElementOrder/mergingIntList: [1, 2, 4]
      $deleteFromPrimitiveList/mergingIntList: [3]
    result:
      mergingIntList: [1, 2, 4]
  - description: merge lists of maps
    original:
      mergingList: [{name: 1}, {name: 2, value: 2}]
    twoWay:
      $setElementOrder/mergingList: [{name: 4}, {name: 1}, {name: 2}, {name: 3}]
      mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]
    modified:
      mergingList: [{name: 4, value: 4}, {name: 1}, {name: 2, value: 2}, {name: 3, value: 3}]
    current:
      mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]
    threeWay:
      $setElementOrder/mergingList: [{name: 4}, {name: 1}, {name: 2}, {name: 3}]
      mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]
    result:
      mergingList: [{name: 4, value: 4}, {name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]
  - description: add field to map in merging list with conflict
    current:
      mergingList: [{name: 1, other: a}, {name: 3, value: 2, other: b}]
    threeWay:
      $setElementOrder/mergingList: [{name: 1}, {name: 2}]
      mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]
    result:
      mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2}, {name: 3, value: 2, other: b}]
  - description: delete map from merging list with conflict
    original:
      mergingList: [{name: 1}, {name: 2}]
    twoWay:
      $setElementOrder/mergingList: [{name: 2}]
      mergingList: [{name: 1, $patch: delete}]
    modified:
      mergingList: [{name: 2}]
    current:
      mergingList: [{name: 1, other: a}, {name: 2, other: b}]
    threeWay:
      $setElementOrder/mergingList: [{name: 2}]
      mergingList: [{name: 1, $patch: delete}]
    result:
      mergingList: [{name: 2, other: b}]
  - description: delete missing map from merging list with conflict
    current:
      mergingList: [{name: 3, other: a}]
    threeWay:
      $setElementOrder/mergingList: [{name: 2}]
      mergingList: [{name: 2}, {name: 1, $patch: delete}]
    result:
      mergingList: [{name: 2}, {name: 3, other: a}]
  - description: add map and delete map from merging list
    original:
      mergingList: [{name: 1}, {name: 2}]
    twoWay:
      $setElementOrder/mergingList: [{name: 2}, {name: 3}]
      mergingList: [{name: 3}, {name: 1, $patch: delete}]
    modified:
      mergingList: [{name: 2}, {name: 3}]
    current:
      mergingList: [{name: 1}, {name: 2, other: b}, {name: 4, other: c}]
    threeWay:
      $setElementOrder/mergingList: [{name: 2}, {name: 3}]
      mergingList: [{name: 3}, {name: 1, $patch: delete}]
    result:
      mergingList: [{name: 2, other: b}, {name: 4, other: c}, {name: 3}]
  - description: add map and delete map from merging list with conflict
    current:
      mergingList: [{name: 1, other: a}, {name: 4, other: c}]
    threeWay:
      $setElementOrder/mergingList: [{name: 2}, {name: 3}]
      mergingList: [{name: 2}, {name: 3}, {name: 1, $patch: delete}]
    result:
      mergingList: [{name: 4, other: c}, {name: 2}, {name: 3}]
  - description: replace non merging list nested in merging list with deletion conflict
    current:
      mergingList:
        - {name: 1, other: a, nonMergingList: [{name: 2, value: 2}]}
        - {name: 2, other: b}
    threeWay:
      $setElementOrder/mergingList: [{name: 1}, {name: 2}]
      mergingList:
        - name: 1
          nonMergingList: [{name: 1, value: 1}]
    result:
      mergingList:
        - {name: 1, other: a, nonMergingList: [{name: 1, value: 1}]}
        - {name: 2, other: b}
  - description: add field to map in merging list nested in merging list with deletion conflict
    current:
      mergingList:
        - {name: 1, other: a, mergingList: [{name: 2, value: 2, other: d}]}
        - {name: 2, other: b}
    threeWay:
      $setElementOrder/mergingList: [{name: 1}, {name: 2}]
      mergingList:
        - $setElementOrder/mergingList: [{name: 2}, {name: 1}]
          name: 1
          mergingList: [{name: 1, value: 1}]
    result:
      mergingList:
        - {name: 1, other: a, mergingList: [{name: 2, value: 2, other: d}, {name: 1, value: 1}]}
        - {name: 2, other: b}
  - description: add map to merging list by pointer
    original:
      mergeItemPtr: [{name: 1}]
    twoWay:
      $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
      mergeItemPtr: [{name: 2}]
    modified:
      mergeItemPtr: [{name: 1}, {name: 2}]
    current:
      mergeItemPtr: [{name: 1, other: a}, {name: 3}]
    threeWay:
      $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
      mergeItemPtr: [{name: 2}]
    result:
      mergeItemPtr: [{name: 1, other: a}, {name: 2}, {name: 3}]
  - description: merge lists of scalars
    original:
      mergingIntList: [1, 2]
    twoWay:
      $setElementOrder/mergingIntList: [1, 2, 3]
      mergingIntList: [3]
    modified:
      mergingIntList: [1, 2, 3]
    current:
      mergingIntList: [1, 2, 4]
    threeWay:
      $setElementOrder/mergingIntList: [1, 2, 3]
      mergingIntList: [3]
    result:
      mergingIntList: [1, 2, 3, 4]
  - description: add an item in a list of primitives and preserve order
    original:
      mergingIntList: [1, 2]
    twoWay:
      $setElementOrder/mergingIntList: [3, 1, 2]
      mergingIntList: [3]
    modified:
      mergingIntList: [3, 1, 2]
    current:
      mergingIntList: [1, 4, 2]
    threeWay:
      $setElementOrder/mergingIntList: [3, 1, 2]
      mergingIntList: [3]
    result:
      mergingIntList: [3, 1, 4, 2]
  - description: delete an item in a list of primitives and preserve order
    original:
      mergingIntList: [1, 2, 3]
    twoWay:
      $setElementOrder/mergingIntList: [2, 1]
      $deleteFromPrimitiveList/mergingIntList: [3]
    modified:
      mergingIntList: [2, 1]
  - description: add multiple items in a list and preserve order
    current:
      mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]
    threeWay:
      $setElementOrder/mergingList: [{name: 1}, {name: 4}, {name: 2}, {name: 3}]
      mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]
    result:
      mergingList: [{name: 1, other: a}, {name: 4, value: 4}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]
  - description: delete an item in a list and preserve order
    current:
      mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]
    threeWay:
      $setElementOrder/mergingList: [{name: 2}, {name: 1}]
      mergingList: [{name: 3, $patch: delete}]
    result:
      mergingList: [{name: 2, value: 2, other: b}, {name: 1, other: a}]
  - description: change an item in a list and preserve order
    current:
      mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]
    threeWay:
      $setElementOrder/mergingList: [{name: 2}, {name: 3}, {name: 1}]
      mergingList: [{name: 3, value: x}]
    result:
      mergingList: [{name: 2, value: 2, other: b}, {name: 3, value: x}, {name: 1, other: a}]
  - description: add and delete an item in a list and preserve order
    current:
      mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]
    threeWay:
      $setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 1}]
      mergingList: [{name: 4, value: 4}, {name: 3, $patch: delete}]
    result:
      mergingList: [{name: 4, value: 4}, {name: 2, value: 2, other: b}, {name: 1, other: a}]
  - description: set elements order in a list with server-only items
    current:
      mergingList: [{name: 1, other: a}, {name: 3, value: 3}, {name: 4, value: 4}, {name: 2, value: 2}, {name: 9}]
    threeWay:
      $setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 3}, {name: 1}]
    result:
      mergingList: [{name: 4, value: 4}, {name: 2, value: 2}, {name: 3, value: 3}, {name: 1, other: a}, {name: 9}]
  - description: set elements order in a list with server-only items 2
    current:
      mergingList: [{name: 1, other: a}, {name: 2, value: 2}, {name: 9}, {name: 3, value: 3}, {name: 4, value: 4}]
    threeWay:
      $setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}]
    result:
      mergingList: [{name: 2, value: 2}, {name: 1, other: a}, {name: 9}, {name: 4, value: 4}, {name: 3, value: 3}]
  - description: set elements order in a list with server-only items 3
    current:
      mergingList:
        - {name: 1, other: a}
        - {name: 2, value: 2}
        - {name: 7}
        - {name: 9}
        - {name: 8}
        - {name: 3, value: 3}
        - {name: 4, value: 4}
    threeWay:
      $setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}]
    result:
      mergingList:
        - {name: 2, value: 2}
        - {name: 1, other: a}
        - {name: 7}
        - {name: 9}
        - {name: 8}
        - {name: 4, value: 4}
        - {name: 3, value: 3}
  - description: add and delete an item in a int list and preserve order
    original:
      mergingIntList: [1, 3, 2]
    twoWay:
      $setElementOrder/mergingIntList: [4, 2, 1]
      mergingIntList: [4]
      $deleteFromPrimitiveList/mergingIntList: [3]
    modified:
      mergingIntList: [4, 2, 1]
    current:
      mergingIntList: [1, 2, 3]
    threeWay:
      $setElementOrder/mergingIntList: [4, 2, 1]
      mergingIntList: [4]
      $deleteFromPrimitiveList/mergingIntList: [3]
    result:
      mergingIntList: [4, 2, 1]
  - description: set elements order in a int list with server-only items 2
    current:
      mergingIntList: [1, 2, 9, 3, 4]
    threeWay:
      $setElementOrder/mergingIntList: [2, 1, 4, 3]
    result:
      mergingIntList: [2, 1, 9, 4, 3]
  - description: set elements order in a int list with server-only items 3
    current:
      mergingIntList: [1, 2, 7, 9, 8, 3, 4]
    threeWay:
      $setElementOrder/mergingIntList: [2, 1, 4, 3]
    result:
      mergingIntList: [2, 1, 7, 9, 8, 4, 3]
  - description: behavior of set element order for a merging list with duplicate
    original:
      mergingList: [{name: 1}, {name: 2, value: dup1}, {name: 3}, {name: 2, value: dup2}, {name: 4}]
    twoWay:
      $setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}, {name: 2}]
    twoWayResult:
      mergingList: [{name: 2, value: dup1}, {name: 2, value: dup2}, {name: 1}, {name: 4}, {name: 3}]
  - description: behavior of set element order for a merging int list with duplicate
    original:
      mergingIntList: [1, 2, 3, 2, 4]
    twoWay:
      $setElementOrder/mergingIntList: [2, 1, 4, 3, 2]
    twoWayResult:
      mergingIntList: [2, 2, 1, 4, 3]
  - description: retainKeys map should clear defaulted field with conflict (discriminated union)
    current:
      retainKeysMap: {name: type1, value: foo}
    threeWay:
      retainKeysMap:
        $retainKeys: [name, other]
        name: type2
        other: bar
    result:
      retainKeysMap: {name: type2, other: bar}
  - description: retainKeys map adds a field and clear a field
    current:
      retainKeysMap: {name: foo, other: a}
    threeWay:
      retainKeysMap:
        $retainKeys: [name, value]
        value: bar
    result:
      retainKeysMap: {name: foo, value: bar}
  - description: retainKeys map deletes a field and clears a field
    current:
      retainKeysMap: {name: foo, value: bar, other: a}
    threeWay:
      retainKeysMap:
        $retainKeys: [name]
        value: null
    result:
      retainKeysMap: {name: foo}
  - description: retainKeys map adds an item and deletes an item in nested merging int list
    current:
      retainKeysMap:
        name: foo
        mergingIntList: [1, 2, 3, 4]
    threeWay:
      retainKeysMap:
        $retainKeys: [mergingIntList, name]
        mergingIntList: [5]
        $deleteFromPrimitiveList/mergingIntList: [2]
        $setElementOrder/mergingIntList: [1, 3, 5]
    result:
      retainKeysMap:
        name: foo
        mergingIntList: [1, 3, 5, 4]
  - description: retainKeys map deletes an item in nested merging list
    current:
      retainKeysMap:
        name: foo
        mergingList: [{name: a}, {name: b}, {name: x}]
    threeWay:
      retainKeysMap:
        $retainKeys: [mergingList, name]
        $setElementOrder/mergingList: [{name: a}]
        mergingList: [{name: b, $patch: delete}]
    result:
      retainKeysMap:
        name: foo
        mergingList: [{name: a}, {name: x}]
  - description: retainKeys list of maps clears a field
    current:
      retainKeysMergingList: [{name: bar}, {name: foo, value: a, other: x}]
    threeWay:
      $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
      retainKeysMergingList:
        - $retainKeys: [name, value]
          name: foo
    result:
      retainKeysMergingList: [{name: bar}, {name: foo, value: a}]
  - description: retainKeys list of maps clears a field with conflict
    current:
      retainKeysMergingList: [{name: bar}, {name: foo, value: new, other: x}]
    threeWay:
      $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
      retainKeysMergingList:
        - $retainKeys: [name, value]
          name: foo
          value: modified
    result:
      retainKeysMergingList: [{name: bar}, {name: foo, value: modified}]
  - description: delete and reorder in one list, reorder in another
    original:
      mergingList: [{name: a, value: a}, {name: b, value: b}]
      mergeItemPtr: [{name: c, value: c}, {name: d, value: d}]
    twoWay:
      $setElementOrder/mergingList: [{name: b}]
      $setElementOrder/mergeItemPtr: [{name: d}, {name: c}]
      mergingList: [{$patch: delete, name: a}]
    modified:
      mergingList: [{name: b, value: b}]
      mergeItemPtr: [{name: d, value: d}, {name: c, value: c}]
`),
  );
});

describe('replaceRawExtensionPatchTestCases', () => {
  runCases(
    cases(`
testCases:
  - description: replace RawExtension field and merge list
    current:
      name: my-object
      value: some-value
      other: current-other
      mergingList: [{name: 1}, {name: 3}]
      replacingItem: {Some: Generic, Yaml: Inside, The: RawExtension, Field: Period}
    threeWay:
      $setElementOrder/mergingList: [{name: 1}, {name: 2}]
      mergingList: [{name: 2}]
      replacingItem: {Newly: Modified, Yaml: Inside, The: RawExtension}
    result:
      name: my-object
      value: some-value
      other: current-other
      mergingList: [{name: 1}, {name: 2}, {name: 3}]
      replacingItem: {Newly: Modified, Yaml: Inside, The: RawExtension}
`),
  );
});

describe('malformed directives (errors the apiserver reports as 400)', () => {
  it('rejects $retainKeys that is not a list', () => {
    const original = { retainKeysMap: { name: 'a' } };
    expect(() =>
      applyStrategicMergePatch(original, { retainKeysMap: { $retainKeys: 'name' } }, mergeItem),
    ).toThrow(expect.objectContaining({ code: 400, message: 'invalid patch format of retainKeys' }));
  });

  it('rejects a patch that sets a key $retainKeys does not list', () => {
    const patch = { retainKeysMap: { $retainKeys: ['name'], value: 'x' } };
    const err = catchError(() =>
      applyStrategicMergePatch({ retainKeysMap: { name: 'a' } }, patch, mergeItem),
    );
    expect(isBadRequest(err)).toBe(true);
  });

  it('rejects $deleteFromPrimitiveList without a field', () => {
    expect(() => applyStrategicMergePatch({}, { $deleteFromPrimitiveList: [1] }, mergeItem)).toThrow(
      expect.objectContaining({ code: 400, message: 'invalid patch format of primitive list' }),
    );
  });

  it('rejects $setElementOrder with an unexpected prefix', () => {
    expect(() => applyStrategicMergePatch({}, { '$setElementOrderX/mergingList': [] }, mergeItem)).toThrow(
      expect.objectContaining({ code: 400, message: 'invalid patch format of setElementOrder list' }),
    );
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}
