/**
 * Server-side apply (`PATCH` with `application/apply-patch+yaml`): merges the configuration into
 * the object (creating it when absent, except through a subresource), with conflicts between
 * managers.
 */
import { ApiError } from 'kubeloop/api';
import { withVersionConversions } from '../../apiextensions/managed-fields-conversion.js';
import { scaleWithManagedFields } from '../../apply/hooks.js';
import { applyConfiguration } from '../../apply/index.js';
import { cloneJson } from '../../patch/json-value.js';
import { checkNameOnUrl } from '../../registry/generic/object-meta.js';
import { isObject, type Obj } from '../../util/object.js';
import { readBody } from '../body.js';
import { queryBool } from '../params.js';
import { checkFields } from './field-validation.js';
import { decodeApplyYaml, strictDecodingLines } from './request-body.js';
import type { HandlerScope, ResourceRequest } from './scope.js';
import { updateStrategy, writeManager } from './write-options.js';

export async function apply(s: HandlerScope, r: ResourceRequest): Promise<void> {
  const { req, query, t, namespace: ns, name, dryRun } = r;
  const raw = await readBody(req);
  const manager = writeManager(req, query, 'PatchOptions', true);
  const force = queryBool(query, 'force') === true;
  const text = raw.toString('utf8');
  const validation = query.get('fieldValidation') || 'Warn';
  const config = decodeApplyYaml(text, validation === 'Strict');
  // Under Warn, what a strict decoding refuses (duplicate keys) is warned of, one line each.
  const warnings: string[] =
    validation === 'Warn' ? strictDecodingLines(text).map((line) => line.trim()) : [];
  const ctx = { dryRun, fieldManager: manager, applied: true, warnings, user: r.user };
  // Types of the configuration are checked by the typed merge; this only normalises the result
  // as decoding into the Go type does (canonical quantities, empty omitempty lists dropped).
  const normalise = (obj: Obj) => {
    checkFields(s.openapi, t, obj, undefined, new URLSearchParams({ fieldValidation: 'Ignore' }), 'patch');
    return obj;
  };
  if (r.subresource === 'scale') {
    const parent = s.rest.get(t, ns, name);
    const current = scaleWithManagedFields(t, parent.object as Obj, await s.rest.getScale(t, ns, name, true));
    const next = applyConfiguration(t, current, cloneJson(config), {
      manager,
      force,
      subresource: 'scale',
    });
    const scale = await s.rest.updateScale(t, ns, name, next, ctx);
    s.out.json(r, 200, scale, warnings);
    return;
  }
  const subresource = updateStrategy(r.subresource);
  for (let attempt = 0; ; attempt++) {
    try {
      // Through a conversion webhook, managers of other versions are compared in their versions:
      // the apply may run again on fresh copies once the conversions it asked for are made.
      const stored = await s.rest.patch(t, ns, name, subresource, ctx, (current) =>
        withVersionConversions(t, s.rest.registry, subresource, (convert) =>
          normalise(
            applyConfiguration(t, convert ? cloneJson(current) : current, cloneJson(config), {
              manager,
              force,
              subresource,
              ...(convert && { convert }),
            }),
          ),
        ),
      );
      await s.out.object(r, 200, t, stored, warnings);
      return;
    } catch (err) {
      // Apply creates a missing object, except through a subresource.
      if (!(err instanceof ApiError && err.code === 404 && err.reason === 'NotFound') || subresource)
        throw err;
      if (s.rest.store.get(s.rest.key(t, ns, name))) throw err;
    }
    const created = normalise(applyConfiguration(t, undefined, cloneJson(config), { manager, force }));
    const m = isObject(created.metadata) ? created.metadata : {};
    if (typeof m.uid === 'string' && m.uid !== '') {
      throw ApiError.conflict(
        { group: t.group, resource: t.resource },
        name,
        `uid mismatch: the provided object specified uid ${m.uid}, and no existing object was found`,
      );
    }
    // WipeObjectMetaSystemFields, then the patch handler's namespace and name checks.
    for (const f of [
      'creationTimestamp',
      'uid',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'selfLink',
    ])
      delete m[f];
    if (t.namespaced && m.namespace !== undefined && m.namespace !== '' && m.namespace !== ns) {
      throw ApiError.badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    checkNameOnUrl(m, name);
    try {
      const stored = await s.rest.create(t, ns, created, ctx);
      await s.out.object(r, 201, t, stored, warnings);
      return;
    } catch (err) {
      // Created concurrently: apply to it instead.
      if (!(err instanceof ApiError && err.reason === 'AlreadyExists') || attempt >= 3) throw err;
    }
  }
}
