/**
 * kube-apiserver's field manager (apimachinery `managedfields`): keeps `metadata.managedFields`
 * for every write and runs server-side apply, composed as Kubernetes composes it:
 *
 * - updates: managed fields come from the request object, else from the live one (`managedFields: []`
 *   resets them); the writer (`fieldManager`, else the User-Agent prefix) takes what it changed, with
 *   the time of the change; update managers beyond 10 are merged into `ancient-changes`;
 * - applies: the object's fields that nobody tracked yet are first given to `before-first-apply`;
 *   conflicts of the `kubectl` manager with what kubectl's client-side apply annotation accounts for
 *   are forced (the upgrade from client-side apply), and that annotation follows the configuration;
 * - `apiVersion`, `kind` and server-set metadata are never owned.
 */
import { ApiError, type StatusCause } from 'kubeloop/api';
import { cloneJson } from '../patch/json-value.js';
import { decodeProtobufObject, encodeProtobufObject, supportsProtobuf } from '../protobuf/index.js';
import { apiVersionOf, type ResourceType } from '../registry/types.js';
import { timestamp } from '../util/object.js';
import { createdFieldsV1 } from './created.js';
import {
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  type Managed,
  ManagedFieldsError,
  managerIdentifier,
  printManager,
} from './managed-fields.js';
import { type Path, pathString } from './path.js';
import { type Atom, builtinAtom, customResourceAtom, DEDUCED } from './schema.js';
import { FieldSet } from './set.js';
import { compareTyped, TypedError, toFieldSet, validateTyped } from './typed.js';
import {
  Conflicts,
  ConversionPending,
  type ManagedFieldSets,
  Updater,
  type VersionConverter,
} from './updater.js';
import { goJson, isObj, type Obj } from './value.js';

/** The annotation of kubectl's client-side apply. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Update managers kept before the oldest are merged (`DefaultMaxUpdateManagers`). */
export const MAX_UPDATE_MANAGERS = 10;

export { FIELD_MANAGER_MAX_LENGTH, fieldManagerCauses, managerOrUserAgent } from './manager-name.js';

const SCALE_DEFINITION = 'io.k8s.api.autoscaling.v1.Scale';

/** Fields never owned by anyone (`stripMetaManager`). @internal */
export const STRIP = FieldSet.of(
  [{ field: 'apiVersion' }],
  [{ field: 'kind' }],
  [{ field: 'metadata' }],
  ...[
    'name',
    'namespace',
    'creationTimestamp',
    'selfLink',
    'uid',
    'clusterName',
    'generation',
    'managedFields',
    'resourceVersion',
  ].map((f) => [{ field: 'metadata' }, { field: f }]),
);

/** The subresource a write goes through. */
export type Subresource = 'status' | 'scale' | 'finalize' | 'ephemeralcontainers' | undefined;

/** Who writes and through which subresource. */
export interface ManageOptions {
  /** The `fieldManager` of the request, else the prefix of its User-Agent (may be empty). */
  manager: string;
  subresource?: Subresource;
  /** The time recorded for the change (RFC 3339, seconds); now by default. */
  now?: string;
  /** Converts to other managers' versions (a CRD's webhook); else all read as the request's. */
  convert?: VersionConverter;
}

/** The type the field manager of a resource works with (a Scale for `/scale`). */
export function atomOf(t: ResourceType, subresource: Subresource): Atom {
  if (subresource === 'scale') return builtinAtom(SCALE_DEFINITION) ?? DEDUCED;
  if (t.custom) return customResourceAtom(t.custom.schema);
  return (t.definition ? builtinAtom(t.definition) : undefined) ?? DEDUCED;
}

function versionOf(t: ResourceType, subresource: Subresource): string {
  return subresource === 'scale' ? 'autoscaling/v1' : apiVersionOf(t);
}

/** Fields the write's strategy resets (`GetResetFields`): nobody owns them through this write. */
function resetFields(t: ResourceType, subresource: Subresource): FieldSet | undefined {
  if (subresource === 'scale') return undefined;
  if (subresource === 'status') {
    const paths =
      t.statusStrategy?.resetFields ?? (t.custom ? [['spec']] : [['spec'], ['metadata', 'labels']]);
    return FieldSet.of(...paths.map((p) => p.map((field) => ({ field }))));
  }
  return t.subresources.status ? FieldSet.of([{ field: 'status' }]) : undefined;
}

