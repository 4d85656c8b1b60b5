/**
 * JSON patch (`application/json-patch+json`, RFC 6902) as kube-apiserver applies it.
 *
 * The apiserver uses `gopkg.in/evanphx/json-patch.v4`, which differs from the RFC in ways
 * clients can observe; they are reproduced here, and `fast-json-patch` performs the edits once
 * each operation has been resolved the way the Go library resolves it:
 * - negative array indices count from the end (`/spec/containers/-1`), indices are parsed like
 *   Go's `strconv.Atoi` (`+1`, `01`);
 * - `replace` of a missing object key adds it; `add` and `replace` without `value` write `null`;
 * - `copy` from a missing object key copies `null`; `test` of a missing key against `null`
 *   passes;
 * - `add` at the root (`""`) fails; `replace` at the root needs an object or array value;
 * - a path that does not start with `/` is resolved from its second segment.
 *
 * Errors follow `handlers/patch.go`: a body that is not a list of operations is 400 BadRequest,
 * more than 10000 operations 413, and any operation that cannot be applied a 422 whose message
 * does not say why.
 */
import jsonpatch, { type Operation } from 'fast-json-patch';
import { ApiError } from 'kubeloop/api';
import { patchBadRequest, patchUnprocessable } from './errors.js';
import { cloneJson, getOwn, hasOwn, isObj, jsonEqual, jsonKindName, type Obj } from './json-value.js';
import type { PatchOptions } from './options.js';

/** The most operations one JSON patch may hold (`maxJSONPatchOperations`). */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

/** Where an operation's target lives: its container and the last (unescaped) token. */
interface Target {
  container: Obj | unknown[];
  key: string;
}

/** Signals an operation the Go library rejects; turned into the apiserver's 422 at the top. */
class OperationFailed extends Error {}

/**
 * Applies an RFC 6902 JSON patch to `original` and returns the result; neither input is
 * modified.
 *
 * @param original - the current object, as JSON.
 * @param patch - the parsed request body; must be an array of operation objects.
 * @throws ApiError 400 when the body is not a list of operations, 413 beyond
 *   {@link MAX_JSON_PATCH_OPERATIONS} operations, 422 when an operation fails (a `test` that
 *   does not match, a path that does not exist, …).
 *
 * @example
 * ```ts
 * applyJsonPatch({ spec: { replicas: 1 } }, [
 *   { op: 'test', path: '/spec/replicas', value: 1 },
 *   { op: 'replace', path: '/spec/replicas', value: 3 },
 * ]);
 * // → { spec: { replicas: 3 } }
 * ```
 */
