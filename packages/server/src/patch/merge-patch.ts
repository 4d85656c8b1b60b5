/**
 * JSON merge patch (`application/merge-patch+json`, RFC 7386) as kube-apiserver applies it:
 * with `gopkg.in/evanphx/json-patch.v4`'s `MergePatch`, whose few departures from the RFC are
 * reproduced here because clients observe them:
 * - `null` is removed from values the patch adds, including from arrays (`[1, null]` → `[1]`);
 * - a patch that is `null`, a string, a number or a boolean is rejected (400) instead of
 *   replacing the document;
 * - with the server's default `fieldValidation` (`Warn`) or `Strict`, the body is first decoded
 *   into a Go map, so a patch that is not an object is a 400 as well.
 */

import { patchBadRequest, patchInternal } from './errors.js';
import { cloneJson, deleteOwn, getOwn, hasOwn, isObj, jsonKindName, type Obj, setOwn } from './json-value.js';
import type { PatchOptions } from './options.js';

const BAD_PATCH = 'Invalid JSON Patch';

/**
 * Applies a JSON merge patch to `original` and returns the result; neither input is modified.
 *
 * @param original - the current object, as JSON.
 * @param patch - the parsed request body.
 * @throws ApiError 400 when the patch is not a JSON object (see the module notes).
 *
 * @example
 * ```ts
 * applyMergePatch({ data: { a: '1', b: '2' } }, { data: { a: null, c: '3' } });
 * // → { data: { b: '2', c: '3' } }
 * ```
 */
export function applyMergePatch(original: unknown, patch: unknown, options: PatchOptions = {}): unknown {
  const strict = (options.fieldValidation ?? 'Warn') !== 'Ignore';
  if (strict && patch !== null && !isObj(patch)) {
    throw patchBadRequest(
      `error decoding patch: json: cannot unmarshal ${jsonKindName(patch)} into Go value of type map[string]interface {}`,
    );
  }
  if (patch === null) throw patchBadRequest(BAD_PATCH);
  if (Array.isArray(patch)) return pruneNulls(cloneJson(patch));
  if (!isObj(patch)) throw patchBadRequest(BAD_PATCH);

  // The document is always an encoded object on the server; anything else mirrors the library.
  if (original === null) throw patchInternal('Invalid JSON Document');
  const work = cloneJson(patch);
  if (!isObj(original)) return pruneNulls(work);
  const doc = cloneJson(original);
  mergeDocs(doc, work);
  return doc;
}

function mergeDocs(doc: Obj, patch: Obj): void {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      deleteOwn(doc, key);
      continue;
    }
    const current = getOwn(doc, key);
    if (!hasOwn(doc, key) || current === null || current === undefined) {
      setOwn(doc, key, pruneNulls(value));
    } else {
      setOwn(doc, key, merge(current, value));
    }
  }
}

function merge(current: unknown, patch: unknown): unknown {
  // The library only merges object into object; it prunes nulls when the target was not an
  // object, but not when an object is replaced by a non-object.
  if (!isObj(current)) return pruneNulls(patch);
  if (!isObj(patch)) return patch;
  mergeDocs(current, patch);
  return current;
}

/**
 * Removes nulls from the objects and arrays of `value`, a working copy (changed in place). Walked
 * with an explicit stack: a patch nests as deep as the decoder allows, deeper than recursion
 * over arrays can go.
 */
function pruneNulls<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      let kept = 0;
      for (const item of v) if (item !== null) v[kept++] = item;
      v.length = kept;
      for (const item of v) if (typeof item === 'object') stack.push(item);
    } else if (isObj(v)) {
      for (const [k, item] of Object.entries(v)) {
        if (item === null) deleteOwn(v, k);
        else if (typeof item === 'object') stack.push(item);
      }
    }
  }
  return value;
}