const updaters = new WeakMap<ResourceType, Map<Subresource, Updater>>();

function updaterFor(t: ResourceType, subresource: Subresource): Updater {
  let byTarget = updaters.get(t);
  if (!byTarget) {
    byTarget = new Map();
    updaters.set(t, byTarget);
  }
  let u = byTarget.get(subresource);
  if (!u) {
    u = new Updater(atomOf(t, subresource), resetFields(t, subresource));
    byTarget.set(subresource, u);
  }
  return u;
}

const zeroValues = new WeakMap<ResourceType, Obj>();

/**
 * The empty object of a kind (`ObjectCreater.New`) as its JSON: Go's zero value of a built-in
 * type (`metadata: {creationTimestamp: null}`, `status: {}`…), only `apiVersion`/`kind` otherwise.
 * What a create is compared against decides which containers the creator owns as such (`"."`).
 */
function zeroObject(t: ResourceType, subresource: Subresource): Obj {
  if (subresource === 'scale') return { apiVersion: 'autoscaling/v1', kind: 'Scale' };
  let z = zeroValues.get(t);
  if (!z) {
    const apiVersion = apiVersionOf(t);
    z = { apiVersion, kind: t.kind };
    if (!t.custom && supportsProtobuf(apiVersion, t.kind)) {
      try {
        z = decodeProtobufObject(encodeProtobufObject({ apiVersion, kind: t.kind }));
      } catch {
        // A kind without a descriptor compares against the bare type meta.
      }
    }
    zeroValues.set(t, z);
  }
  return z;
}

/** A shallow copy without `metadata.managedFields` (never part of the compared fields). */
function withoutManagedFields(obj: Obj): Obj {
  const m = obj.metadata;
  if (!isObj(m) || m.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...rest } = m;
  return { ...obj, metadata: rest };
}

function metadataOf(obj: Obj): Obj {
  if (!isObj(obj.metadata)) obj.metadata = {};
  return obj.metadata as Obj;
}

/** `isResetManagedFields`: `[]`, or one entry that is entirely empty. */
function isReset(mf: unknown): boolean {
  if (!Array.isArray(mf)) return false;
  if (mf.length === 0) return true;
  return mf.length === 1 && isObj(mf[0]) && Object.keys(mf[0]).length === 0;
}

function decodeOrEmpty(mf: unknown): Managed {
  try {
    return decodeManagedFields(mf);
  } catch {
    return emptyManaged();
  }
}

function strip(fields: ManagedFieldSets, id: string): void {
  const vs = fields.get(id);
  if (!vs) return;
  const set = vs.set.difference(STRIP);
  if (set.empty()) fields.delete(id);
  else fields.set(id, { ...vs, set });
}

/** `capManagersManager`: merges the oldest update entries into `ancient-changes` per version. */
function capUpdateManagers(managed: Managed, max: number): void {
  const updaters = [...managed.fields].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= max) return;
  const secs = (id: string) => {
    const t = managed.times.get(id);
    return t ? Math.floor(Date.parse(t) / 1000) : 0;
  };
  updaters.sort((a, b) => secs(a) - secs(b) || (a < b ? -1 : a > b ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i]!;
    const vs = managed.fields.get(id)!;
    const time = managed.times.get(id);
    const bucket = managerIdentifier({
      manager: 'ancient-changes',
      operation: 'Update',
      apiVersion: vs.apiVersion,
    });
    const first = firstOfVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!managed.fields.has(bucket)) {
      managed.fields.set(bucket, managed.fields.get(first)!);
      managed.fields.delete(first);
    }
    managed.fields.set(bucket, {
      set: vs.set.union(managed.fields.get(bucket)!.set),
      apiVersion: vs.apiVersion,
      applied: vs.applied,
    });
    managed.fields.delete(id);
    length--;
    managed.times.set(bucket, time);
  }
}

/**
 * The update chain below `skipNonApplied`: cap managers → build manager info → managed fields
 * updater (time) → strip meta → structured merge.
 */
