/**
 * The authentication stage: who a request comes from, resolved once per request by the union of
 * kube-apiserver's authenticators, tried in its order: the client certificate (x509), the
 * `Authorization: Bearer` token, then the token a WebSocket carries in its subprotocols. A token
 * is one of the server's own (admin, built-in controllers) or a service account's.
 */
import type { IncomingMessage } from 'node:http';
import { bearerToken } from './bearer.js';
import { intersect, type ServiceAccountTokens, type TokenCheck } from './service-account-token.js';
import type { UserInfo } from './user.js';
import { dropTokenProtocol, offersTokenProtocol, websocketBearerToken } from './websocket.js';
import { authenticateClientCertificate, presentedUnverifiedCertificate } from './x509.js';

export { TOKEN_WITH_SPACE_WARNING } from './bearer.js';
export type { UserInfo } from './user.js';

/** What the authenticators consult. */
export interface AuthenticatorOptions {
  /** Tokens the server itself issued (the admin's, the built-in controllers'), and their users. */
  tokens: ReadonlyMap<string, UserInfo>;
  /**
   * Service account tokens: verified by signature and audience, then valid while their
   * ServiceAccount (and bound object) exists with the uid they name.
   */
  serviceAccounts: Pick<ServiceAccountTokens, 'check' | 'apiAudiences'>;
}

/**
 * The user of a request without credentials (kube-apiserver's anonymous authenticator, on by
 * default): authorization decides what it may do.
 */
export const ANONYMOUS: Readonly<UserInfo> = Object.freeze({
  username: 'system:anonymous',
  groups: Object.freeze(['system:unauthenticated']) as string[],
});

/** The outcome of authenticating one request. */
export interface Authentication {
  /**
   * {@link ANONYMOUS} when the request carries no credentials; undefined when it carries some
   * that no authenticator accepts (a 401).
   */
  user: UserInfo | undefined;
  /** The `Authorization` header had a space too many before its token (answered with a warning). */
  spaceBeforeToken: boolean;
}

/** What an unknown token gets in a TokenReview. */
const INVALID_TOKEN = '[invalid bearer token, token lookup failed]';

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
    if (wsToken !== undefined) {
      const user = this.token(wsToken);
      if (user) dropTokenProtocol(req);
      return { user, spaceBeforeToken: spaceBeforeToken === true };
    }
    // kube's union fails on an authenticator's error before the anonymous one is asked: a client
    // certificate the CA did not sign, or a token subprotocol it cannot use, is such an error;
    // no credentials at all is anonymous.
    const failed = presentedUnverifiedCertificate(req) || offersTokenProtocol(req);
    const user = failed ? undefined : ANONYMOUS;
    return { user, spaceBeforeToken: spaceBeforeToken === true };
  }

  /** The user a bearer token stands for, for a request to this server; undefined when unknown. */
  token(bearer: string): UserInfo | undefined {
    // What `review` answers for the API audiences, without the list of accepted audiences it
    // builds for a TokenReview (every request with a token asks).
    const known = this.o.tokens.get(bearer);
    if (known) return this.o.serviceAccounts.apiAudiences.length > 0 ? known : undefined;
    return this.review(bearer).user;
  }

  /**
   * What a TokenReview answers: the token checked for `audiences` (default: the API audiences).
   * The server's own tokens are audience-agnostic (`WrapAudienceAgnosticToken`): they
   * authenticate only for requests meant for the API audiences.
   */
  review(bearer: string, audiences?: readonly string[]): TokenCheck {
    const apiAudiences = this.o.serviceAccounts.apiAudiences;
    const wanted = audiences && audiences.length > 0 ? audiences : apiAudiences;
    const known = this.o.tokens.get(bearer);
    if (known) {
      const accepted = intersect([...apiAudiences], wanted);
      if (accepted.length > 0) return { user: known, audiences: accepted };
    } else {
      const checked = this.o.serviceAccounts.check(bearer, wanted);
      if (checked) return checked;
    }
    return { error: INVALID_TOKEN };
  }
}
