/** Query parameters read as Kubernetes' parameter codec reads them. */

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
