/**
 * The impersonation stage, between authentication and authorization as in kube-apiserver's
 * `WithImpersonation` filter (k8s.io/apiserver pkg/endpoints/filters/impersonation.go): a request
 * with `Impersonate-User`/`-Group`/`-Uid`/`-Extra-<key>` headers is served as the user they name,
 * once the authenticated user may `impersonate` each of them; the first one it may not is the
 * request's 403.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestInfo } from '../../http/request-info.js';
import type { UserInfo } from '../authentication/user.js';
import { type Authorizer, authorizeRequest } from '../authorization/index.js';

/** A user as impersonation makes it: with the `extra` the headers give. */
export interface ImpersonatedUser extends UserInfo {
  extra?: Record<string, string[]>;
}

/** What {@link impersonate} decides: the user to serve the request as, or kube's plain-text 500. */
export type Impersonation = { user: ImpersonatedUser } | { internalError: string };

/** One thing to impersonate (kube's `ObjectReference` of it). */
interface Target {
  kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';
  namespace: string;
  name: string;
  apiVersion: string;
  /** The extra's key, for `UserExtra`. */
  fieldPath: string;
}

const AUTHN_V1 = 'authentication.k8s.io/v1';
const SA_PREFIX = 'system:serviceaccount:';
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `serviceaccount.SplitUsername`: the namespace and name of a service account's username. */
function splitServiceAccount(username: string): [string, string] | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const parts = username.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [ns, name] = parts as [string, string];
  if (ns.length > 63 || !DNS1123_LABEL.test(ns)) return undefined;
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) return undefined;
  return [ns, name];
}

/** `url.PathUnescape`, or the key as it is when it is malformed. */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** `%v` of an ObjectReference (Go prints its fields in order, space-separated). */
const goReference = (t: Target): string =>
  `{${[t.kind, t.namespace, t.name, '', t.apiVersion, '', t.fieldPath].join(' ')}}`;

/** `buildImpersonationRequests`: what the headers ask to impersonate, in kube's order. */
function targets(req: IncomingMessage): Target[] | { internalError: string } {
  const headers = req.headersDistinct;
  const out: Target[] = [];
  const target = (kind: Target['kind'], name: string, extra: Partial<Target> = {}): Target => ({
    kind,
    namespace: '',
    name,
    apiVersion: '',
    fieldPath: '',
    ...extra,
  });
  const user = headers['impersonate-user']?.[0] ?? '';
  if (user) {
    const sa = splitServiceAccount(user);
    out.push(sa ? target('ServiceAccount', sa[1], { namespace: sa[0] }) : target('User', user));
  }
  const groups = headers['impersonate-group'] ?? [];
  for (const g of groups) out.push(target('Group', g));
  let hasExtra = false;
  for (const [header, values] of Object.entries(headers)) {
    if (!header.startsWith('impersonate-extra-') || !values) continue;
    hasExtra = true;
    const key = unescapeExtraKey(header.slice('impersonate-extra-'.length));
    for (const v of values) out.push(target('UserExtra', v, { apiVersion: AUTHN_V1, fieldPath: key }));
  }
  const uid = headers['impersonate-uid']?.[0] ?? '';
  if (uid) out.push(target('UID', uid, { apiVersion: AUTHN_V1 }));
  if ((groups.length > 0 || hasExtra || uid) && !user)
    return { internalError: `requested [${out.map(goReference).join(' ')}] without impersonating a user` };
  return out;
}

/** The `impersonate` request each target is authorized as (`actingAsAttributes`). */
function actingAs(t: Target): RequestInfo {
  const [group, version] = t.apiVersion ? t.apiVersion.split('/') : ['', ''];
  const resource = {
    ServiceAccount: 'serviceaccounts',
    User: 'users',
    Group: 'groups',
    UserExtra: 'userextras',
    UID: 'uids',
  }[t.kind];
  return {
    isResourceRequest: true,
    path: '',
    verb: 'impersonate',
    apiPrefix: '',
    group: group ?? '',
    version: version ?? '',
    namespace: t.namespace,
    resource,
    subresource: t.fieldPath,
    name: t.name,
  };
}

const IMPERSONATE_PREFIX = /^impersonate-/i;

/** Whether a header name of `rawHeaders` (names and values alternate) starts `Impersonate-`, in any case. */
function hasImpersonationHeader(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const h = rawHeaders[i]!;
    // Such a name is at least as long as the prefix and starts with an `i`: most names stop here.
    if (h.length >= 12 && (h.charCodeAt(0) | 0x20) === 0x69 && IMPERSONATE_PREFIX.test(h)) return true;
  }
  return false;
}

/**
 * The user a request is served as: `user` itself without impersonation headers, else the user
 * they name once `authorizer` allows `user` to impersonate each part (a 403 `ApiError` is thrown
 * for the first it may not), or kube's 500 for groups, extras or a uid without a user.
 */
export function impersonate(req: IncomingMessage, user: UserInfo, authorizer: Authorizer): Impersonation {
  // Most requests impersonate no one: look no further than the header names.
  if (!hasImpersonationHeader(req.rawHeaders)) return { user };
  const asked = targets(req);
  if (!Array.isArray(asked)) return asked;
  if (asked.length === 0) return { user };
  const groupsSpecified = asked.some((t) => t.kind === 'Group');
  let username = '';
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  let uid = '';
  for (const t of asked) {
    switch (t.kind) {
      case 'ServiceAccount':
        username = `${SA_PREFIX}${t.namespace}:${t.name}`;
        if (!groupsSpecified) groups = ['system:serviceaccounts', `system:serviceaccounts:${t.namespace}`];
        break;
      case 'User':
        username = t.name;
        break;
      case 'Group':
        groups.push(t.name);
        break;
      case 'UserExtra':
        extra[t.fieldPath] = [...(extra[t.fieldPath] ?? []), t.name];
        break;
      case 'UID':
        uid = t.name;
        break;
    }
    authorizeRequest(user, actingAs(t), authorizer, false);
  }
  if (username !== 'system:anonymous') {
    if (!groups.includes('system:authenticated') && !groups.includes('system:unauthenticated'))
      groups.push('system:authenticated');
  } else if (!groups.includes('system:unauthenticated')) groups.push('system:unauthenticated');
  return {
    user: {
      username,
      groups,
      ...(uid && { uid }),
      ...(Object.keys(extra).length > 0 && { extra }),
    },
  };
}
