/**
 * Local admission of custom resources: the steps a Kubernetes API server takes on a create or an
 * update of a custom resource, in its order, with the same engine (`kubeloop/schema`) the local
 * control plane uses — so a verdict in a unit test is the server's verdict.
 */

import type { JsonObject as Obj } from '../../api/object.js';
import { ApiError, type StatusCause } from '../../api/status.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../../api/validation.js';
import { type CompiledSchema, compileSchema, validateCustomResource } from '../compile.js';
import type { CustomResourceDefinitionVersion, JSONSchemaProps } from '../types.js';

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Options of local validation (`Foo.validate`, `Foo.parse`). */
export interface LocalValidateOptions {
  /** The stored object, for an update (enables transition rules, `oldSelf`, and ratcheting). */
  old?: unknown;
  /** A write to the status subresource: only `status` of the input is taken. Needs `old`. */
  subresource?: 'status';
  /**
   * What unknown fields do, as the request parameter `fieldValidation`: `Strict` fails with the
   * server's 400, `Warn` (the server's default) adds warnings, `Ignore` drops them silently.
   */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** The namespace of the request URL, for namespaced kinds whose object names none (default `default`). */
  namespace?: string;
  /** Receives the warnings the server would send (`unknown field "spec.foo"`, ratcheted CEL errors). */
  warnings?: string[];
}

/** What local admission needs to know about the definition (a `ResourceDefinition` has it). */
export interface LocalKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly schema: JSONSchemaProps;
  readonly crdVersion: CustomResourceDefinitionVersion;
}

function copy(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

/** Go's `strconv.Quote` for the ASCII strings a version is made of. */
const quote = (s: string) => JSON.stringify(s);

interface Outcome {
  object: Obj;
  causes: StatusCause[];
}

function admit(k: LocalKind, input: unknown, opts: LocalValidateOptions): Outcome {
  const compiled: CompiledSchema = compileSchema(k.schema, { isResourceRoot: true });
  const statusSub = Boolean(k.crdVersion.subresources?.status);
  const old = isObj(opts.old) ? (copy(opts.old) as Obj) : undefined;
  if (!isObj(input)) throw ApiError.badRequest(`Object 'Kind' is missing in '${JSON.stringify(input)}'`);
  let obj = copy(input) as Obj;

  // The API server announces a deprecated version before anything else (a Warning header).
  if (k.crdVersion.deprecated)
    opts.warnings?.push(k.crdVersion.deprecationWarning ?? `${k.group}/${k.version} ${k.kind} is deprecated`);

  // Decoding: unknown fields, as the request's fieldValidation says.
  const mode = opts.fieldValidation ?? 'Warn';
  const unknown = compiled.prune(obj, { isResourceRoot: true }).map((p) => `unknown field "${p}"`);
  if (unknown.length > 0 && mode === 'Strict')
    throw ApiError.badRequest(
      `${k.kind} in version ${quote(k.version)} cannot be handled as a ${k.kind}: strict decoding error: ${unknown.join(', ')}`,
    );
  if (mode === 'Warn') opts.warnings?.push(...unknown);

  const meta = (o: Obj): Obj => {
    if (!isObj(o.metadata)) o.metadata = {};
    return o.metadata as Obj;
  };
  const m = meta(obj);
  if (k.namespaced) {
    if (m.namespace === undefined || m.namespace === '') m.namespace = opts.namespace ?? 'default';
  } else delete m.namespace;

  const causes: StatusCause[] = [];
  if (!old) {
    // The strategy's PrepareForCreate: a status subresource means status is not written here.
    if (statusSub) delete obj.status;
    causes.push(
      ...validateObjectMeta(m, { namespaced: k.namespaced, nameValidation: 'subdomain', create: true }),
    );
  } else {
    const om = meta(old);
    // A stored object always has a resourceVersion; one built by hand in a test may not.
    if (om.resourceVersion === undefined || om.resourceVersion === '') om.resourceVersion = '1';
    if (opts.subresource === 'status') {
      const next = copy(old) as Obj;
      if (obj.status === undefined) delete next.status;
      else next.status = obj.status;
      obj = next;
    } else if (statusSub) {
      if (old.status === undefined) delete obj.status;
      else obj.status = copy(old.status);
    }
    // PrepareForUpdate: identity and server-set fields come from the stored object.
    const nm = meta(obj);
    obj.apiVersion = `${k.group}/${k.version}`;
    obj.kind = k.kind;
    nm.name = om.name;
    if (k.namespaced) nm.namespace = om.namespace;
    nm.creationTimestamp = om.creationTimestamp;
    if (nm.uid === undefined || nm.uid === '') nm.uid = om.uid;
    for (const f of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'])
      if (om[f] !== undefined) nm[f] = om[f];
      else delete nm[f];
    if (nm.resourceVersion === undefined || nm.resourceVersion === '')
      nm.resourceVersion = om.resourceVersion;
    causes.push(
      ...validateObjectMeta(nm, { namespaced: k.namespaced, nameValidation: 'subdomain', create: false }),
    );
    causes.push(...validateObjectMetaUpdate(nm, om));
  }
  compiled.applyDefaults(obj);
  const scale = k.crdVersion.subresources?.scale;
  causes.push(
    ...validateCustomResource(
      compiled,
      obj,
      {
        group: k.group,
        version: k.version,
        kind: k.kind,
        namespaced: k.namespaced,
        ...(scale && { scale }),
      },
      old,
      {
        objectMeta: false,
        ...(opts.subresource === 'status' && { statusOnly: true }),
        ...(opts.warnings && { warnings: opts.warnings }),
      },
    ),
  );
  return { object: obj, causes };
}

/** The causes of the 422 the API server would answer (`[]` when it would accept the object). */
export function localValidate(k: LocalKind, input: unknown, opts: LocalValidateOptions = {}): StatusCause[] {
  return admit(k, input, opts).causes;
}

/** The object as the API server would store it, or the error it would answer. */
export function localParse(k: LocalKind, input: unknown, opts: LocalValidateOptions = {}): Obj {
  const { object, causes } = admit(k, input, opts);
  if (causes.length > 0) {
    const m = isObj(object.metadata) ? object.metadata : {};
    const name = (m.name as string | undefined) ?? (m.generateName as string | undefined) ?? '';
    throw ApiError.invalid({ group: k.group, kind: k.kind }, name, causes);
  }
  return object;
}
