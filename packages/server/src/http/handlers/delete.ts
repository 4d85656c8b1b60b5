/** DELETE of an object (`delete`) or of a collection (`deletecollection`), with `DeleteOptions`. */
import type { IncomingMessage } from 'node:http';
import { ApiError, fieldError } from 'kubeloop/api';
import { presentAll } from '../../apiextensions/conversion.js';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from '../../protobuf/index.js';
import { preconditionsOf } from '../../registry/generic/admission-options.js';
import { listItemObject } from '../../registry/list-item.js';
import type { DeleteParams } from '../../registry/rest.js';
import { apiVersionOf } from '../../registry/types.js';
import { isObject, type Obj } from '../../util/object.js';
import { decodeBody, mediaType, readBody } from '../body.js';
import { listParams, parseInt64, queryBool } from '../params.js';
import type { HandlerScope, ResourceRequest } from './scope.js';

export async function deleteObject(s: HandlerScope, r: ResourceRequest): Promise<void> {
  const { t, name } = r;
  const opts = await deleteOptions(r.req, r.query);
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
  const opts = await deleteOptions(r.req, r.query);
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

/** The `DeleteOptions` of the body (JSON or protobuf) and the query. */
async function deleteOptions(
  req: IncomingMessage,
  query: URLSearchParams,
): Promise<DeleteParams & { dryRun?: boolean; orphanDependents?: boolean }> {
  const opts: DeleteParams & { dryRun?: boolean; orphanDependents?: boolean } = {};
  const raw = await readBody(req);
  if (raw.length > 0) {
    const body =
      mediaType(req.headers['content-type']) === PROTOBUF_CONTENT_TYPE
        ? decodeProtobufObject(raw)
        : decodeBody(raw, 'application/json');
    if (!isObject(body)) throw ApiError.badRequest('DeleteOptions must be an object');
    if (body.propagationPolicy !== undefined) opts.propagationPolicy = propagation(body.propagationPolicy);
    if (body.orphanDependents === true) opts.propagationPolicy = 'Orphan';
    if (typeof body.orphanDependents === 'boolean') opts.orphanDependents = body.orphanDependents;
    // `kubectl delete --dry-run=server` asks for the dry run in the body, not the query.
    if (body.dryRun !== undefined && body.dryRun !== null) {
      if (!Array.isArray(body.dryRun) || body.dryRun.some((v) => v !== 'All')) {
        throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
          fieldError('FieldValueNotSupported', 'dryRun', body.dryRun, 'supported values: "All"'),
        ]);
      }
      if (body.dryRun.length > 0) opts.dryRun = true;
    }
    if (typeof body.gracePeriodSeconds === 'number') opts.gracePeriodSeconds = body.gracePeriodSeconds;
    if (isObject(body.preconditions)) opts.preconditions = preconditionsOf(body.preconditions);
  }
  const qp = query.get('propagationPolicy');
  if (qp !== null) opts.propagationPolicy = propagation(qp);
  const orphan = queryBool(query, 'orphanDependents');
  if (orphan !== undefined) opts.orphanDependents = orphan;
  if (orphan === true) opts.propagationPolicy = 'Orphan';
  const grace = query.get('gracePeriodSeconds');
  if (grace !== null) opts.gracePeriodSeconds = parseInt64(grace);
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
