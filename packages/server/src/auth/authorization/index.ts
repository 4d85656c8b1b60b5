/**
 * The authorization stage: whether the authenticated (and possibly impersonated) user may make
 * this request, decided by the server's {@link Authorizer} from the request's attributes, as
 * kube-apiserver's `WithAuthorization` filter does; this is where a refusal becomes the
 * apiserver's 403.
 */
import { ApiError } from 'kubeloop/api';
import { auditAuthorization } from '../../audit/context.js';
import type { RequestInfo } from '../../http/request-info.js';
import type { UserInfo } from '../authentication/user.js';
import type { AuthorizationAttributes, Authorizer } from './authorizer.js';

export type {
  AuthorizationAttributes,
  AuthorizationDecision,
  AuthorizationMode,
  Authorizer,
  RulesDecision,
} from './authorizer.js';
export {
  alwaysAllow,
  authorizerChain,
  createAuthorizer,
  PRIVILEGED_GROUP,
  rbacAuthorizer,
} from './authorizer.js';
export { RbacPolicy } from './rbac/policy.js';

/** `authorizer.Attributes` of a request, as `GetAuthorizerAttributes` builds them. */
export function requestAttributes(user: UserInfo, info: RequestInfo): AuthorizationAttributes {
  if (!info.isResourceRequest)
    return { user: user.username, groups: user.groups, nonResource: { path: info.path, verb: info.verb } };
  return {
    user: user.username,
    groups: user.groups,
    resource: {
      namespace: info.namespace,
      verb: info.verb,
      group: info.group,
      version: info.version,
      resource: info.resource,
      subresource: info.subresource,
      name: info.name,
    },
  };
}

/**
 * Refuses the request with a 403 `Forbidden` unless `authorizer` allows it, with the message
 * and details of kube-apiserver's `responsewriters.Forbidden`. An `audited` decision (the
 * request's own, not impersonation's checks) is noted in the request's audit event.
 */
export function authorizeRequest(
  user: UserInfo,
  info: RequestInfo,
  authorizer: Authorizer,
  audited = true,
): void {
  const decision = authorizer.authorize(requestAttributes(user, info));
  // The request's decision is noted for its audit event; impersonation's own checks are not.
  if (audited) auditAuthorization(decision.allowed, decision.reason);
  if (decision.allowed) return;
  const who = `User ${JSON.stringify(user.username)}`;
  const reason = decision.reason ? `: ${decision.reason}` : '';
  if (!info.isResourceRequest) {
    throw new ApiError({
      code: 403,
      reason: 'Forbidden',
      message: `forbidden: ${who} cannot ${info.verb} path ${JSON.stringify(info.path)}${reason}`,
      details: {},
    });
  }
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  const scope = info.namespace
    ? `in the namespace ${JSON.stringify(info.namespace)}`
    : 'at the cluster scope';
  throw ApiError.forbidden(
    { group: info.group, resource: info.resource },
    info.name,
    `${who} cannot ${info.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(info.group)} ${scope}${reason}`,
  );
}
