/** PATCH of an object, its status or its scale (`patch`): JSON patch, merge patch, strategic merge patch; apply in `apply.ts`. */
import { ApiError, fieldErrors } from 'kubeloop/api';
import { apiVersionOf, internalPackage, type ResourceType } from '../../registry/types.js';
import { goJsonTypeName } from '../../util/go-json.js';
import { lazyModule } from '../../util/lazy-module.js';
import { isObject, type Obj } from '../../util/object.js';
import { decodeBody, mediaType, readBody } from '../body.js';
import { apply } from './apply.js';
import { checkFields, goSprint, keepManagedFieldsReset } from './field-validation.js';
import type { HandlerScope, ResourceRequest } from './scope.js';
import { updateStrategy, writeManager } from './write-options.js';

/** JSON, merge and strategic merge patch: loaded with the first such patch, not at start. */
const patches = lazyModule(() => import('../../patch/index.js'));

const PATCH_TYPES = new Set([
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
]);

/**
 * The decoded patch as the patch handler takes it, or its 400 in kube's words: decoded first as
 * a list of operations or a map (strictly unless fieldValidation=Ignore), so a `null` JSON or
 * strategic merge patch changes nothing, while a `null` merge patch is not one.
 */
function patchBody(type: string, body: unknown, query: URLSearchParams): unknown {
  const of = goJsonTypeName(body);
  if (type === 'application/json-patch+json') {
    if (body === null) return [];
    if (Array.isArray(body)) return body;
    throw ApiError.badRequest(
      query.get('fieldValidation') === 'Ignore'
        ? `json: cannot unmarshal ${of} into Go value of type jsonpatch.Patch`
        : `error decoding patch: json: cannot unmarshal ${of} into Go value of type []handlers.jsonPatchOp`,
    );
  }
  if (type === 'application/merge-patch+json') {
    if (body === null) throw ApiError.badRequest('Invalid JSON Patch');
    if (isObject(body)) return body;
    throw ApiError.badRequest(
      `error decoding patch: json: cannot unmarshal ${of} into Go value of type map[string]interface {}`,
    );
  }
  if (body === null) return {};
  if (isObject(body)) return body;
  throw ApiError.badRequest(`json: cannot unmarshal ${of} into Go value of type map[string]interface {}`);
}

/**
 * A JSON or merge patch's result is decoded by its own apiVersion and kind, as the patch handler
 * decodes it: another version of the same kind converts, anything else is kube's 422 on `patch`
 * (`converting (v1.StatefulSet) to (apps.Deployment): unknown conversion`, or `no kind "X" is
 * registered for version "g/v"`).
 */
function checkPatchedKind(s: HandlerScope, t: ResourceType, next: Obj): void {
  const own = apiVersionOf(t);
  const kind = typeof next.kind === 'string' && next.kind !== '' ? next.kind : t.kind;
  const apiVersion = typeof next.apiVersion === 'string' && next.apiVersion !== '' ? next.apiVersion : own;
  if (kind === t.kind && apiVersion === own) return;
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
  if (group === t.group && kind === t.kind && /^v\d+((alpha|beta)\d+)?$/.test(version!)) return;
  const reason = s.registry.byKind(group!, version!, kind)
    ? `converting (${version}.${kind}) to (${internalPackage(t.group)}.${t.kind}): unknown conversion`
    : `no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:100"`;
  throw ApiError.invalid({ group: '', kind: '' }, '', [
    fieldErrors.invalid('patch', JSON.stringify(next), reason),
  ]);
}

export async function patch(s: HandlerScope, r: ResourceRequest): Promise<void> {
  const { req, query, t, namespace: ns, name, dryRun } = r;
  const type = mediaType(req.headers['content-type']);
  if (!PATCH_TYPES.has(type)) {
    req.resume();
    // The route consumes the patch types only: go-restful refuses any other before a handler runs.
    throw new ApiError({
      code: 415,
      reason: 'UnsupportedMediaType',
      message: '415: Unsupported Media Type',
      details: {},
    });
  }
  if (type === 'application/apply-patch+yaml') {
    await apply(s, r);
    return;
  }
  const loading = patches.load();
  if (loading) await loading;
  const { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, patchMetaForDefinition } = patches.get();
  const meta = t.definition ? patchMetaForDefinition(t.definition) : undefined;
  if (type === 'application/strategic-merge-patch+json' && !meta) {
    req.resume();
    throw new ApiError({
      code: 415,
      reason: 'UnsupportedMediaType',
      message: `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
    });
  }
  const raw = await readBody(req);
  const fieldManager = writeManager(req, query, 'PatchOptions', false);
  const body = patchBody(type, decodeBody(raw, 'application/json'), query);
  const applyPatch = (current: Obj): Obj => {
    const next =
      type === 'application/json-patch+json'
        ? applyJsonPatch(current, body)
        : type === 'application/merge-patch+json'
          ? applyMergePatch(current, body)
          : applyStrategicMergePatch(current, body, meta);
    if (!isObject(next)) throw ApiError.badRequest('the patch did not produce an object');
    if (!t.custom && type !== 'application/strategic-merge-patch+json' && r.subresource !== 'scale')
      checkPatchedKind(s, t, next);
    return next;
  };
  const warnings: string[] = [];
  if (r.subresource === 'scale') {
    const current = await s.rest.getScale(t, ns, name, true);
    const scale = await s.rest.updateScale(t, ns, name, applyPatch(current), {
      dryRun,
      fieldManager,
      user: r.user,
      warnings,
    });
    s.out.json(r, 200, scale, warnings);
    return;
  }
  const stored = await s.rest.patch(
    t,
    ns,
    name,
    updateStrategy(r.subresource),
    { dryRun, fieldManager, warnings, user: r.user },
    (current) => {
      const next = applyPatch(current);
      // In a strict decoding error the patch handler prints a strategic merge patch as Go's
      // `%+v` of the patch map, and a JSON or merge patch as the patched object's JSON.
      const shown = () =>
        type === 'application/strategic-merge-patch+json' ? goSprint(body) : JSON.stringify(next);
      // A retried patch checks the fields again: only the last attempt's warnings are kept,
      // ahead of admission's.
      warnings.splice(
        0,
        warnings.length,
        ...keepManagedFieldsReset(next, () =>
          checkFields(s.openapi, t, next, undefined, query, 'patch', shown),
        ),
      );
      return next;
    },
  );
  await s.out.object(r, 200, t, stored, warnings);
}
