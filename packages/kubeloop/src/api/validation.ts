/**
 * Name and metadata validation with the exact messages of a Kubernetes 1.32 API server.
 *
 * The functions mirror apimachinery's `util/validation` (`IsDNS1123Subdomain`, `IsQualifiedName`,
 * …), `util/validation/field` (how a field error is rendered) and `api/validation`
 * (`ValidateObjectMetaAccessor`). Clients such as kubectl and controller tests compare these
 * strings, so every message is spelled the way the Go code spells it, quirks included (the
 * double space in `(e.g. 'MyName',  or 'my.name', …)` is real).
 *
 * @example
 * ```ts
 * const causes = validateObjectMeta({ name: 'Bad_Name' }, { namespaced: false, nameValidation: 'subdomain', create: true });
 * throw ApiError.invalid({ group: '', kind: 'ConfigMap' }, 'Bad_Name', causes);
 * // ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain …
 * ```
 */

import { fieldErrors, goQuote, goStringSlice, isObj, printable, rawFieldValue } from './field-errors.js';
import {
  isQualifiedName,
  isValidLabelValue,
  type NameValidation,
  TOTAL_ANNOTATION_SIZE_LIMIT_BYTES,
  utf8Length,
  validateName,
} from './names.js';
import type { JsonObject as Obj } from './object.js';
import type { StatusCause } from './status.js';

// ---------------------------------------------------------------------------------------------
// api/validation: ObjectMeta
// ---------------------------------------------------------------------------------------------

/** JSON type name of a value, as OpenAPI validation reports it. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

// The wording of a schema type error, e.g. `metadata.labels in body must be of type object: "string"`.
const typeError = (field: string, value: unknown, want: string): StatusCause => {
  const got = jsonType(value);
  return fieldErrors.typeInvalid(field, got, `${field} in body must be of type ${want}: ${goQuote(got)}`);
};

/** Reads an optional string field; wrong types are reported and read as absent. */
function optString(meta: Obj, key: string, path: string, errs: StatusCause[]): string {
  const v = meta[key];
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  errs.push(typeError(path, v, 'string'));
  return '';
}

/** Reads an optional `map[string]string`; wrong types are reported and skipped. */
function optStringMap(meta: Obj, key: string, path: string, errs: StatusCause[]): Array<[string, string]> {
  const v = meta[key];
  if (v === undefined || v === null) return [];
  if (!isObj(v)) {
    errs.push(typeError(path, v, 'object'));
    return [];
  }
  const out: Array<[string, string]> = [];
  for (const [k, val] of Object.entries(v)) {
    if (typeof val === 'string') out.push([k, val]);
    else errs.push(typeError(`${path}.${k}`, val, 'string'));
  }
  return out;
}

/** Reads an optional array; wrong types are reported and read as empty. */
function optArray(meta: Obj, key: string, path: string, errs: StatusCause[]): unknown[] {
  const v = meta[key];
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  errs.push(typeError(path, v, 'array'));
  return [];
}

/** The name validation rule applies; the caller picks it per kind. */
export interface ValidateObjectMetaOptions {
  /** Whether the kind is namespaced (namespace required) or cluster-scoped (namespace forbidden). */
  namespaced: boolean;
  /** Rule for `metadata.name` and `metadata.generateName`. */
  nameValidation: NameValidation;
  /**
   * True on create: an empty name is accepted when `generateName` is set (the server generates
   * the name). Otherwise a name is always required.
   */
  create: boolean;
}

const FINALIZER_ORPHAN = 'orphan';
const FINALIZER_FOREGROUND = 'foregroundDeletion';

/**
 * Validates the metadata a client sent, like apimachinery's `ValidateObjectMetaAccessor`:
 * generateName and name by the kind's rule, namespace by scope, generation, labels, annotations
 * (keys and the 256 KiB total), owner references, finalizers and managedFields. Values of the
 * wrong JSON type are reported as `FieldValueTypeInvalid` in the wording of OpenAPI validation.
 *
 * Returns the causes in the order the Go code produces them; `[]` means valid.
 *
 * @example
 * ```ts
 * const causes = validateObjectMeta(obj.metadata, { namespaced: true, nameValidation: 'subdomain', create: true });
 * if (causes.length > 0) throw ApiError.invalid({ group: '', kind: 'ConfigMap' }, name, causes);
 * ```
 */
