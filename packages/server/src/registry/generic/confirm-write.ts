/** The policy check a kind's storage makes of a user's write (`StorageHooks.confirmWrite`). */

import type { Obj } from '../../util/object.js';
import type { WriteAuthorization } from '../shared/behaviour.js';
import type { ResourceType } from '../types.js';
import type { WriteContext } from './errors.js';

/**
 * Runs `t`'s `confirmWrite` for a write of a request's user; the server's own writes (no user)
 * and a server without authorization skip it, as kube-apiserver's loopback clients do.
 */
export function confirmWrite(
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  namespace: string | undefined,
  ctx: WriteContext,
  authorization: WriteAuthorization | undefined,
): void {
  const check = t.behaviour.storage?.confirmWrite;
  if (check && ctx.user && authorization)
    check(obj, old, { user: ctx.user, namespace: namespace ?? '', authorization });
}
