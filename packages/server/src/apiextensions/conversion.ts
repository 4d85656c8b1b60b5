import { ApiError } from 'kubeloop/api';
import { apiVersionOf, type ResourceType, type StoredAs } from '../registry/types.js';
import type { StoredObject } from '../storage/types.js';
import type { Obj } from '../util/object.js';
import { inOrderBatches } from './batches.js';
import { ConversionError, convertThroughWebhook } from './conversion-webhook.js';

/**
 * Reading and writing custom resources across versions, as apiextensions' storage codec does.
 * Objects are stored at the CRD's storage version. Reading one prunes the fields the schema of
 * the version it was stored at does not know and applies that schema's defaults (so that an
 * object stored before a default was added shows it), then converts it to the requested
 * version and prunes it with that version's schema: strategy `None` only rewrites `apiVersion`;
 * strategy `Webhook` calls the CRD's conversion webhook ({@link convertThroughWebhook}).
 *
 * Only webhook conversion is asynchronous: {@link present}, {@link presentAll} and
 * {@link toStorageVersion} answer synchronously (no promise, no extra tick) for every other type
 * and for objects already at the wanted version, so reads of built-in kinds and of `None` CRDs
 * cost what they always did. A get or a write calls the webhook each time, as kube-apiserver
 * converts every object it reads from storage; lists and watches reuse the conversion of a stored
 * state, as kube-apiserver's watch cache does.
 */

/**
 * Marks an object written through the storage version itself: the write pruned and defaulted it
 * with that version's schema, so reading it back changes nothing. The store copies the object
 * shallowly (spreading symbol keys too) and JSON never carries the mark, so it lasts exactly as
 * long as this in-memory state of the object.
 */
const COERCED_WITH = Symbol('kubeloop.coercedWith');

/**
 * Views of stored objects: per served type (a CRD change makes new types), per stored state. One
 * weak table per type, not one per object, which the collector would have to trace each.
 */
const views = new WeakMap<ResourceType, WeakMap<StoredObject, StoredObject>>();

/** The views kept for `t` (made on first use). */
function viewsOf(t: ResourceType): WeakMap<StoredObject, StoredObject> {
  let m = views.get(t);
  if (!m) {
    m = new WeakMap();
    views.set(t, m);
  }
  return m;
}

/**
 * A synchronous conversion of an object that needs the webhook: a caller that should have used
 * {@link present}, {@link presentAll} or {@link toStorageVersion}'s promise.
 */
function webhookNeedsAwait(t: ResourceType, from: unknown): ApiError {
  return ApiError.internal(
    `conversion webhook for ${String(from)}, Kind=${t.kind} failed: converted synchronously`,
  );
}

/** kube-apiserver answers a conversion failure, an error that is not a Status, as a 500 without a reason. */
function conversionFailed(err: unknown): unknown {
  return err instanceof ConversionError ? new ApiError({ code: 500, message: err.message }) : err;
}

/** The compiled schema of the version an object is at (its apiVersion), if the CRD has that version. */
function schemaAt(t: ResourceType, apiVersion: unknown) {
  const version = typeof apiVersion === 'string' ? apiVersion.slice(apiVersion.indexOf('/') + 1) : '';
  return t.custom?.versionSchemas?.get(version);
}

/**
 * What decoding a stored object does before conversion: prune unknown fields and apply
 * defaults with the schema of the version it is stored at. Returns whether pruning removed anything.
 */
function coerce(t: ResourceType, obj: Obj): boolean {
  const schema = schemaAt(t, obj.apiVersion);
  if (!schema) return false;
  const pruned = schema.prune(obj, { isResourceRoot: true }).length > 0;
  schema.applyDefaults(obj);
  return pruned;
}

/**
 * Converts an object at the storage version to `t`'s version, in place; the converted object is
 * pruned with the target version's schema (apiextensions' schemaCoercingConverter). Returns
 * whether pruning removed anything.
 */
function convert(t: ResourceType, obj: Obj): boolean {
  const target = apiVersionOf(t);
  if (obj.apiVersion === target) return false;
  if (t.custom?.conversion === 'Webhook') throw webhookNeedsAwait(t, obj.apiVersion);
  obj.apiVersion = target;
  return (t.custom?.compiled.prune(obj, { isResourceRoot: true }).length ?? 0) > 0;
}