export function applyJsonPatch(original: unknown, patch: unknown, options: PatchOptions = {}): unknown {
  const operations = decodeOperations(patch, (options.fieldValidation ?? 'Warn') !== 'Ignore');
  if (operations.length > MAX_JSON_PATCH_OPERATIONS) {
    throw ApiError.requestEntityTooLarge(
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${operations.length}`,
    );
  }
  if (!isObj(original) && !Array.isArray(original)) throw patchUnprocessable();
  let doc: Obj | unknown[] = cloneJson(original);
  try {
    for (const operation of operations) doc = applyOperation(doc, isObj(operation) ? operation : {});
  } catch (err) {
    if (err instanceof OperationFailed || isFastJsonPatchError(err)) throw patchUnprocessable();
    throw err;
  }
  return doc;
}

/**
 * Checks the body the way the apiserver decodes it: strictly into `[]handlers.jsonPatchOp`
 * (fieldValidation Warn or Strict), then into `jsonpatch.Patch`.
 */
function decodeOperations(patch: unknown, strict: boolean): unknown[] {
  const undecodable = (what: string) => patchBadRequest(strict ? `error decoding patch: ${what}` : what);
  if (patch === null) return [];
  if (!Array.isArray(patch)) {
    const type = strict ? '[]handlers.jsonPatchOp' : 'jsonpatch.Patch';
    throw undecodable(`json: cannot unmarshal ${jsonKindName(patch)} into Go value of type ${type}`);
  }
  for (const operation of patch) {
    if (operation === null) continue;
    if (!isObj(operation)) {
      const type = strict ? 'handlers.jsonPatchOp' : 'jsonpatch.Operation';
      throw undecodable(`json: cannot unmarshal ${jsonKindName(operation)} into Go value of type ${type}`);
    }
    if (!strict) continue;
    for (const field of ['op', 'path', 'from']) {
      const value = getOwn(operation, field);
      if (value !== undefined && value !== null && typeof value !== 'string') {
        throw undecodable(
          `json: cannot unmarshal ${jsonKindName(value)} into Go struct field jsonPatchOp.${field} of type string`,
        );
      }
    }
  }
  return patch;
}

function applyOperation(doc: Obj | unknown[], operation: Obj): Obj | unknown[] {
  switch (stringField(operation, 'op') ?? 'unknown') {
    case 'add': {
      insert(find(doc, requiredString(operation, 'path')), operationValue(operation));
      return doc;
    }
    case 'remove': {
      remove(find(doc, requiredString(operation, 'path')));
      return doc;
    }
    case 'replace':
      return replace(doc, operation);
    case 'move': {
      const from = find(doc, requiredString(operation, 'from'));
      const value = read(from);
      remove(from);
      insert(find(doc, requiredString(operation, 'path')), value);
      return doc;
    }
    case 'copy': {
      const value = cloneJson(read(find(doc, requiredString(operation, 'from'))) ?? null);
      insert(find(doc, requiredString(operation, 'path')), value);
      return doc;
    }
    case 'test': {
      const path = requiredString(operation, 'path');
      const actual = path === '' ? doc : read(find(doc, path));
      // The library treats a missing key and null alike, and a missing `value` as null.
      if (!jsonEqual(actual ?? null, getOwn(operation, 'value') ?? null)) throw new OperationFailed();
      return doc;
    }
    default:
      throw new OperationFailed();
  }
}

function replace(doc: Obj | unknown[], operation: Obj): Obj | unknown[] {
  const path = requiredString(operation, 'path');
  const value = operationValue(operation);
  if (path === '') {
    if (!isObj(value) && !Array.isArray(value)) throw new OperationFailed();
    return value;
  }
  const { container, key } = find(doc, path);
  if (Array.isArray(container)) {
    edit(container, { op: 'replace', path: `/${arrayIndex(key, container.length, false)}`, value });
  } else {
    // Replacing a key the object lacks adds it: the library only checks the parent exists.
    edit(container, { op: 'add', path: token(key), value });
  }
  return doc;
}

/** The operation's value as the library writes it: absent means null, and it is copied. */
function operationValue(operation: Obj): unknown {
  return cloneJson(getOwn(operation, 'value') ?? null);
}

/** Resolves every segment but the last, like the library's `findObject`. */
function find(doc: Obj | unknown[], path: string): Target {
  const segments = path.split('/');
  if (segments.length < 2) throw new OperationFailed();
  let container: Obj | unknown[] = doc;
  for (const segment of segments.slice(1, -1)) {
    const key = unescapeToken(segment);
    const next: unknown = Array.isArray(container)
      ? container[arrayIndex(key, container.length, false)]
      : getOwn(container, key);
    if (!isObj(next) && !Array.isArray(next)) throw new OperationFailed();
    container = next;
  }
  return { container, key: unescapeToken(segments[segments.length - 1] ?? '') };
}

/** The value at a target: `undefined` for a missing object key, an error past an array's end. */
function read(target: Target): unknown {
  const { container, key } = target;
  if (Array.isArray(container)) return container[arrayIndex(key, container.length, false)];
  return getOwn(container, key);
}

function insert(target: Target, value: unknown): void {
  const { container, key } = target;
  if (!Array.isArray(container)) {
    edit(container, { op: 'add', path: token(key), value });
  } else if (key === '-') {
    edit(container, { op: 'add', path: '/-', value });
  } else {
    edit(container, { op: 'add', path: `/${arrayIndex(key, container.length, true)}`, value });
  }
}

function remove(target: Target): void {
  const { container, key } = target;
  if (Array.isArray(container)) {
    edit(container, { op: 'remove', path: `/${arrayIndex(key, container.length, false)}` });
  } else {
    if (!hasOwn(container, key)) throw new OperationFailed();
    edit(container, { op: 'remove', path: token(key) });
  }
}

/**
 * Applies one resolved edit with fast-json-patch, addressed relative to the container it
 * changes. Prototype pollution (`__proto__`, `constructor/prototype`) is refused there.
 */
function edit(container: Obj | unknown[], operation: Operation): void {
  jsonpatch.applyOperation(container, operation, true, true, true);
}

/**
 * An array index as the library reads it: `strconv.Atoi`, negative values counted from the end
 * (for an insertion, from the end of the grown array); out of range is a failure.
 */
function arrayIndex(token: string, length: number, inserting: boolean): number {
  if (!/^[+-]?\d+$/.test(token)) throw new OperationFailed();
  let index = Number(token);
  if (!Number.isSafeInteger(index)) throw new OperationFailed();
  const size = inserting ? length + 1 : length;
  if (index < 0) {
    if (index < -size) throw new OperationFailed();
    index += size;
  }
  if (index >= size) throw new OperationFailed();
  return index;
}

function stringField(operation: Obj, field: string): string | undefined {
  const value = getOwn(operation, field);
  return typeof value === 'string' ? value : undefined;
}

function requiredString(operation: Obj, field: string): string {
  const value = stringField(operation, field);
  if (value === undefined) throw new OperationFailed();
  return value;
}

function unescapeToken(token: string): string {
  return token.replace(/~[01]/g, (m) => (m === '~1' ? '/' : '~'));
}

/** A one-segment JSON pointer to `key`. */
function token(key: string): string {
  return `/${jsonpatch.escapePathComponent(key)}`;
}

/** fast-json-patch reports faults as its own error, and refuses `__proto__` with a TypeError. */
function isFastJsonPatchError(err: unknown): boolean {
  return (
    err instanceof jsonpatch.JsonPatchError ||
    (err instanceof TypeError && err.message.startsWith('JSON-Patch:'))
  );
}
