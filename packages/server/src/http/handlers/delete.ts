/** DELETE of an object (`delete`) or of a collection (`deletecollection`), with `DeleteOptions`. */
import type { IncomingMessage } from 'node:http';
import { ApiError, fieldError } from 'kubeloop/api';
import { presentAll } from '../../apiextensions/conversion.js';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from '../../protobuf/index.js';
import { preconditionsOf } from '../../registry/generic/admission-options.js';
import { listItemObject } from '../../registry/list-item.js';
import type { DeleteParams } from '../../registry/rest.js';
import { apiVersionOf } from '../../registry/types.js';
import { goJsonTypeName } from '../../util/go-json.js';
import { isObject, type Obj } from '../../util/object.js';
import { decodeBody, mediaType, readBody } from '../body.js';
import { listParams, parseInt64, queryBool } from '../params.js';
import { FIND_KIND } from './request-body.js';
import type { HandlerScope, ResourceRequest } from './scope.js';

export async function deleteObject(s: HandlerScope, r: ResourceRequest): Promise<void> {
  const { t, name } = r;
  const opts = await deleteOptions(r.req, r.query, r.dryRun);
  const { stored, deleted } = await s.rest.delete(t, r.namespace, name, opts, {
    dryRun: opts.dryRun ?? r.dryRun,
    user: r.user,
  });
  if (deleted && !t.returnDeletedObject) {
    const m = stored.object.metadata as Obj;
    s.out.json(r, 200, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name, ...(t.group && { group: t.group }), kind: t.resource, uid: m.uid },
    });
    return;
  }
  // kube-apiserver answers 202 for a deletion left pending when orphanDependents=false was asked.
  await s.out.object(r, !deleted && opts.orphanDependents === false ? 202 : 200, t, stored);
}

export async function deleteCollection(s: HandlerScope, r: ResourceRequest): Promise<void> {
  const { t } = r;
  const opts = await deleteOptions(r.req, r.query, r.dryRun);
  const deleted = await s.rest.deleteCollection(t, r.namespace, listParams(r.query), opts, {
    dryRun: opts.dryRun ?? r.dryRun,
    user: r.user,
  });
  // The deleted objects are answered at the request's version, as a list's are.
  const items = t.custom ? await presentAll(t, deleted) : deleted;
  s.out.json(r, 200, {
    kind: t.listKind,
    apiVersion: apiVersionOf(t),
    metadata: { resourceVersion: String(s.rest.store.revision) },
    items: items.map((i) => listItemObject(t, i)),
  });
}

type DeleteOpts = DeleteParams & { dryRun?: boolean; orphanDependents?: boolean };

/** A failure of the handler's own decoding: passed on as a plain error, kube's 500 without a reason. */
const decodeFailure = (message: string) => new ApiError({ code: 500, message });

/** The Go type each DeleteOptions field decodes into, for json.Unmarshal's type errors. */
const FIELD_TYPES: Record<string, [check: (v: unknown) => boolean, goType: string]> = {
  gracePeriodSeconds: [(v) => Number.isInteger(v), 'int64'],
  propagationPolicy: [(v) => typeof v === 'string', 'v1.DeletionPropagation'],
  orphanDependents: [(v) => typeof v === 'boolean', 'bool'],
  dryRun: [(v) => Array.isArray(v), '[]string'],
  preconditions: [(v) => isObject(v), 'v1.Preconditions'],
};

