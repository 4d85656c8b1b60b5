/** PUT of an object (`update`), of its status, or of its scale. */
import { checkScaleBody } from './body-kind.js';
import { checkFields, keepManagedFieldsReset } from './field-validation.js';
import { readObject, readRequestBody } from './request-body.js';
import type { HandlerScope, ResourceRequest } from './scope.js';
import { updateStrategy, writeManager } from './write-options.js';

export async function update(s: HandlerScope, r: ResourceRequest): Promise<void> {
  const { req, query, t, dryRun } = r;
  if (r.subresource === 'scale') {
    const { obj } = await readRequestBody(req);
    checkScaleBody(s, t, obj);
    const fieldManager = writeManager(req, query, 'UpdateOptions');
    const warnings: string[] = [];
    const scale = await s.rest.updateScale(t, r.namespace, r.name, obj, {
      dryRun,
      fieldManager,
      user: r.user,
      warnings,
    });
    s.out.json(r, 200, scale, warnings);
    return;
  }
  const { obj, raw, yamlDuplicates } = await readObject(req, t);
  const fieldManager = writeManager(req, query, 'UpdateOptions');
  const warnings = keepManagedFieldsReset(obj, () =>
    checkFields(s.openapi, t, obj, raw, query, 'update', undefined, yamlDuplicates),
  );
  const stored = await s.rest.update(t, r.namespace, r.name, obj, updateStrategy(r.subresource), {
    dryRun,
    fieldManager,
    warnings,
    user: r.user,
  });
  await s.out.object(r, 200, t, stored, warnings);
}