/** Per served type: its apiVersion and that version's schema (types are replaced, not changed). */
const served = new WeakMap<ResourceType, { apiVersion: string; schema: unknown }>();

function servedBy(t: ResourceType): { apiVersion: string; schema: unknown } {
  let s = served.get(t);
  if (!s) {
    const apiVersion = apiVersionOf(t);
    s = { apiVersion, schema: schemaAt(t, apiVersion) };
    served.set(t, s);
  }
  return s;
}

/**
 * The stored object as a client of `t`'s version sees it (cached per stored state and type).
 * Returns `stored` itself when reading changes nothing, which is the common case (checked
 * first and cheaply: a watch-list presents every object of a collection).
 */
export function presentAs(t: ResourceType, stored: StoredObject): StoredObject {
  if (t.storedAs) return presentStoredAs(t, t.storedAs, stored);
  if (!t.custom) return stored;
  const from = stored.object.apiVersion;
  const s = servedBy(t);
  if (from === s.apiVersion && (stored.object as Record<symbol, unknown>)[COERCED_WITH] === s.schema)
    return stored;
  const byType = viewsOf(t);
  const cached = byType.get(stored);
  if (cached) return cached;
  if (from !== apiVersionOf(t) && t.custom.conversion === 'Webhook') throw webhookNeedsAwait(t, from);
  // A parse of the cached encoding is the cheapest deep copy, and re-encoding it shows
  // whether defaulting added anything (keys it adds come last, so equal text means no change).
  const object = JSON.parse(stored.json) as Obj;
  const coerced = coerce(t, object);
  const pruned = convert(t, object) || coerced;
  const json = JSON.stringify(object);
  const view =
    !pruned && json === stored.json ? stored : { key: stored.key, object, revision: stored.revision, json };
  byType.set(stored, view);
  return view;
}

/**
 * Converts an object written through `t`'s version to the storage version, in place; the
 * result is pruned with the storage version's schema, as kube's storage codec does. Returns a
 * promise only when the CRD's conversion webhook must be called (await it before storing).
 */
export function toStorageVersion(t: ResourceType, obj: Obj): void | Promise<void> {
  if (t.storedAs) {
    replaceContent(obj, t.storedAs.toStored(obj));
    return;
  }
  const custom = t.custom;
  if (!custom) return;
  if (custom.storageVersion === t.version) {
    (obj as Record<symbol, unknown>)[COERCED_WITH] = schemaAt(t, obj.apiVersion);
    return;
  }
  const storage = `${t.group}/${custom.storageVersion}`;
  if (custom.conversion === 'Webhook') {
    if (obj.apiVersion !== storage) return webhookToStorage(t, obj, storage);
  } else obj.apiVersion = storage;
  schemaAt(t, storage)?.prune(obj, { isResourceRoot: true });
}

async function webhookToStorage(t: ResourceType, obj: Obj, storage: string): Promise<void> {
  let converted: Obj;
  try {
    [converted] = (await convertThroughWebhook(t, [structuredClone(obj)], storage)) as [Obj];
  } catch (err) {
    throw conversionFailed(err);
  }
  // The object keeps its own metadata object (the registry holds on to it) with the labels and
  // annotations the webhook answered, which is all restoreObjectMeta lets a webhook change.
  const m = obj.metadata as Obj;
  replaceContent(obj, converted);
  const answered = obj.metadata as Obj;
  for (const f of ['labels', 'annotations']) {
    if (answered[f] === undefined) delete m[f];
    else m[f] = answered[f];
  }
  obj.metadata = m;
  schemaAt(t, storage)?.prune(obj, { isResourceRoot: true });
}

/**
 * The stored object as a client of `t`'s version sees it, as {@link presentAs}; a promise only
 * when the CRD's conversion webhook must convert it. Each call converts again, as kube-apiserver
 * converts every object a get or a write reads from storage.
 */
export function present(t: ResourceType, stored: StoredObject): StoredObject | Promise<StoredObject> {
  if (t.custom?.conversion !== 'Webhook' || stored.object.apiVersion === servedBy(t).apiVersion)
    return presentAs(t, stored);
  return convertViews(t, [stored]).then((views) => views[0]!);
}

/**
 * A stored object read for an update through `t`: the old object admission and validation see
 * (`oldView`: the stored one, except for kinds stored as another and through a conversion
 * webhook) and a copy to change (`base`), read through `t`'s version. A promise only through a
 * conversion webhook.
 */