/** A JSON DeleteOptions body decoded as the delete handler decodes it, or its 500. */
function decodeDeleteOptionsJson(raw: Buffer): Obj {
  let body: unknown;
  try {
    body = decodeBody(raw, 'application/json');
  } catch (err) {
    throw err instanceof ApiError ? decodeFailure(err.status.message ?? '') : err;
  }
  if (!isObject(body))
    throw decodeFailure(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonTypeName(body)} into Go value of type ${FIND_KIND}`,
    );
  // Another kind than DeleteOptions does not convert into one.
  if (typeof body.kind === 'string' && body.kind !== '' && body.kind !== 'DeleteOptions') {
    const version =
      typeof body.apiVersion === 'string' && body.apiVersion ? body.apiVersion : 'meta.k8s.io/v1';
    throw decodeFailure(
      `no kind "${body.kind}" is registered for version "${version}" in scheme "pkg/runtime/scheme.go:100"`,
    );
  }
  for (const [field, [ok, goType]] of Object.entries(FIELD_TYPES)) {
    const v = body[field];
    if (v !== undefined && v !== null && !ok(v))
      throw decodeFailure(
        `json: cannot unmarshal ${goJsonTypeName(v)} into Go struct field DeleteOptions.${field} of type ${goType}`,
      );
  }
  return body;
}

/**
 * The request's `DeleteOptions`, as the delete handler reads them: from the body (JSON or
 * protobuf) when there is one — the query's options are then not read at all, a `?dryRun=All`
 * included — else from the query; then `ValidateDeleteOptions`.
 */
async function deleteOptions(
  req: IncomingMessage,
  query: URLSearchParams,
  queryDryRun: boolean,
): Promise<DeleteOpts> {
  const opts: DeleteOpts = {};
  const raw = await readBody(req);
  let orphanSet = false;
  let policySet = false;
  if (raw.length > 0) {
    const body =
      mediaType(req.headers['content-type']) === PROTOBUF_CONTENT_TYPE
        ? (decodeProtobufObject(raw) as Obj)
        : decodeDeleteOptionsJson(raw);
    if (body.propagationPolicy !== undefined && body.propagationPolicy !== null) {
      policySet = true;
      opts.propagationPolicy = propagation(body.propagationPolicy);
    }
    if (typeof body.orphanDependents === 'boolean') {
      orphanSet = true;
      opts.orphanDependents = body.orphanDependents;
    }
    // `kubectl delete --dry-run=server` asks for the dry run in the body, not the query.
    if (body.dryRun !== undefined && body.dryRun !== null) {
      if (!Array.isArray(body.dryRun) || body.dryRun.some((v) => v !== 'All')) {
        throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
          fieldError('FieldValueNotSupported', 'dryRun', body.dryRun, 'supported values: "All"'),
        ]);
      }
      if (body.dryRun.length > 0) opts.dryRun = true;
    }
    opts.dryRun ??= false;
    if (typeof body.gracePeriodSeconds === 'number') opts.gracePeriodSeconds = body.gracePeriodSeconds;
    if (isObject(body.preconditions)) opts.preconditions = preconditionsOf(body.preconditions);
  } else {
    const qp = query.get('propagationPolicy');
    if (qp !== null) {
      policySet = true;
      opts.propagationPolicy = propagation(qp);
    }
    const orphan = queryBool(query, 'orphanDependents');
    if (orphan !== undefined) {
      orphanSet = true;
      opts.orphanDependents = orphan;
    }
    const grace = query.get('gracePeriodSeconds');
    if (grace !== null) opts.gracePeriodSeconds = parseInt64(grace);
    opts.dryRun = queryDryRun;
  }
  if (orphanSet && policySet)
    throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
      fieldError(
        'FieldValueInvalid',
        'propagationPolicy',
        opts.propagationPolicy,
        'orphanDependents and deletionPropagation cannot be both set',
      ),
    ]);
  if (opts.orphanDependents === true) opts.propagationPolicy = 'Orphan';
  // BeforeDelete: a negative grace period is taken as 1 s.
  if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0) opts.gracePeriodSeconds = 1;
  return opts;
}

function propagation(v: unknown): NonNullable<DeleteParams['propagationPolicy']> {
  if (v === 'Orphan' || v === 'Background' || v === 'Foreground') return v;
  // ValidateDeleteOptions: a field error of the DeleteOptions, so a 422 like any invalid object.
  throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
    fieldError(
      'FieldValueNotSupported',
      'propagationPolicy',
      v,
      'supported values: "Foreground", "Background", "Orphan", "nil"',
    ),
  ]);
}
