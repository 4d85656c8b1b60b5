/** Kinds without storage (reviews, bindings, component statuses): see `VirtualResource`. */
import { ApiError } from 'kubeloop/api';
import { apiVersionOf, type VirtualContext } from '../../registry/types.js';
import type { KubeObject, StoredObject } from '../../storage/types.js';
import type { Obj } from '../../util/object.js';
import { notFound } from '../errors.js';
import { includeObject } from '../params.js';
import { table } from '../table.js';
import { readObject } from './request-body.js';
import type { HandlerScope, ResourceRequest } from './scope.js';

export async function serveVirtual(s: HandlerScope, r: ResourceRequest): Promise<void> {
  const { req, t } = r;
  const v = t.virtual!;
  const ctx: VirtualContext = {
    user: r.user,
    namespace: r.namespace,
    labelSelector: r.query.get('labelSelector') ?? undefined,
    dryRun: r.dryRun,
    authenticateToken: (token, audiences) =>
      s.authenticateToken?.(token, audiences) ?? { error: '[invalid bearer token, token lookup failed]' },
    ...(s.authorizer && { authorizer: s.authorizer }),
    postSubresource: async (target, namespace, name, body) => {
      const parent = s.registry.lookup(target.group, target.version, target.resource);
      if (!parent?.behaviour.storage?.postSubresources?.[target.subresource]) throw notFound();
      await s.rest.postSubresource(parent, namespace, name, target.subresource, body, {
        dryRun: r.dryRun,
        fieldManager: undefined,
      });
    },
  };
  if (r.verb === 'create' && v.create) {
    const { obj } = await readObject(req, t);
    s.out.json(r, 201, await v.create(obj, ctx));
    return;
  }
  req.resume();
  const items = (v.list?.(ctx) ?? []).map(
    (object): StoredObject => ({
      key: '',
      object: object as KubeObject,
      revision: 0,
      json: JSON.stringify(object),
    }),
  );
  if (r.verb === 'get') {
    const found = items.find((i) => (i.object.metadata as Obj).name === r.name);
    if (!found) throw ApiError.notFound({ group: t.group, resource: t.resource }, r.name);
    await s.out.object(r, 200, t, found);
    return;
  }
  if (r.media.representation.as === 'Table') {
    s.out.json(r, 200, table(t, items, includeObject(new URLSearchParams()), { resourceVersion: '' }));
    return;
  }
  s.out.json(r, 200, {
    kind: t.listKind,
    apiVersion: apiVersionOf(t),
    metadata: {},
    items: items.map((i) => i.object),
  });
}