function updateCore(t: ResourceType, live: Obj, next: Obj, managed: Managed, o: ManageOptions): Managed {
  const version = versionOf(t, o.subresource);
  const id = managerIdentifier({
    manager: o.manager || 'unknown',
    operation: 'Update',
    apiVersion: version,
    ...(o.subresource && { subresource: o.subresource }),
  });
  const self = 'current-operation';
  const { managers } = updaterFor(t, o.subresource).update(
    withoutManagedFields(live),
    withoutManagedFields(next),
    version,
    managed.fields,
    self,
    o.convert,
  );
  strip(managers, self);
  const out: Managed = { fields: managers, times: new Map(managed.times) };
  const vs = managers.get(self);
  if (vs) {
    managers.delete(self);
    const previous = managers.get(id);
    managers.set(id, previous ? { ...vs, set: vs.set.union(previous.set) } : vs);
    out.times.set(id, o.now ?? timestamp());
  }
  for (const k of [...out.times.keys()]) if (!managers.has(k)) out.times.delete(k);
  capUpdateManagers(out, MAX_UPDATE_MANAGERS);
  return out;
}

function encodeInto(obj: Obj, managed: Managed): void {
  const entries = encodeManagedFields(managed);
  const m = metadataOf(obj);
  if (entries) m.managedFields = entries;
  else delete m.managedFields;
}

const typeMetaOnly = new WeakMap<ResourceType, boolean>();

/**
 * Whether an empty value holds nothing a create's fields could equal but stripped ones: its type
 * meta (custom resources), and at most a `metadata` of `creationTimestamp: null` (the protobuf
 * zero value of built-in kinds without spec or status: ConfigMap, Secret, ServiceAccount, RBAC…).
 */
function typeMetaAndStripped(z: Obj): boolean {
  return Object.keys(z).every((k) => {
    if (k === 'apiVersion' || k === 'kind') return typeof z[k] === 'string';
    if (k !== 'metadata' || !isObj(z.metadata)) return false;
    // Against a `metadata` map in the empty value, the update chain counts neither `metadata`
    // itself nor an equal `creationTimestamp` as set; both are stripped from what the walk counts.
    const m = z.metadata;
    return Object.keys(m).every((f) => f === 'creationTimestamp' && m[f] === null);
  });
}

/**
 * The create of an object whose empty value is its type meta only (custom resources), or that and
 * a stripped `metadata` (see {@link typeMetaAndStripped}): its creator owns every field it sets,
 * computed in one walk ({@link createdFieldsV1}) rather than by the update chain, with the same
 * entry. False when the update chain must do it.
 */
function recordCreate(t: ResourceType, next: Obj, o: ManageOptions): boolean {
  let simple = typeMetaOnly.get(t);
  if (simple === undefined) {
    simple = typeMetaAndStripped(zeroObject(t, undefined));
    typeMetaOnly.set(t, simple);
  }
  if (!simple) return false;
  const u = updaterFor(t, undefined);
  const fields = createdFieldsV1(next, u.atom, u.ignored, STRIP);
  if (fields === undefined) return false;
  const m = metadataOf(next);
  if (fields === null) {
    delete m.managedFields;
    return true;
  }
  // encodeManagedFields of the one entry.
  const entry: Obj = {
    manager: o.manager || 'unknown',
    operation: 'Update',
    apiVersion: versionOf(t, undefined),
  };
  const time = o.now ?? timestamp();
  if (time) entry.time = time;
  entry.fieldsType = 'FieldsV1';
  entry.fieldsV1 = fields;
  m.managedFields = [entry];
  return true;
}

/**
 * Records a non-apply write in `next.metadata.managedFields` (`FieldManager.UpdateNoErrors`):
 * `live` is the stored object, `undefined` for a create. Never throws: when the fields cannot be
 * computed, the live object's entries are kept.
 *
 * @example
 * ```ts
 * updateManagedFields(configMapType, undefined, cm, { manager: 'kubectl-create' });
 * cm.metadata.managedFields; // [{ manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', … }]
 * ```
 */
export function updateManagedFields(
  t: ResourceType,
  live: Obj | undefined,
  next: Obj,
  o: ManageOptions,
): void {
  const m = metadataOf(next);
  const liveEntries = live && isObj(live.metadata) ? live.metadata.managedFields : undefined;
  try {
    let managed: Managed;
    if (!o.subresource && live === undefined && (m.managedFields == null || isReset(m.managedFields))) {
      // A create that names no managed fields (most do): nobody's to decode.
      delete m.managedFields;
      if (recordCreate(t, next, o)) return;
      managed = emptyManaged();
    } else {
      if (o.subresource) managed = decodeOrEmpty(liveEntries);
      else if (isReset(m.managedFields)) managed = emptyManaged();
      else {
        try {
          managed = decodeManagedFields(m.managedFields);
          // Without live entries (a create) the live set is as empty as this one: not decoded again.
          if (managed.fields.size === 0 && liveEntries !== undefined) managed = decodeOrEmpty(liveEntries);
        } catch {
          managed = decodeOrEmpty(liveEntries);
        }
      }
      delete m.managedFields;
      if (managed.fields.size === 0) {
        // skipNonApplied: an object whose fields nobody tracks stays untracked until it is applied.
        if (live !== undefined) return;
        if (!o.subresource && recordCreate(t, next, o)) return;
      }
    }
    encodeInto(next, updateCore(t, live ?? zeroObject(t, o.subresource), next, managed, o));
  } catch (err) {
    // The caller converts what the field manager asked for and runs it again.
    if (err instanceof ConversionPending) throw err;
    if (liveEntries !== undefined) m.managedFields = cloneJson(liveEntries);
    else delete m.managedFields;
  }
}

