/**
 * List semantics of the generic registry (`generic/registry.Store.List` with the etcd3 store's
 * paging): resourceVersion and resourceVersionMatch rules, continue tokens and their expiry.
 */
import { posix } from 'node:path';
import {
  ApiError,
  causeText,
  type FieldSelector,
  fieldErrors,
  goQuote,
  type LabelSelector,
  type StatusCause,
} from 'kubeloop/api';
import { collectionPrefix, StorageError, type Store } from '../../storage/store.js';
import type { StoredObject } from '../../storage/types.js';
import { goJsonSyntaxError, goJsonTypeName } from '../../util/go-json.js';
import { isObject } from '../../util/object.js';
import { type ResourceType, storageOf } from '../types.js';

/** Parsed list/watch parameters. */
export interface ListParams {
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListOutcome {
  items: StoredObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

interface Continue {
  rv: number;
  start: string;
}

/**
 * apimachinery's `ValidateListOptions` for a list (watches are validated by the watch handler):
 * its causes in its order, answered as one 422 `ListOptions.meta.k8s.io "" is invalid: …`.
 */
function listOptionsCauses(p: ListParams): StatusCause[] {
  const match = p.resourceVersionMatch;
  if (!match) return [];
  const forbidden = (message: string): StatusCause => ({
    reason: 'FieldValueForbidden',
    field: 'resourceVersionMatch',
    message: `Forbidden: ${message}`,
  });
  const causes: StatusCause[] = [];
  if (!p.resourceVersion)
    causes.push(forbidden('resourceVersionMatch is forbidden unless resourceVersion is provided'));
  if (p.continue) causes.push(forbidden('resourceVersionMatch is forbidden when continue is provided'));
  if (match !== 'Exact' && match !== 'NotOlderThan')
    causes.push({
      reason: 'FieldValueNotSupported',
      field: 'resourceVersionMatch',
      message: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""`,
    });
  if (match === 'Exact' && p.resourceVersion === '0')
    causes.push(forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  return causes;
}

/** One page of `t`'s objects in `namespace` (all namespaces when undefined) that pass `filter`. */
export function listObjects(
  store: Store,
  t: ResourceType,
  namespace: string | undefined,
  p: ListParams,
  filter: ((o: StoredObject) => boolean) | undefined,
): ListOutcome {
  const { group, resource } = storageOf(t);
  const prefix = collectionPrefix(group, resource, t.namespaced ? namespace : undefined);
  let atRevision: number | undefined;
  let after: string | undefined;

  const invalid = listOptionsCauses(p);
  if (invalid.length > 0) throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', invalid);
  if (p.continue) {
    if (p.resourceVersion && p.resourceVersion !== '0') {
      throw ApiError.badRequest('specifying resource version is not allowed when using continue');
    }
    const token = decodeContinue(p.continue);
    // A negative revision (the token of an expired list's Status) continues at the latest state.
    if (token.rv >= 0 && token.rv < store.oldestRevision) {
      throw new ApiError({
        code: 410,
        reason: 'Expired',
        message:
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        metadata: { continue: encodeContinue({ rv: -1, start: token.start }) },
      });
    }
    atRevision = token.rv < 0 ? undefined : token.rv;
    after = prefix + token.start;
  } else if (p.resourceVersion && p.resourceVersion !== '0') {
    const rv = parseResourceVersion(p.resourceVersion, p.resourceVersionMatch === 'Exact');
    if (p.resourceVersionMatch === 'Exact') {
      if (rv < store.oldestRevision) {
        throw ApiError.expired('The resourceVersion for the provided list is too old.');
      }
      if (rv > store.revision) throw tooLarge(rv, store.revision);
      atRevision = rv;
    } else if (rv > store.revision) {
      throw tooLarge(rv, store.revision);
    }
  }

  const anyVersion = p.resourceVersion === '0' && !p.continue;
  let result: ReturnType<Store['list']>;
  try {
    result = store.list(prefix, {
      ...(after !== undefined && { after }),
      // resourceVersion=0 is served as a kube-apiserver serves it, from the watch cache, which
      // does not page: the whole list, whatever the limit (client-go's reflectors ask so).
      ...(p.limit !== undefined && p.limit > 0 && !anyVersion && { limit: p.limit }),
      ...(atRevision !== undefined && { atRevision }),
      ...(filter && { filter }),
    });
  } catch (err) {
    if (err instanceof StorageError && err.code === 'TooOld') throw ApiError.expired(err.message);
    throw err;
  }
  const out: ListOutcome = { items: result.items, resourceVersion: String(result.revision) };
  if (result.continueAfter !== undefined) {
    out.continue = encodeContinue({
      rv: result.revision,
      start: result.continueAfter.slice(prefix.length),
    });
    if (!filter) {
      out.remainingItemCount = store.count(prefix, result.continueAfter, result.revision);
    }
  }
  return out;
}

const UINT64_MAX = 2n ** 64n - 1n;

/** Go's `strconv.ParseUint(s, 10, 64)`: the value, or its error's words. */
function parseUint(s: string): number | string {
  if (!/^[0-9]+$/.test(s)) return `strconv.ParseUint: parsing ${goQuote(s)}: invalid syntax`;
  if (BigInt(s) > UINT64_MAX) return `strconv.ParseUint: parsing ${goQuote(s)}: value out of range`;
  return Number(s);
}

/**
 * A `resourceVersion` parameter as a revision (`APIObjectVersioner.ParseResourceVersion`: "" and
 * "0" are 0). One that is not an unsigned integer is an invalid-field storage error, which kube
 * passes on as a 500; a list that asks for it exactly answers 400 (`exact` true).
 */
export function parseResourceVersion(rv: string, exact = false): number {
  if (rv === '' || rv === '0') return 0;
  const n = parseUint(rv);
  if (typeof n === 'number') return n;
  const message = causeText(fieldErrors.invalid('resourceVersion', rv, n));
  if (exact) throw ApiError.badRequest(`invalid resource version: ${message}`);
  throw new ApiError({ code: 500, message });
}

/** An object's `metadata.resourceVersion` as a revision; kube's 500 with ParseUint's words when it is not one. */
export function parseObjectResourceVersion(rv: string): number {
  const n = parseUint(rv);
  if (typeof n === 'number') return n;
  throw new ApiError({ code: 500, message: n });
}

/** GET's `resourceVersion`: served at least that fresh, so one ahead of the store is too large. */
export function checkGetResourceVersion(store: Store, rv: string | undefined): void {
  if (rv === undefined || rv === '' || rv === '0') return;
  const n = parseResourceVersion(rv);
  if (n > store.revision) throw tooLarge(n, store.revision);
}

function tooLarge(rv: number, current: number): ApiError {
  return new ApiError({
    code: 504,
    reason: 'Timeout',
    message: `Timeout: Too large resource version: ${rv}, current: ${current}`,
    details: {
      causes: [{ reason: 'ResourceVersionTooLarge', message: `Too large resource version` }],
      retryAfterSeconds: 1,
    },
  });
}

function encodeContinue(c: Continue): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: c.rv, start: c.start })).toString('base64url');
}

/**
 * `storage.DecodeContinue`, its errors worded as kube words them (`invalid continue token:
 * continue key is not valid: …`): base64url without padding, then JSON, then the version, the
 * revision and a start key that `path.Clean` leaves as it is.
 */
function decodeContinue(token: string): Continue {
  const invalid = (why: string) =>
    ApiError.badRequest(`invalid continue token: continue key is not valid${why}`);
  const bad = /[^A-Za-z0-9_-]/.exec(token);
  if (bad || token.length % 4 === 1) {
    throw invalid(`: illegal base64 data at input byte ${bad ? bad.index : token.length - 1}`);
  }
  const data = Buffer.from(token, 'base64url');
  let raw: unknown;
  try {
    raw = JSON.parse(data.toString('utf8'));
  } catch {
    throw invalid(`: ${goJsonSyntaxError(data) ?? 'unexpected end of JSON input'}`);
  }
  if (!isObject(raw))
    throw invalid(
      `: json: cannot unmarshal ${goJsonTypeName(raw)} into Go value of type storage.continueToken`,
    );
  for (const [field, type] of [
    ['v', 'string'],
    ['rv', 'int64'],
    ['start', 'string'],
  ] as const) {
    const v = raw[field];
    if (v === undefined || v === null) continue;
    const ok = type === 'string' ? typeof v === 'string' : Number.isInteger(v);
    if (!ok)
      throw invalid(
        `: json: cannot unmarshal ${goJsonTypeName(v)} into Go struct field continueToken.${field} of type ${type}`,
      );
  }
  const version = typeof raw.v === 'string' ? raw.v : '';
  if (version !== 'meta.k8s.io/v1')
    throw invalid(`: server does not recognize this encoded version ${version}`);
  const rv = typeof raw.rv === 'number' ? raw.rv : 0;
  if (rv === 0) throw invalid(': incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  const start = typeof raw.start === 'string' ? raw.start : '';
  if (start === '') throw invalid(': encoded start key empty');
  // Against path traversal: the key must be what path.Clean makes of it.
  const key = start.startsWith('/') ? start : `/${start}`;
  if (posix.normalize(key) !== key || (key.length > 1 && key.endsWith('/'))) throw invalid(`: ${start}`);
  return { rv, start: key.slice(1) };
}
