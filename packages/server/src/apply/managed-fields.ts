/**
 * `metadata.managedFields` in and out: entries decoded into field sets keyed by manager
 * identifier, and encoded back in kube-apiserver's order (apimachinery `managedfields/internal`:
 * `DecodeManagedFields`, `BuildManagerIdentifier`, `encodeManagedFields`).
 */
import { fromFieldsV1, toFieldsV1 } from './fields-v1.js';
import type { ManagedFieldSets } from './updater.js';
import { compareStrings, isObj, type Obj } from './value.js';

/** The managed fields of an object: field sets and the time of each manager's last change. */
export interface Managed {
  fields: ManagedFieldSets;
  times: Map<string, string | undefined>;
}

/** What identifies a manager: its name, operation, API version (updates only) and subresource. */
export interface ManagerInfo {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion?: string;
  subresource?: string;
}

/** A managed fields entry that cannot be decoded. */
export class ManagedFieldsError extends Error {}

/** A new, empty {@link Managed}. */
export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

/**
 * `BuildManagerIdentifier`: the JSON of the entry without its fields, type and time, and without
 * its API version when it applied, so that an applier keeps one entry across versions.
 */
export function managerIdentifier(info: ManagerInfo): string {
  const id: Obj = {};
  if (info.manager) id.manager = info.manager;
  if (info.operation) id.operation = info.operation;
  if (info.apiVersion && info.operation !== 'Apply') id.apiVersion = info.apiVersion;
  if (info.subresource) id.subresource = info.subresource;
  return JSON.stringify(id);
}

/** The parts of a manager identifier. */
export function parseManagerIdentifier(id: string): ManagerInfo | undefined {
  try {
    const v = JSON.parse(id) as unknown;
    if (!isObj(v)) return undefined;
    return {
      manager: typeof v.manager === 'string' ? v.manager : '',
      operation: v.operation === 'Apply' ? 'Apply' : 'Update',
      ...(typeof v.apiVersion === 'string' && { apiVersion: v.apiVersion }),
      ...(typeof v.subresource === 'string' && { subresource: v.subresource }),
    };
  } catch {
    return undefined;
  }
}

/**
 * `DecodeManagedFields`: entries to field sets by manager identifier.
 *
 * @throws {@link ManagedFieldsError} for an entry without a valid operation, API version or fields type.
 */
export function decodeManagedFields(entries: unknown): Managed {
  const managed = emptyManaged();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new ManagedFieldsError('managedFields must be a list');
  entries.forEach((e, i) => {
    if (!isObj(e)) throw new ManagedFieldsError(`managed fields entry ${i} is not an object`);
    if (e.operation !== 'Apply' && e.operation !== 'Update')
      throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (typeof e.apiVersion !== 'string' || e.apiVersion.length < 1)
      throw new ManagedFieldsError('apiVersion must not be empty');
    if (e.fieldsType === undefined || e.fieldsType === '')
      throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1')
      throw new ManagedFieldsError(
        `invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`,
      );
    const id = managerIdentifier({
      manager: typeof e.manager === 'string' ? e.manager : '',
      operation: e.operation,
      apiVersion: e.apiVersion,
      ...(typeof e.subresource === 'string' && { subresource: e.subresource }),
    });
    let set: ReturnType<typeof fromFieldsV1>;
    try {
      set = fromFieldsV1(e.fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError(`error decoding set: ${err instanceof Error ? err.message : String(err)}`);
    }
    managed.fields.set(id, { set, apiVersion: e.apiVersion, applied: e.operation === 'Apply' });
    managed.times.set(id, typeof e.time === 'string' ? e.time : undefined);
  });
  return managed;
}

/** Unix seconds of an RFC 3339 time (0 when absent), as the sort of entries reads it. */
function seconds(t: string | undefined): number {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

const GO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/**
 * An entry's time as Go writes a `metav1.Time` back: RFC 3339 in UTC, whole seconds (a time sent
 * as `…T02:00:00.5+02:00` comes back `…T00:00:00Z`). Text that is not a time is left as it is.
 */
function encodeTime(t: string): string {
  // The server's own times are already in that form: nothing to parse on every write.
  if (GO_TIME.test(t)) return t;
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) return t;
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * `encodeManagedFields`: the entries of an object, sorted by operation (Apply first), time,
 * manager, API version and subresource; `undefined` when nobody manages anything.
 */
export function encodeManagedFields(managed: Managed): Obj[] | undefined {
  if (managed.fields.size === 0) return undefined;
  const entries: Obj[] = [];
  for (const [id, vs] of managed.fields) {
    const info = parseManagerIdentifier(id) ?? { manager: id, operation: 'Update' as const };
    const time = managed.times.get(id);
    // Field order of Go's ManagedFieldsEntry.
    const entry: Obj = {};
    if (info.manager) entry.manager = info.manager;
    entry.operation = vs.applied ? 'Apply' : info.operation;
    entry.apiVersion = vs.apiVersion;
    if (time) entry.time = encodeTime(time);
    entry.fieldsType = 'FieldsV1';
    entry.fieldsV1 = toFieldsV1(vs.set);
    if (info.subresource) entry.subresource = info.subresource;
    entries.push(entry);
  }
  // Go compares strings bytewise (UTF-8), which is code point order.
  const str = (e: Obj, k: string) => (typeof e[k] === 'string' ? (e[k] as string) : '');
  entries.sort(
    (p, q) =>
      compareStrings(str(p, 'operation'), str(q, 'operation')) ||
      seconds(p.time as string | undefined) - seconds(q.time as string | undefined) ||
      compareStrings(str(p, 'manager'), str(q, 'manager')) ||
      compareStrings(str(p, 'apiVersion'), str(q, 'apiVersion')) ||
      compareStrings(str(p, 'subresource'), str(q, 'subresource')),
  );
  return entries;
}

/**
 * How a conflict message names a manager (`printManager`): `"name"`, with ` with subresource
 * "status"` and, for updates, ` using apps/v1`.
 */
export function printManager(id: string): string {
  const info = parseManagerIdentifier(id);
  if (!info) return JSON.stringify(id);
  let s = JSON.stringify(info.manager);
  if (info.subresource) s += ` with subresource ${JSON.stringify(info.subresource)}`;
  if (info.operation === 'Update') s += ` using ${info.apiVersion ?? ''}`;
  return s;
}
