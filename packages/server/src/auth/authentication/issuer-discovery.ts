/**
 * The OIDC discovery documents of the service account issuer (pkg/serviceaccount
 * openidmetadata.go), so that relying parties outside the cluster can verify its tokens.
 */
import { SERVICE_ACCOUNT_ISSUER } from './service-account-token.js';
import type { ServiceAccountSigningKey } from './signing-key.js';

/**
 * The two documents, as kube-apiserver writes them (Go's `json.Marshal`, no trailing newline).
 * `jwks_uri` is the server's own address, as kube-apiserver computes it from its external host
 * when `--service-account-jwks-uri` is not set.
 */
export function issuerDiscovery(key: ServiceAccountSigningKey, serverUrl: () => string) {
  return {
    configuration: async (): Promise<string> =>
      JSON.stringify({
        issuer: SERVICE_ACCOUNT_ISSUER,
        jwks_uri: `${serverUrl()}/openid/v1/jwks`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      }),
    jwks: async (): Promise<string> => JSON.stringify({ keys: [(await key.get()).jwk] }),
  };
}