export function validateObjectMeta(meta: unknown, opts: ValidateObjectMetaOptions): StatusCause[] {
  const errs: StatusCause[] = [];
  if (meta !== undefined && meta !== null && !isObj(meta)) return [typeError('metadata', meta, 'object')];
  const m: Obj = isObj(meta) ? meta : {};

  const generateName = optString(m, 'generateName', 'metadata.generateName', errs);
  const name = optString(m, 'name', 'metadata.name', errs);
  const namespace = optString(m, 'namespace', 'metadata.namespace', errs);

  if (generateName.length > 0) {
    for (const msg of validateName(generateName, opts.nameValidation, true)) {
      errs.push(fieldErrors.invalid('metadata.generateName', generateName, msg));
    }
  }
  if (name.length === 0) {
    // The server fills the name in from generateName before it validates, so only a missing
    // pair is an error there.
    if (!(opts.create && generateName.length > 0)) {
      errs.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
    }
  } else {
    for (const msg of validateName(name, opts.nameValidation))
      errs.push(fieldErrors.invalid('metadata.name', name, msg));
  }

  if (opts.namespaced) {
    if (namespace.length === 0) errs.push(fieldErrors.required('metadata.namespace'));
    else
      for (const msg of validateName(namespace, 'label'))
        errs.push(fieldErrors.invalid('metadata.namespace', namespace, msg));
  } else if (namespace.length > 0) {
    errs.push(fieldErrors.forbidden('metadata.namespace', 'not allowed on this type'));
  }

  const generation = m.generation;
  if (generation !== undefined && generation !== null) {
    if (typeof generation !== 'number' || !Number.isInteger(generation)) {
      errs.push(typeError('metadata.generation', generation, 'integer'));
    } else if (generation < 0) {
      errs.push(fieldErrors.invalid('metadata.generation', generation, 'must be greater than or equal to 0'));
    }
  }

  errs.push(...validateLabels(optStringMap(m, 'labels', 'metadata.labels', errs), 'metadata.labels'));
  errs.push(
    ...validateAnnotations(
      optStringMap(m, 'annotations', 'metadata.annotations', errs),
      'metadata.annotations',
    ),
  );
  errs.push(
    ...validateOwnerReferences(
      optArray(m, 'ownerReferences', 'metadata.ownerReferences', errs),
      'metadata.ownerReferences',
    ),
  );

  const finalizers: string[] = [];
  optArray(m, 'finalizers', 'metadata.finalizers', errs).forEach((f, i) => {
    if (typeof f === 'string') finalizers.push(f);
    else errs.push(typeError(`metadata.finalizers[${i}]`, f, 'string'));
  });
  errs.push(...validateFinalizers(finalizers, 'metadata.finalizers'));

  errs.push(
    ...validateManagedFields(
      optArray(m, 'managedFields', 'metadata.managedFields', errs),
      'metadata.managedFields',
    ),
  );
  return errs;
}

type StringPairs = Iterable<[string, string]> | Readonly<Record<string, string>>;

const entriesOf = (pairs: StringPairs): Iterable<[string, string]> =>
  Symbol.iterator in pairs ? (pairs as Iterable<[string, string]>) : Object.entries(pairs);

/** Label keys and values, each error on the labels field itself (apimachinery `ValidateLabels`). */
export function validateLabels(labels: StringPairs, field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  for (const [k, v] of entriesOf(labels)) {
    for (const msg of isQualifiedName(k)) errs.push(fieldErrors.invalid(field, k, msg));
    for (const msg of isValidLabelValue(v)) errs.push(fieldErrors.invalid(field, v, msg));
  }
  return errs;
}

