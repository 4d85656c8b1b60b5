/**
 * The authentication stage: who a request comes from, resolved once per request by the union of
 * kube-apiserver's authenticators, tried in its order: the client certificate (x509), the
 * `Authorization: Bearer` token, then the token a WebSocket carries in its subprotocols. A token
 * is one of the server's own (admin, built-in controllers) or a service account's.
 */
import type { IncomingMessage } from 'node:http';
import { bearerToken } from './bearer.js';
import {
  type ServiceAccountClaims,
  type ServiceAccountTokens,
  serviceAccountUser,
} from './service-account-token.js';
import type { UserInfo } from './user.js';
import { dropTokenProtocol, websocketBearerToken } from './websocket.js';
import { authenticateClientCertificate } from './x509.js';

export { TOKEN_WITH_SPACE_WARNING } from './bearer.js';
export type { UserInfo } from './user.js';

/** What the authenticators consult. */
export interface AuthenticatorOptions {
  /** Tokens the server itself issued (the admin's, the built-in controllers'), and their users. */
  tokens: ReadonlyMap<string, UserInfo>;
  /** Service account tokens: verified by signature, then valid while their ServiceAccount exists. */
  serviceAccounts: ServiceAccountTokens;
  /**
   * The uid of the ServiceAccount a token names, undefined when it does not exist: a token
   * outlives no deletion, since a new ServiceAccount of the same name has another uid.
   */
  serviceAccountUid(namespace: string, name: string): string | undefined;
}

/** The outcome of authenticating one request. */
export interface Authentication {
  /** Undefined when no authenticator knows the request (a 401 for anything not public). */
  user: UserInfo | undefined;
  /** The `Authorization` header had a space too many before its token (answered with a warning). */
  spaceBeforeToken: boolean;
}

/** kube-apiserver's union authenticator for this server. */
export class Authenticator {
  constructor(private readonly o: AuthenticatorOptions) {}

  /**
   * Authenticates a request. A WebSocket's token subprotocol that authenticated is taken out of
   * the request's offer (the stream must not echo it back), so call this once per request.
   */
  authenticate(req: IncomingMessage): Authentication {
    const fromCert = authenticateClientCertificate(req);
    if (fromCert) return { user: fromCert, spaceBeforeToken: false };
    const { token, spaceBeforeToken } = bearerToken(req.headers.authorization);
    if (token !== undefined) return { user: this.token(token), spaceBeforeToken: false };
    const wsToken = websocketBearerToken(req);
    const user = wsToken === undefined ? undefined : this.token(wsToken);
    if (user) dropTokenProtocol(req);
    return { user, spaceBeforeToken: spaceBeforeToken === true };
  }

  /** The user a bearer token stands for (also what a TokenReview answers); undefined when unknown. */
  token(bearer: string): UserInfo | undefined {
    const known = this.o.tokens.get(bearer);
    if (known) return known;
    const claims: ServiceAccountClaims | undefined = this.o.serviceAccounts.verify(bearer);
    if (!claims) return undefined;
    if (this.o.serviceAccountUid(claims.namespace, claims.name) !== claims.uid) return undefined;
    return serviceAccountUser(claims);
  }
}
