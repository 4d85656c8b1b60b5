/** Helpers of the authentication end-to-end tests: reading tokens, asking who a token is. */
import type { Http, HttpResult, Json } from '../../src/testing/index.js';

/** The header and claims of a JWT, decoded without verification. */
export function decodeJwt(token: string): { header: Json; claims: Json } {
  const [h, c] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h ?? '', 'base64url').toString('utf8')),
    claims: JSON.parse(Buffer.from(c ?? '', 'base64url').toString('utf8')),
  };
}

/** A SelfSubjectReview made with `token`: 201 and the user, or 401. */
export function whoami(http: Http, token: string): Promise<HttpResult> {
  return http.post(
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    { token },
  );
}

/** A TokenReview of `token` (asked by the admin), optionally for `audiences`. */
export async function tokenReview(http: Http, token: string, audiences?: string[]): Promise<Json> {
  const r = await http.post('/apis/authentication.k8s.io/v1/tokenreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token, ...(audiences && { audiences }) },
  });
  if (r.status !== 201) throw new Error(`TokenReview: ${r.status} ${r.text}`);
  return r.json.status;
}

/**
 * What kubectl says of a 401: `Unauthorized`, or, when its discovery request was the one refused,
 * client-go's wording of the same answer.
 */
export const KUBECTL_401 =
  /error: You must be logged in to the server \((Unauthorized|the server has asked for the client to provide credentials)\)/;
