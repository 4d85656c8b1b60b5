/** Query parameters read as Kubernetes' parameter codec reads them. */
import {
  ApiError,
  type FieldSelector,
  fieldErrors,
  type LabelSelector,
  parseFieldSelector,
  parseLabelSelector,
} from 'kubeloop/api';
import type { ListParams } from '../registry/rest.js';
import type { IncludeObject } from './table.js';

/**
 * A boolean query parameter as apimachinery's `Convert_Slice_string_To_bool` reads it: only `0`
 * and `false` (in any case) are false; any other value, an empty one included, is true (the
 * Python client sends `watch=True`). Only the first value counts. Undefined when absent.
 */
export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

/** The list options of a list, watch or deletecollection (`ListOptions`). */
export function listParams(query: URLSearchParams): ListParams {
  const p: ListParams = {};
  const ls = query.get('labelSelector');
  if (ls) p.labelSelector = parseLabelSelector(ls) as LabelSelector;
  const fs = query.get('fieldSelector');
  if (fs) p.fieldSelector = parseFieldSelector(fs) as FieldSelector;
  const limit = query.get('limit');
  if (limit !== null && limit !== '') {
    // A limit of 0 or less asks for no paging (the apiserver does not validate it).
    const n = parseInt64(limit);
    if (n > 0) p.limit = n;
  }
  // A list's timeout bounds the request; read (and refused when not a number) as kube reads it.
  const timeout = query.get('timeoutSeconds');
  if (timeout !== null && timeout !== '') parseInt64(timeout);
  const cont = query.get('continue');
  if (cont) p.continue = cont;
  const rv = query.get('resourceVersion');
  if (rv !== null) p.resourceVersion = rv;
  const rvm = query.get('resourceVersionMatch');
  if (rvm) p.resourceVersionMatch = rvm;
  return p;
}

/** `includeObject` of a Table request (default `Metadata`). */
export function includeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw ApiError.badRequest(
    `includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`,
  );
}

/** The options kind whose `dryRun` a verb's request carries (none: the verb ignores it). */
const OPTIONS_KIND: Partial<Record<string, string>> = {
  create: 'CreateOptions',
  update: 'UpdateOptions',
  patch: 'PatchOptions',
  delete: 'DeleteOptions',
  deletecollection: 'DeleteOptions',
};

/**
 * `dryRun` of a write: only `All` is a value, anything else makes the request's options invalid
 * (`ValidateDryRun`, a 422 naming e.g. `CreateOptions.meta.k8s.io`). Reads ignore it.
 */
export function parseDryRun(query: URLSearchParams, verb: string): boolean {
  const kind = OPTIONS_KIND[verb];
  if (!kind) return false;
  const values = query.getAll('dryRun');
  if (values.some((v) => v !== 'All')) {
    throw ApiError.invalid({ group: 'meta.k8s.io', kind }, '', [
      fieldErrors.notSupported('dryRun', values, ['All']),
    ]);
  }
  return values.length > 0;
}

/**
 * An int64 query parameter, read as the parameter codec reads it (Go's `strconv.ParseInt`): a sign
 * and decimal digits within int64's range; anything else is a 400 with strconv's own message.
 */
export function parseInt64(v: string): number {
  const quoted = JSON.stringify(v);
  if (!/^[+-]?\d+$/.test(v)) throw ApiError.badRequest(`strconv.ParseInt: parsing ${quoted}: invalid syntax`);
  const n = BigInt(v);
  if (n > 9223372036854775807n || n < -9223372036854775808n)
    throw ApiError.badRequest(`strconv.ParseInt: parsing ${quoted}: value out of range`);
  return Number(n);
}