/** `GroupVersionKind.String()`: `apps/v1, Kind=Deployment` (`/v1, Kind=Pod` for the core group). */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = av.indexOf('/');
  const group = slash >= 0 ? av.slice(0, slash) : '';
  const version = slash >= 0 ? av.slice(slash + 1) : av;
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

/** The conflict error of an apply (`NewConflictError`). */
export function conflictError(conflicts: Conflicts): ApiError {
  const list = conflicts.conflicts;
  const causes: StatusCause[] = list.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  let message: string;
  if (list.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(list[0]!.manager)}: ${pathString(list[0]!.path)}`;
  } else {
    const byManager = new Map<string, Path[]>();
    for (const c of list) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.path]);
    const lines: string[] = [];
    for (const manager of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${printManager(manager)}:`);
      for (const p of byManager.get(manager)!) lines.push(`- ${pathString(p)}`);
    }
    message = `Apply failed with ${list.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError({ code: 409, reason: 'Conflict', message, details: { causes } });
}

function objectName(t: ResourceType, obj: Obj, subresource: Subresource): string {
  const m = isObj(obj.metadata) ? obj.metadata : {};
  const ns = typeof m.namespace === 'string' && m.namespace ? m.namespace : t.namespaced ? '' : '';
  const name = typeof m.name === 'string' ? m.name : '';
  return `${ns}/${name}; ${gvkString(obj.apiVersion ?? versionOf(t, subresource), obj.kind)}`;
}

interface ApplyResult {
  object: Obj;
  managed: Managed;
}

/** The apply chain below `lastAppliedManager`: skip non-applied → … → structured merge. */
function applyCore(
  t: ResourceType,
  live: Obj,
  creating: boolean,
  config: Obj,
  managed: Managed,
  o: ManageOptions,
  force: boolean,
): ApplyResult {
  const version = versionOf(t, o.subresource);
  let current = managed;
  if (current.fields.size === 0 && !creating) {
    // skipNonApplied: whatever the object holds so far belongs to `before-first-apply`.
    current = updateCore(t, zeroObject(t, o.subresource), live, current, {
      ...o,
      manager: 'before-first-apply',
    });
  }
  const id = managerIdentifier({
    manager: o.manager || 'unknown',
    operation: 'Apply',
    ...(o.subresource && { subresource: o.subresource }),
  });
  if (config.apiVersion !== version) {
    throw ApiError.badRequest(
      `Incorrect version specified in apply patch. Specified patch version: ${String(config.apiVersion ?? '')}, expected: ${version}`,
    );
  }
  if (
    isObj(config.metadata) &&
    config.metadata.managedFields !== undefined &&
    config.metadata.managedFields !== null
  ) {
    throw ApiError.badRequest('metadata.managedFields must be nil');
  }
  const updater = updaterFor(t, o.subresource);
  try {
    validateTyped(config, updater.atom);
  } catch (err) {
    if (err instanceof TypedError) {
      throw new ApiError({
        code: 500,
        message: `failed to create typed patch object (${objectName(t, config, o.subresource)}): ${err.message}`,
      });
    }
    throw err;
  }
  const liveObj = withoutManagedFields(live);
  const { object, managers } = updater.apply(liveObj, config, version, current.fields, id, force, o.convert);
  strip(managers, id);
  const times = new Map(current.times);
  for (const k of [...times.keys()]) if (!managers.has(k)) times.delete(k);
  let result: Obj;
  if (object !== undefined && isObj(object)) {
    times.set(id, o.now ?? timestamp());
    result = object;
  } else {
    result = cloneJson(liveObj);
  }
  return { object: result, managed: { fields: managers, times } };
}

/** `allowedConflictsFromLastApplied`: what kubectl's last client-side apply still accounts for. */
function allowedFromLastApplied(t: ResourceType, live: Obj, atom: Atom): FieldSet | undefined {
  const annotations = isObj(live.metadata) ? live.metadata.annotations : undefined;
  const raw = isObj(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof raw !== 'string' || raw === '') return undefined;
  let last: unknown;
  try {
    last = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isObj(last) || last.apiVersion !== apiVersionOf(t)) return undefined;
  try {
    validateTyped(last, atom, true);
    const set = toFieldSet(last, atom);
    const c = compareTyped(last, withoutManagedFields(live), atom);
    return set.difference(c.modified).difference(c.added).difference(c.removed);
  } catch {
    return undefined;
  }
}

/** `buildLastApplied`: the configuration without the annotation, as Go's JSON encoder writes it. */
function lastAppliedValue(config: Obj): string {
  const copy = cloneJson(config);
  if (isObj(copy.metadata) && isObj(copy.metadata.annotations)) {
    delete copy.metadata.annotations[LAST_APPLIED_ANNOTATION];
  }
  return `${goJson(copy)}\n`;
}

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

function setLastApplied(obj: Obj, value: string): void {
  const m = metadataOf(obj);
  const annotations: Obj = isObj(m.annotations) ? m.annotations : {};
  annotations[LAST_APPLIED_ANNOTATION] = value;
  let size = 0;
  for (const [k, v] of Object.entries(annotations))
    size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION];
  m.annotations = annotations;
}

/**
 * Server-side apply of `config` (`FieldManager.Apply`) over `live` (`undefined` when the object
 * does not exist yet): returns the merged object with its new `metadata.managedFields`.
 *
 * @throws ApiError 409 `Conflict` listing each field another manager owns with another value
 * (unless `force`); 400 for a configuration of another kind or version, or with managedFields;
 * 500 for a configuration that does not fit the schema (`failed to create typed patch object`).
 *
 * @example
 * ```ts
 * const next = applyConfiguration(deployments, live, { apiVersion: 'apps/v1', kind: 'Deployment',
 *   metadata: { name: 'web' }, spec: { replicas: 3 } }, { manager: 'ci', force: false });
 * ```
 */
export function applyConfiguration(
  t: ResourceType,
  live: Obj | undefined,
  config: Obj,
  o: ManageOptions & { force: boolean },
): Obj {
  const version = versionOf(t, o.subresource);
  const kind = o.subresource === 'scale' ? 'Scale' : t.kind;
  const creating = live === undefined;
  const liveObj: Obj = live ?? { apiVersion: version, kind };
  let managed: Managed;
  try {
    managed = decodeManagedFields(isObj(liveObj.metadata) ? liveObj.metadata.managedFields : undefined);
  } catch (err) {
    if (err instanceof ManagedFieldsError)
      throw ApiError.internal(`failed to decode managed fields: ${err.message}`);
    throw err;
  }
  if (config.apiVersion !== version || config.kind !== kind) {
    throw ApiError.badRequest(`invalid object type: ${gvkString(config.apiVersion, config.kind)}`);
  }
  let result: ApplyResult;
  try {
    result = applyCore(t, liveObj, creating, config, managed, o, o.force);
  } catch (err) {
    if (!(err instanceof Conflicts)) throw err;
    // lastAppliedManager: kubectl's move from client-side to server-side apply.
    if (o.manager !== 'kubectl') throw conflictError(err);
    const allowed = allowedFromLastApplied(t, liveObj, updaterFor(t, o.subresource).atom);
    if (!allowed) throw conflictError(err);
    const left = err.conflicts.filter((c) => !allowed.has(c.path));
    if (left.length > 0) throw conflictError(new Conflicts(left));
    result = applyCore(t, liveObj, creating, config, managed, o, true);
  }
  const { object, managed: after } = result;
  // lastAppliedUpdater: kubectl's annotation keeps following what kubectl applies.
  if (o.manager === 'kubectl') {
    const annotations = isObj(object.metadata) ? object.metadata.annotations : undefined;
    const has = isObj(annotations) && typeof annotations[LAST_APPLIED_ANNOTATION] === 'string';
    if (has && annotations[LAST_APPLIED_ANNOTATION] !== '') setLastApplied(object, lastAppliedValue(config));
  }
  encodeInto(object, after);
  return object;
}
