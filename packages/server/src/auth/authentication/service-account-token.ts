/**
 * Service account tokens (`POST serviceaccounts/<name>/token`, what `kubectl create token`
 * asks for): JWTs with the claims kube-apiserver puts in them, signed with a key of this server
 * (HMAC-SHA256, as only this server verifies them), and the user they authenticate as.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { ApiError, type StatusCause } from 'kubeloop/api';

/** kube-apiserver's default issuer and audience (`--service-account-issuer`, `--api-audiences`). */
export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const b64 = (v: Buffer | string): string => Buffer.from(v).toString('base64url');

/** The claims of a token this module issued and still accepts. */
export interface ServiceAccountClaims {
  namespace: string;
  name: string;
  uid: string;
  audiences: string[];
  expiresAt: number;
}

/** A user as the server's authenticator gives it. */
export interface ServiceAccountUser {
  username: string;
  uid: string;
  groups: string[];
}

/** Issues and verifies the tokens of one server (one signing key). */
export class ServiceAccountTokens {
  constructor(private readonly key: Buffer) {}

  private sign(data: string): string {
    return createHmac('sha256', this.key).update(data).digest('base64url');
  }

  /**
   * Answers a TokenRequest for `serviceAccount` (the stored object): `ValidateTokenRequest`,
   * then the request echoed with its defaults and `status.token`/`expirationTimestamp`.
   */
  issue(serviceAccount: Obj, request: Obj, now = Date.now()): Obj {
    const meta = (serviceAccount.metadata ?? {}) as Obj;
    const name = String(meta.name);
    const namespace = String(meta.namespace);
    const spec = isObj(request.spec) ? request.spec : {};
    const seconds =
      typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : DEFAULT_EXPIRATION_SECONDS;
    const causes: StatusCause[] = [];
    if (seconds < MIN_EXPIRATION_SECONDS)
      causes.push({
        reason: 'FieldValueInvalid',
        field: 'spec.expirationSeconds',
        message: `Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
      });
    if (seconds > MAX_EXPIRATION_SECONDS)
      causes.push({
        reason: 'FieldValueTooLong',
        field: 'spec.expirationSeconds',
        message: `Invalid value: ${seconds}: may not specify a duration larger than 2^32 seconds`,
      });
    if (causes.length > 0)
      throw ApiError.invalid({ group: 'authentication.k8s.io', kind: 'TokenRequest' }, name, causes);
    const audiences =
      Array.isArray(spec.audiences) && spec.audiences.length > 0
        ? spec.audiences.map(String)
        : [SERVICE_ACCOUNT_ISSUER];
    const iat = Math.floor(now / 1000);
    const exp = iat + seconds;
    const claims = {
      aud: audiences,
      exp,
      iat,
      iss: SERVICE_ACCOUNT_ISSUER,
      jti: randomUUID(),
      'kubernetes.io': { namespace, serviceaccount: { name, uid: String(meta.uid) } },
      nbf: iat,
      sub: `system:serviceaccount:${namespace}:${name}`,
    };
    const head = `${b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64(JSON.stringify(claims))}`;
    const token = `${head}.${this.sign(head)}`;
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: null },
      spec: { audiences, expirationSeconds: seconds, boundObjectRef: spec.boundObjectRef ?? null },
      status: { token, expirationTimestamp: new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
    };
  }

  /** The claims of `token` when this server signed it and it has not expired. */
  verify(token: string, now = Date.now()): ServiceAccountClaims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const expected = Buffer.from(this.sign(`${parts[0]}.${parts[1]}`));
    const given = Buffer.from(parts[2]!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    let claims: Obj;
    try {
      claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Obj;
    } catch {
      return undefined;
    }
    const k8s = isObj(claims['kubernetes.io']) ? claims['kubernetes.io'] : {};
    const sa = isObj(k8s.serviceaccount) ? k8s.serviceaccount : {};
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) return undefined;
    return {
      namespace: String(k8s.namespace),
      name: String(sa.name),
      uid: String(sa.uid),
      audiences: Array.isArray(claims.aud) ? claims.aud.map(String) : [],
      expiresAt: claims.exp * 1000,
    };
  }
}

/** The user a service account authenticates as. */
export function serviceAccountUser(claims: ServiceAccountClaims): ServiceAccountUser {
  return {
    username: `system:serviceaccount:${claims.namespace}:${claims.name}`,
    uid: claims.uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${claims.namespace}`, 'system:authenticated'],
  };
}
