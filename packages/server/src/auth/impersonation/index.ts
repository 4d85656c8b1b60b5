/**
 * The impersonation stage, between authentication and authorization as in kube-apiserver's
 * `WithImpersonation` filter: a request with `Impersonate-User`/`-Group`/`-Uid`/`-Extra-*`
 * headers is served as the user it names, once the real user may `impersonate` it.
 *
 * Not implemented yet: the headers are ignored and every request is served as the user who
 * authenticated. This is the seam where impersonation is to be implemented.
 */
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../authentication/user.js';

/** The user a request is served as: today always the authenticated user (the headers are ignored). */
export function impersonate(_req: IncomingMessage, user: UserInfo): UserInfo {
  return user;
}
