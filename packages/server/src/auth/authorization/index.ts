/**
 * The authorization stage: whether the authenticated (and possibly impersonated) user may make
 * this request, decided by {@link authorize} from the request's attributes, as kube-apiserver's
 * `WithAuthorization` filter does. Every request is allowed until RBAC is enforced; this is where
 * a refusal becomes the apiserver's 403.
 */
import { ApiError } from 'kubeloop/api';
import type { RequestInfo } from '../../http/request-info.js';
import type { UserInfo } from '../authentication/user.js';
import { type AuthorizationAttributes, authorize } from './authorizer.js';

export type { AuthorizationAttributes, AuthorizationDecision, RulesDecision } from './authorizer.js';
export { authorize, rulesFor } from './authorizer.js';

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

/** Refuses the request with a 403 `Forbidden` (the apiserver's message) unless the user may make it. */
export function authorizeRequest(user: UserInfo, info: RequestInfo): void {
  const decision = authorize(requestAttributes(user, info));
  if (decision.allowed) return;
  const who = `User ${JSON.stringify(user.username)}`;
  if (!info.isResourceRequest) {
    throw new ApiError({
      code: 403,
      reason: 'Forbidden',
      message: `forbidden: ${who} cannot ${info.verb} path ${JSON.stringify(info.path)}${reasonSuffix(decision.reason)}`,
      details: {},
    });
  }
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  const scope = info.namespace
    ? `in the namespace ${JSON.stringify(info.namespace)}`
    : 'at the cluster scope';
  throw ApiError.forbidden(
    { group: info.group, resource },
    info.name,
    `${who} cannot ${info.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(info.group)} ${scope}${reasonSuffix(decision.reason)}`,
  );
}

const reasonSuffix = (reason: string | undefined) => (reason ? `: ${reason}` : '');
