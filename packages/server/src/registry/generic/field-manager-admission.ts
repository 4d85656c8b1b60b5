/**
 * The order kube-apiserver's create, update and patch handlers give the field manager and
 * mutating admission: `FieldManager.UpdateNoErrors` on the decoded (so defaulted) object first,
 * then mutating admission wrapped in `managedFieldsValidatingAdmissionController`. So the fields
 * a mutating plugin adds (a webhook's patch, ServiceAccount's token volume) are owned by no
 * manager, and managed fields admission leaves undecodable are put back with kube's warning.
 */
import type { AdmissionOptions } from '../../admission/options.js';
import { manageFields } from '../../apiextensions/managed-fields-conversion.js';
import { decodeManagedFields } from '../../apply/managed-fields.js';
import { clone, isObject, meta, type Obj } from '../../util/object.js';
import type { Registry } from '../registry.js';
import type { ResourceType, UpdateStrategy } from '../types.js';
import type { WriteContext } from './errors.js';
import type { RestHooks } from './hooks.js';

/** `InvalidManagedFieldsAfterMutatingAdmissionWarningFormat`, word for word. */
const INVALID_AFTER_ADMISSION =
  '.metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: ';

/**
 * Records the write's manager in `obj`'s managed fields (unless an apply already did), then runs
 * mutating admission on it. `old` is the object updated, undefined for a create. Returns a
 * promise only when a step is asynchronous (a conversion webhook, an admission webhook): a write
 * without one goes on in the same tick.
 */
export function manageThenMutate(
  hooks: RestHooks,
  registry: Registry,
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  ctx: WriteContext,
  admission: AdmissionOptions,
  subresource?: UpdateStrategy,
): Promise<void> | undefined {
  if (ctx.fieldManager !== undefined && !ctx.applied) {
    // kube defaults an object as it decodes it, so defaulted fields belong to the writer. Here
    // defaulting runs with the strategy, after admission (a Job's selector needs the uid set
    // after it), so the field manager records a defaulted copy and only its entries are kept.
    const seen = t.behaviour.defaults ? clone(obj) : obj;
    if (seen !== obj) t.behaviour.defaults?.(seen);
    const managing = manageFields(hooks, registry, t, old, seen, ctx.fieldManager, subresource);
    if (managing)
      return managing.then(() => {
        keepManaged(obj, seen);
        return mutate(hooks, t, obj, old, admission);
      });
    keepManaged(obj, seen);
  }
  return mutate(hooks, t, obj, old, admission);
}

/** Takes the entries the field manager recorded on the defaulted copy `seen` over to `obj`. */
function keepManaged(obj: Obj, seen: Obj): void {
  if (seen === obj) return;
  const entries = isObject(seen.metadata) ? seen.metadata.managedFields : undefined;
  const m = meta(obj);
  if (entries === undefined) delete m.managedFields;
  else m.managedFields = entries;
}

/** Mutating admission, then the managed fields it left checked; a promise only when admission returned one. */
function mutate(
  hooks: RestHooks,
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  admission: AdmissionOptions,
): Promise<void> | undefined {
  if (!hooks.mutate) return undefined;
  const before = isObject(obj.metadata) ? obj.metadata.managedFields : undefined;
  const pending = hooks.mutate(old ? 'UPDATE' : 'CREATE', t, obj, old, admission);
  if (pending) return pending.then(() => checkManaged(obj, before, admission));
  checkManaged(obj, before, admission);
  return undefined;
}

/** Puts back managed fields that admission left undecodable, with kube's warning. */
function checkManaged(obj: Obj, before: unknown, admission: AdmissionOptions): void {
  // A webhook's patch replaces the object's content, metadata included: read it again.
  const m = isObject(obj.metadata) ? obj.metadata : undefined;
  // Entries admission left as they were are the field manager's own, valid: not decoded again.
  if (!m || m.managedFields === before) return;
  try {
    decodeManagedFields(m.managedFields);
  } catch (err) {
    if (before === undefined) delete m.managedFields;
    else m.managedFields = before;
    admission.warnings?.push(INVALID_AFTER_ADMISSION + (err instanceof Error ? err.message : String(err)));
  }
}
