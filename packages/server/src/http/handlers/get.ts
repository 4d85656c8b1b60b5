/** GET of one object (`get`), or of its scale subresource. */
import type { HandlerScope, ResourceRequest } from './scope.js';

export function get(s: HandlerScope, r: ResourceRequest): void {
  if (r.subresource === 'scale') {
    s.out.json(r, 200, s.rest.getScale(r.t, r.namespace, r.name));
    return;
  }
  s.out.object(r, 200, r.t, s.rest.get(r.t, r.namespace, r.name));
}
