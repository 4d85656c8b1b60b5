/**
 * What the generic registry does to `metadata` on every write, whatever the kind: generated
 * names, the request namespace, the fields only the server sets, and the update rules of
 * `ValidateObjectMetaUpdate` and the strategies' PrepareForUpdate.
 */
import { ApiError, fieldError, rawFieldValue, type StatusCause } from 'kubeloop/api';
import { clone, isObject, meta, type Obj } from '../../util/object.js';
import { apiVersionOf, type ResourceType, type UpdateStrategy } from '../types.js';

/** Random suffix of `generateName` (apimachinery's alphabet: no vowels, no confusable digits). */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
export function randomSuffix(n = 5): string {
  let s = '';
  for (let i = 0; i < n; i++) s += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return s;
}

/** The string elements of an array field. */
export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * What `metadata.generation` tracks: everything but metadata and, when the kind has a status
 * subresource, status (a custom resource without one bumps its generation on status changes too).
 */
export function specOf(t: ResourceType, obj: Obj): Obj {
  const { metadata: _m, status, ...rest } = obj;
  return t.subresources.status ? rest : { ...rest, status };
}

/** A `metav1.Time` as Go's `time.Time.String()` prints it (`2030-01-01 00:00:00 +0000 UTC`). */
function goTime(v: unknown): unknown {
  const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  if (Number.isNaN(ms)) return v;
  const iso = new Date(ms).toISOString();
  const frac = iso.slice(20, 23).replace(/0+$/, '');
  return rawFieldValue(`${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac ? `.${frac}` : ''} +0000 UTC`);
}

