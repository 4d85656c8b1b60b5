/** PATCH of an object, its status or its scale (`patch`): JSON patch, merge patch, strategic merge patch; apply in `apply.ts`. */
import { ApiError } from 'kubeloop/api';
import { goJsonTypeName } from '../../util/go-json.js';
import { lazyModule } from '../../util/lazy-module.js';
import { isObject, type Obj } from '../../util/object.js';
import { decodeBody, mediaType, readBody } from '../body.js';
import { apply } from './apply.js';
import { checkPatchedKind } from './body-kind.js';
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
  const body = patchBody(type, decodePatchBody(raw, type), query);
  const applyPatch = (current: Obj): Obj => {
    const next =
      type === 'application/json-patch+json'
        ? applyJsonPatch(current, body)
        : type === 'application/merge-patch+json'
          ? applyMergePatch(current, body)
          : applyStrategicMergePatch(current, body, meta);
    if (!isObject(next)) throw ApiError.badRequest('the patch did not produce an object');
    const scale = r.subresource === 'scale';
    if ((!t.custom || scale) && type !== 'application/strategic-merge-patch+json')
      checkPatchedKind(s, t, next, scale);
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

const JSON_SYNTAX = "couldn't get version/kind; json parse error: ";

/**
 * A JSON patch body's syntax error as the patch handler words it: `error decoding patch: …` for
 * JSON and merge patches, the scanner's words alone for a strategic merge patch.
 */
function decodePatchBody(raw: Buffer, type: string): unknown {
  try {
    return decodeBody(raw, 'application/json');
  } catch (err) {
    if (!(err instanceof ApiError) || !err.message.startsWith(JSON_SYNTAX)) throw err;
    const reason = err.message.slice(JSON_SYNTAX.length);
    throw ApiError.badRequest(
      type === 'application/strategic-merge-patch+json' ? reason : `error decoding patch: ${reason}`,
    );
  }
}