export function readForUpdate(
  t: ResourceType,
  current: StoredObject,
): { oldView: StoredObject; base: Obj } | Promise<{ oldView: StoredObject; base: Obj }> {
  if (t.storedAs) {
    const oldView = presentAs(t, current);
    // A parse of the cached encoding is the cheapest deep copy.
    return { oldView, base: JSON.parse(oldView.json) as Obj };
  }
  if (!t.custom) return { oldView: current, base: JSON.parse(current.json) as Obj };
  const view = present(t, current);
  const read = (v: StoredObject) => ({
    oldView: t.custom?.conversion === 'Webhook' ? v : current,
    base: JSON.parse(v.json) as Obj,
  });
  return view instanceof Promise ? view.then(read) : read(view);
}

/**
 * A conversion under way: the pending review batch and the object's place in it. One small
 * record per object, not a promise per object: a cold list of 10,000 objects makes one batch.
 */
interface PendingView {
  batch: Promise<StoredObject[]>;
  index: number;
}

/**
 * Conversions through a webhook for lists and watches, per served type and stored state (a
 * pending one too, so that watchers of one change share its call). kube-apiserver serves lists
 * and watches from its watch cache, which holds every object decoded, that is converted, once
 * per change and per version; a failed conversion is not kept. One table per type, not one per
 * object: a cold list of 10,000 objects would otherwise make 10,000 weak tables for the
 * collector to trace.
 */
const webhookViews = new WeakMap<ResourceType, WeakMap<StoredObject, StoredObject | PendingView>>();

/** The conversions kept for `t` (made on first use). */
function webhookViewsOf(t: ResourceType): WeakMap<StoredObject, StoredObject | PendingView> {
  let m = webhookViews.get(t);
  if (!m) {
    m = new WeakMap();
    webhookViews.set(t, m);
  }
  return m;
}

function isPending(v: StoredObject | PendingView): v is PendingView {
  return 'batch' in v;
}

/**
 * The conversion of `stored` through `t`'s webhook made for a list or watch, if it is done:
 * field selectors of such a type select on it (its selectable fields are `t`'s version's).
 */
export function convertedView(t: ResourceType, stored: StoredObject): StoredObject | undefined {
  if (t.custom?.conversion !== 'Webhook') return undefined;
  const known = webhookViews.get(t)?.get(stored);
  return known === undefined || isPending(known) ? undefined : known;
}

/**
 * Converts every object of a collection through `t`'s webhook ahead of a list that selects on
 * fields of the object (`spec.host=…`): those are fields of `t`'s version, read from the
 * conversions. A promise only when something waits for the webhook.
 */
export function convertForFieldSelector(
  t: ResourceType,
  items: () => readonly StoredObject[],
  fields: readonly string[],
): undefined | Promise<unknown> {
  if (t.custom?.conversion !== 'Webhook' || fields.every((f) => f.startsWith('metadata.'))) return undefined;
  const views = presentAll(t, items());
  return views instanceof Promise ? views : undefined;
}

/**
 * The stored objects of a list page or of one watch event as clients of `t`'s
 * version see them. Objects the webhook must convert and that were not converted before go in
 * one ConversionReview. A promise only when something waits for the webhook.
 */
export function presentAll(
  t: ResourceType,
  items: readonly StoredObject[],
): StoredObject[] | Promise<StoredObject[]> {
  if (t.custom?.conversion !== 'Webhook') return items.map((i) => presentAs(t, i));
  const target = servedBy(t).apiVersion;
  const kept = webhookViewsOf(t);
  const out: StoredObject[] = new Array(items.length);
  const send: StoredObject[] = [];
  const sentFrom: number[] = [];
  const waits: Promise<void>[] = [];
  for (let n = 0; n < items.length; n++) {
    const i = items[n]!;
    if (i.object.apiVersion === target) {
      out[n] = presentAs(t, i);
      continue;
    }
    const known = kept.get(i);
    if (known === undefined) {
      send.push(i);
      sentFrom.push(n);
    } else if (isPending(known)) {
      waits.push(
        known.batch.then((views) => {
          out[n] = views[known.index]!;
        }),
      );
    } else out[n] = known;
  }
  if (send.length > 0) {
    const batch = convertViews(t, send);
    batch.catch(() => undefined);
    for (let index = 0; index < send.length; index++) kept.set(send[index]!, { batch, index });
    waits.push(
      batch.then(
        (views) => {
          for (let k = 0; k < views.length; k++) {
            kept.set(send[k]!, views[k]!);
            out[sentFrom[k]!] = views[k]!;
          }
        },
        (err: unknown) => {
          for (const i of send) kept.delete(i);
          throw err;
        },
      ),
    );
  }
  if (waits.length === 0) return out;
  return (waits.length === 1 ? waits[0]! : Promise.all(waits)).then(() => out);
}