/** ValidateObjectMetaUpdate: finalizers during deletion, and fields that cannot change. */
export function metaUpdateCauses(nm: Obj, om: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  if (om.deletionTimestamp) {
    const before = new Set(strings(om.finalizers));
    const added = strings(nm.finalizers).filter((f) => !before.has(f));
    if (added.length > 0) {
      causes.push(
        fieldError(
          'FieldValueForbidden',
          'metadata.finalizers',
          undefined,
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  const immutable = (field: string, value: unknown) =>
    causes.push(fieldError('FieldValueInvalid', `metadata.${field}`, value, 'field is immutable'));
  if (nm.uid !== om.uid) immutable('uid', nm.uid);
  // PrepareForUpdate keeps the stored ones; a request can only add them, which is refused.
  if (nm.deletionTimestamp !== om.deletionTimestamp)
    immutable('deletionTimestamp', goTime(nm.deletionTimestamp));
  if (nm.deletionGracePeriodSeconds !== om.deletionGracePeriodSeconds)
    immutable('deletionGracePeriodSeconds', nm.deletionGracePeriodSeconds);
  return causes;
}

/** Finalizers every built-in kind accepts without a domain (core's `standardFinalizers`). */
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/**
 * Groups whose kinds validate their metadata with apimachinery's generic `ValidateObjectMeta`
 * rather than core's, which adds the finalizer rule below (checked against kube-apiserver: a
 * Lease, a PodDisruptionBudget, a webhook configuration, a RuntimeClass, a CRD and an APIService
 * take `nodomain`; every other built-in kind refuses it).
 */
const GENERIC_META_GROUPS = new Set([
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'coordination.k8s.io',
  'node.k8s.io',
  'policy',
]);

/**
 * Core validation's `validateKubeFinalizerName`, which built-in kinds run after the generic
 * metadata rules on create and update: a finalizer without a `/` must be one of the standard
 * ones. Custom resources, the groups above and core/v1 Events (validated the legacy way for
 * backwards compatibility; events.k8s.io/v1 Events are checked) take any qualified name.
 */
export function kubeFinalizerCauses(t: ResourceType, m: Obj): StatusCause[] {
  if (t.custom || GENERIC_META_GROUPS.has(t.group) || (t.group === '' && t.kind === 'Event')) return [];
  const causes: StatusCause[] = [];
  strings(m.finalizers).forEach((f, i) => {
    if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
      causes.push(
        fieldError(
          'FieldValueInvalid',
          `metadata.finalizers[${i}]`,
          f,
          'name is neither a standard finalizer name nor is it fully qualified',
        ),
      );
    }
  });
  return causes;
}

/**
 * The handlers' `checkName` of an update, a patch's result or an apply: an object (a Scale too)
 * without a name, or named otherwise than its URL, is a 400.
 */
export function checkNameOnUrl(m: Obj, name: string): void {
  if (m.name === undefined || m.name === null || m.name === '') {
    throw ApiError.badRequest(
      `the name of the object (${name} based on URL) was undeterminable: name must be provided`,
    );
  }
  if (m.name !== name) {
    throw ApiError.badRequest(
      `the name of the object (${String(m.name)}) does not match the name on the URL (${name})`,
    );
  }
}

/**
 * `rest.EnsureObjectNamespaceMatchesRequestNamespace`: an object without a namespace takes the
 * URL's, a cluster-scoped object loses its namespace, and a different one is a 400.
 */
export function checkNamespace(t: ResourceType, m: Obj, namespace: string | undefined): void {
  if (!t.namespaced) {
    delete m.namespace;
    return;
  }
  if (m.namespace !== undefined && m.namespace !== '' && m.namespace !== namespace) {
    throw ApiError.badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  m.namespace = namespace;
}

/** Whether a resourceVersion parses as a non-zero uint64, as apimachinery's versioner reads it. */
export function hasResourceVersion(rv: unknown): boolean {
  if (typeof rv !== 'string' || !/^\d+$/.test(rv)) return false;
  const n = BigInt(rv);
  return n > 0n && n < 2n ** 64n;
}

/**
 * The strategy's PrepareForUpdate: what a write to the main resource or `/status` may change (a
 * status write: what the kind's {@link ResourceType.statusStrategy} does not reset).
 */
export function prepareUpdate(
  t: ResourceType,
  input: Obj,
  old: Obj,
  oldJson: string,
  subresource: UpdateStrategy,
  namespace: string | undefined,
): Obj {
  const om = old.metadata as Obj;
  let next: Obj;
  const ss = subresource === 'status' ? t.statusStrategy : undefined;
  if (ss) {
    // The kind's status strategy: the request's object, but for what the strategy resets (the
    // copies are of those fields only; later steps mutate `next`, and old is shared).
    next = input;
    for (const f of ss.keep) {
      if (old[f] === undefined) delete next[f];
      else next[f] = clone(old[f]);
    }
    const nm = meta(next);
    for (const f of ss.keepMetadata) {
      if (om[f] === undefined) delete nm[f];
      else nm[f] = clone(om[f]);
    }
  } else if (subresource === 'status') {
    // `oldJson` is old's encoding: its parse is the deep copy.
    next = JSON.parse(oldJson) as Obj;
    if (input.status === undefined) delete next.status;
    else next.status = input.status;
    // A status write may not touch metadata, except the resourceVersion precondition and the
    // managed fields the field manager computed for this write (the status strategies keep them).
    const mf = isObject(input.metadata) ? input.metadata.managedFields : undefined;
    if (mf !== undefined) meta(next).managedFields = mf;
  } else if (subresource === 'ephemeralcontainers') {
    // dropNonEphemeralContainerUpdates: the stored pod, with the request's ephemeral containers
    // (and the managed fields the field manager computed for this write).
    next = JSON.parse(oldJson) as Obj;
    if (!isObject(next.spec)) next.spec = {};
    const spec = next.spec as Obj;
    const ephemeral = isObject(input.spec) ? input.spec.ephemeralContainers : undefined;
    if (ephemeral === undefined) delete spec.ephemeralContainers;
    else spec.ephemeralContainers = ephemeral;
    const mf = isObject(input.metadata) ? input.metadata.managedFields : undefined;
    if (mf !== undefined) meta(next).managedFields = mf;
  } else {
    next = input;
    if (t.subresources.status) {
      if (old.status === undefined) delete next.status;
      else next.status = clone(old.status);
    }
  }
  const nm = meta(next);
  next.apiVersion = apiVersionOf(t);
  next.kind = t.kind;
  nm.name = om.name;
  if (t.namespaced) nm.namespace = namespace;
  else delete nm.namespace;
  // Fields only the server sets.
  nm.creationTimestamp = om.creationTimestamp;
  if (nm.uid === undefined || nm.uid === '') nm.uid = om.uid;
  // BeforeUpdate: an update never removes or changes a deletion timestamp or grace period; one
  // it adds is left for validation to refuse.
  if (om.deletionTimestamp !== undefined) nm.deletionTimestamp = om.deletionTimestamp;
  if (om.deletionGracePeriodSeconds !== undefined && nm.deletionGracePeriodSeconds === undefined)
    nm.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds;
  if (om.generation !== undefined) nm.generation = om.generation;
  else delete nm.generation;
  if (om.generateName !== undefined && nm.generateName === undefined) nm.generateName = om.generateName;
  delete nm.selfLink;
  return next;
}
