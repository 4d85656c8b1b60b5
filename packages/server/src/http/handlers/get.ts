/** GET of one object (`get`), or of its scale subresource. */
import { checkGetResourceVersion } from '../../registry/generic/list.js';
import type { HandlerScope, ResourceRequest } from './scope.js';

/** Synchronous unless the object goes through a conversion webhook. */
export function get(s: HandlerScope, r: ResourceRequest): void | Promise<void> {
  const resourceVersion = r.query.get('resourceVersion') ?? undefined;
  if (r.subresource === 'scale') {
    checkGetResourceVersion(s.rest.store, resourceVersion);
    const scale = s.rest.getScale(r.t, r.namespace, r.name);
    if (scale instanceof Promise) return scale.then((v) => s.out.json(r, 200, v));
    s.out.json(r, 200, scale);
    return;
  }
  return s.out.object(r, 200, r.t, s.rest.get(r.t, r.namespace, r.name, resourceVersion));
}