/**
 * The most objects one ConversionReview of a list carries: a larger page goes in several
 * reviews, a few in flight at once, so that this server encodes and decodes one while the
 * webhook converts another (kube-apiserver 1.32 even sends one review per object of a list).
 */
export const CONVERSION_BATCH = 1000;

/** Converts stored objects through `t`'s CRD's webhook into views of `t`'s version. */
async function convertViews(t: ResourceType, items: readonly StoredObject[]): Promise<StoredObject[]> {
  const s = servedBy(t);
  const send: Obj[] = [];
  const encoded: string[] = [];
  for (const i of items) {
    if (i.object.apiVersion === s.apiVersion) continue;
    // An object written through its storage version was pruned and defaulted with that schema
    // then: it goes as it is stored, its cached encoding sent as it is (no parse, no encode).
    if ((i.object as Record<symbol, unknown>)[COERCED_WITH] === schemaAt(t, i.object.apiVersion)) {
      send.push(i.object as Obj);
      encoded.push(i.json);
      continue;
    }
    const object = JSON.parse(i.json) as Obj;
    coerce(t, object);
    send.push(object);
    encoded.push(JSON.stringify(object));
  }
  // Each batch is finished as it comes back, while the webhook works on the others: what
  // kube's storage codec does to a converted object (prune it with the schema of the version it
  // is now at and apply that schema's defaults), then its encoding.
  const finish = (converted: Obj[]) =>
    converted.map((object) => {
      coerce(t, object);
      // Marked as read through this version, so presentAs hands the view on unchanged.
      (object as Record<symbol, unknown>)[COERCED_WITH] = s.schema;
      return { object, json: JSON.stringify(object) };
    });
  // A few reviews in flight at once (see inOrderBatches); the failure of the first failing
  // batch, as one review would report its first failing object.
  let results: { object: Obj; json: string }[][];
  try {
    results = await inOrderBatches(Math.ceil(send.length / CONVERSION_BATCH), (b) => {
      const n = b * CONVERSION_BATCH;
      const end = n + CONVERSION_BATCH;
      return convertThroughWebhook(t, send.slice(n, end), s.apiVersion, encoded.slice(n, end)).then(finish);
    });
  } catch (err) {
    throw conversionFailed(err);
  }
  const converted = results.flat();
  let k = 0;
  return items.map((i) => {
    if (i.object.apiVersion === s.apiVersion) return presentAs(t, i);
    const { object, json } = converted[k++]!;
    return { key: i.key, object: object as StoredObject['object'], revision: i.revision, json };
  });
}

/**
 * A stored object (a copy the caller owns) read for an update through `t`'s version: pruned,
 * defaulted and converted as {@link presentAs} does, so that patches apply to what a client sees.
 */
export function fromStorageVersion(t: ResourceType, obj: Obj): void {
  if (t.storedAs) {
    replaceContent(obj, t.storedAs.fromStored(obj));
    return;
  }
  if (!t.custom) return;
  coerce(t, obj);
  convert(t, obj);
}

/** A stored object as a built-in kind that shares another's storage sees it (cached per stored state). */
function presentStoredAs(t: ResourceType, as: StoredAs, stored: StoredObject): StoredObject {
  const byType = viewsOf(t);
  const cached = byType.get(stored);
  if (cached) return cached;
  // Shares the stored object's (frozen) parts; frozen itself, as every stored state is.
  const object = Object.freeze(as.fromStored(stored.object as Obj));
  const view: StoredObject = {
    key: stored.key,
    revision: stored.revision,
    object,
    json: JSON.stringify(object),
  };
  byType.set(stored, view);
  return view;
}

/** Makes `obj` hold exactly `next`'s fields, in `next`'s order (conversions happen in place). */
function replaceContent(obj: Obj, next: Obj): void {
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, next);
}
