import { evictPod } from '../../registry/core/pod-eviction.js';
import { admissionOptions } from '../../registry/generic/admission-options.js';
import type { Obj } from '../../util/object.js';
import { notFound } from '../errors.js';
import { checkBodyKind } from './body-kind.js';
import { checkFields, keepManagedFieldsReset } from './field-validation.js';
import { readObject, readRequestBody } from './request-body.js';
import type { HandlerScope, ResourceRequest } from './scope.js';
import { writeManager } from './write-options.js';

export async function create(s: HandlerScope, r: ResourceRequest): Promise<void> {
  const { req, query, t } = r;
  if (r.subresource) {
    await createSubresource(s, r);
    return;
  }
  const { obj, raw, yamlDuplicates } = await readObject(req, t);
  t.behaviour.setRequester?.(obj, r.user);
  const fieldManager = writeManager(req, query, 'CreateOptions');
  const warnings = keepManagedFieldsReset(obj, () =>
    checkFields(s.openapi, t, obj, raw, query, 'create', undefined, yamlDuplicates),
  );
  const stored = await s.rest.create(t, r.namespace, obj, {
    dryRun: r.dryRun,
    fieldManager,
    warnings,
    user: r.user,
  });
  // A promise only when the answer goes through a conversion webhook.
  const sent = s.out.object(r, 201, t, stored, warnings);
  if (sent) await sent;
}

/** A subresource's own create: a ServiceAccount's TokenRequest, or a kind's `postSubresources` (`pods/binding`). */
async function createSubresource(s: HandlerScope, r: ResourceRequest): Promise<void> {
  const { req, t } = r;
  if (r.subresource === 'token') {
    const { obj } = await readRequestBody(req);
    checkBodyKind(s, obj, { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' });
    const serviceAccount = s.rest.get(t, r.namespace, r.name).object as Obj;
    s.out.json(r, 201, await s.issueServiceAccountToken!(serviceAccount, obj));
    return;
  }
  if (r.subresource === 'eviction' && t.subresources.eviction) {
    const { obj } = await readRequestBody(req);
    const ctx = { dryRun: r.dryRun, fieldManager: writeManager(req, r.query, 'CreateOptions'), user: r.user };
    // Admitted as the Eviction it is (webhooks on pods/eviction), before anything is judged.
    await s.admitSubresource?.(t, obj, {
      ...admissionOptions(ctx, 'CreateOptions', r.namespace, r.name),
      subresource: 'eviction',
      kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
    });
    const answer = await evictPod(s.rest, s.registry, t, r.namespace ?? '', r.name, obj, ctx);
    s.out.json(r, answer.code, answer.status);
    return;
  }
  if (!t.behaviour.storage?.postSubresources?.[r.subresource]) throw notFound();
  const { obj } = await readRequestBody(req);
  await s.rest.postSubresource(t, r.namespace, r.name, r.subresource, obj, {
    dryRun: r.dryRun,
    fieldManager: writeManager(req, r.query, 'CreateOptions'),
  });
  s.out.json(r, 201, SUCCESS_CREATED);
}

/** The answer of a subresource that rewrites its parent: a Success `Status`. */
const SUCCESS_CREATED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