/** Annotation keys (qualified names, case-insensitive) and their total size (apimachinery `ValidateAnnotations`). */
export function validateAnnotations(annotations: StringPairs, field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  const entries = [...entriesOf(annotations)];
  let total = 0;
  for (const [k, v] of entries) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(fieldErrors.invalid(field, k, msg));
    total += utf8Length(k) + utf8Length(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES)
    errs.push(fieldErrors.tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  return errs;
}

/** Splits an apiVersion like apimachinery's `schema.FromAPIVersionAndKind`. */
function parseApiVersion(apiVersion: string): { group: string; version: string } {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  const slashes = apiVersion.split('/').length - 1;
  if (slashes === 0) return { group: '', version: apiVersion };
  if (slashes === 1) {
    const i = apiVersion.indexOf('/');
    return { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
  }
  return { group: '', version: '' };
}

/**
 * Owner references (apimachinery `ValidateOwnerReferences`): apiVersion with a version, kind,
 * name and uid present, no `v1` Event owner, at most one `controller: true`. Errors point at the
 * list itself, not at an index, exactly as the Go code does.
 */
export function validateOwnerReferences(refs: readonly unknown[], field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  let firstController = '';
  refs.forEach((raw, i) => {
    const at = `${field}[${i}]`;
    if (!isObj(raw)) {
      errs.push(typeError(at, raw, 'object'));
      return;
    }
    const str = (key: string): string => {
      const v = raw[key];
      if (v === undefined || v === null) return '';
      if (typeof v === 'string') return v;
      errs.push(typeError(`${at}.${key}`, v, 'string'));
      return '';
    };
    const bool = (key: string): boolean => {
      const v = raw[key];
      if (v === undefined || v === null) return false;
      if (typeof v === 'boolean') return v;
      errs.push(typeError(`${at}.${key}`, v, 'boolean'));
      return false;
    };
    const apiVersion = str('apiVersion');
    const kind = str('kind');
    const name = str('name');
    const uid = str('uid');
    const controller = bool('controller');
    bool('blockOwnerDeletion');

    const gv = parseApiVersion(apiVersion);
    if (gv.version.length === 0)
      errs.push(fieldErrors.invalid(`${field}.apiVersion`, apiVersion, 'version must not be empty'));
    if (kind.length === 0) errs.push(fieldErrors.invalid(`${field}.kind`, kind, 'kind must not be empty'));
    if (name.length === 0) errs.push(fieldErrors.invalid(`${field}.name`, name, 'name must not be empty'));
    if (uid.length === 0) errs.push(fieldErrors.invalid(`${field}.uid`, uid, 'uid must not be empty'));
    if (gv.group === '' && gv.version === 'v1' && kind === 'Event') {
      errs.push(fieldErrors.invalid(field, raw, `/v1, Kind=Event is disallowed from being an owner`));
    }
    if (controller) {
      const current = `${kind}/${name}`;
      if (firstController !== '') {
        errs.push(
          fieldErrors.invalid(
            field,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  });
  return errs;
}

/** Finalizer names are qualified names; `orphan` and `foregroundDeletion` exclude each other. */
export function validateFinalizers(finalizers: readonly string[], field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  for (const f of finalizers) {
    for (const msg of isQualifiedName(f)) errs.push(fieldErrors.invalid(field, f, msg));
  }
  if (finalizers.includes(FINALIZER_ORPHAN) && finalizers.includes(FINALIZER_FOREGROUND)) {
    errs.push(
      fieldErrors.invalid(
        field,
        finalizers,
        `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`,
      ),
    );
  }
  return errs;
}

/** `%#U` of a rune: `U+0007`, or `U+00E9 'é'` when printable. */
function goRuneU(cp: number): string {
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const ch = String.fromCodePoint(cp);
  return printable.test(ch) ? `${hex} '${ch}'` : hex;
}

/** managedFields entries (apimachinery `ValidateManagedFields`). */
export function validateManagedFields(entries: readonly unknown[], field: string): StatusCause[] {
  const errs: StatusCause[] = [];
  // A loop without closures, each path built only for an error: every write validates its entries.
  for (let i = 0; i < entries.length; i++) {
    const raw = entries[i];
    if (!isObj(raw)) {
      errs.push(typeError(`${field}[${i}]`, raw, 'object'));
      continue;
    }
    const operation = entryString(raw, 'operation', field, i, errs);
    if (operation !== 'Apply' && operation !== 'Update') {
      errs.push(fieldErrors.invalid(`${field}[${i}].operation`, operation, 'must be `Apply` or `Update`'));
    }
    const fieldsType = entryString(raw, 'fieldsType', field, i, errs);
    if (fieldsType.length > 0 && fieldsType !== 'FieldsV1') {
      errs.push(fieldErrors.invalid(`${field}[${i}].fieldsType`, fieldsType, 'must be `FieldsV1`'));
    }
    const manager = entryString(raw, 'manager', field, i, errs);
    const managerErrs = validateFieldManager(manager, `${field}[${i}].manager`);
    if (managerErrs.length > 0) errs.push(...managerErrs);
    if (utf8Length(entryString(raw, 'subresource', field, i, errs)) > 256)
      errs.push(fieldErrors.tooLong(`${field}[${i}].subresource`, 256));
  }
  return errs;
}

/** A string field of a managed fields entry: '' when absent or null, else a type error and ''. */
function entryString(raw: Obj, key: string, field: string, i: number, errs: StatusCause[]): string {
  const v = raw[key];
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  errs.push(typeError(`${field}[${i}].${key}`, v, 'string'));
  return '';
}

/** A field manager name: at most 128 bytes of printable characters (apimachinery `ValidateFieldManager`). */
export function validateFieldManager(manager: string, field: string): StatusCause[] {
  // Printable ASCII (every manager a client names in practice) is one byte a character, all printable.
  if (isPrintableAscii(manager)) return manager.length > 128 ? [fieldErrors.tooLong(field, 128)] : [];
  const errs: StatusCause[] = [];
  if (utf8Length(manager) > 128) errs.push(fieldErrors.tooLong(field, 128));
  let pos = 0;
  for (const ch of manager) {
    const cp = ch.codePointAt(0) ?? 0;
    if (!printable.test(ch)) {
      errs.push(fieldErrors.invalid(field, manager, `invalid character ${goRuneU(cp)} (at position ${pos})`));
    }
    pos += utf8Length(ch);
  }
  return errs;
}

/** Whether every character of `s` is printable ASCII (U+0020–U+007E), which Go's `unicode.IsPrint` accepts. */
function isPrintableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** Formats an RFC 3339 timestamp like Go's `time.Time.String()` in UTC, as immutability errors print it. */
function goTime(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return v;
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return rawFieldValue(
    `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000 UTC`,
  );
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Validates metadata on update against the stored object (apimachinery
 * `ValidateObjectMetaAccessorUpdate`): no new finalizers once deletion started, a
 * resourceVersion is present, generation never decreases, and name, namespace, uid,
 * creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds are immutable. Labels,
 * annotations, owner references and managedFields are checked like on create; call
 * {@link validateObjectMeta} (create: false) for the name, namespace and type checks.
 */
export function validateObjectMetaUpdate(newMeta: unknown, oldMeta: unknown): StatusCause[] {
  const errs: StatusCause[] = [];
  const n: Obj = isObj(newMeta) ? newMeta : {};
  const o: Obj = isObj(oldMeta) ? oldMeta : {};
  const strs = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

  if (o.deletionTimestamp !== undefined && o.deletionTimestamp !== null) {
    const old = new Set(strs(o.finalizers));
    const extra = [...new Set(strs(n.finalizers).filter((f) => !old.has(f)))].sort();
    if (extra.length > 0) {
      errs.push(
        fieldErrors.forbidden(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(extra)}`,
        ),
      );
    }
  }
  const rv = typeof n.resourceVersion === 'string' ? n.resourceVersion : '';
  if (rv.length === 0)
    errs.push(fieldErrors.invalid('metadata.resourceVersion', rv, 'must be specified for an update'));

  const gen = (v: unknown) => (typeof v === 'number' ? v : 0);
  if (gen(n.generation) < gen(o.generation)) {
    errs.push(fieldErrors.invalid('metadata.generation', gen(n.generation), 'must not be decremented'));
  }

  const immutable = (key: string, render: (v: unknown) => unknown, absent: unknown) => {
    if (!sameJson(n[key], o[key])) {
      const v = n[key];
      errs.push(
        fieldErrors.invalid(
          `metadata.${key}`,
          v === undefined || v === null ? absent : render(v),
          'field is immutable',
        ),
      );
    }
  };
  const id = (v: unknown) => v;
  immutable('name', id, '');
  immutable('namespace', id, '');
  immutable('uid', id, '');
  immutable('creationTimestamp', goTime, rawFieldValue('0001-01-01 00:00:00 +0000 UTC'));
  immutable('deletionTimestamp', goTime, null);
  immutable('deletionGracePeriodSeconds', id, null);

  const scratch: StatusCause[] = [];
  errs.push(...validateLabels(optStringMap(n, 'labels', 'metadata.labels', scratch), 'metadata.labels'));
  errs.push(
    ...validateAnnotations(
      optStringMap(n, 'annotations', 'metadata.annotations', scratch),
      'metadata.annotations',
    ),
  );
  errs.push(
    ...validateOwnerReferences(
      optArray(n, 'ownerReferences', 'metadata.ownerReferences', scratch),
      'metadata.ownerReferences',
    ),
  );
  errs.push(
    ...validateManagedFields(
      optArray(n, 'managedFields', 'metadata.managedFields', scratch),
      'metadata.managedFields',
    ),
  );
  return errs;
}
export * from './field-errors.js';
export * from './names.js';
