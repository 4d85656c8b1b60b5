/**
 * Service account tokens as kube-apiserver issues and checks them (pkg/serviceaccount jwt.go,
 * claims.go, legacy.go; pkg/registry/core/serviceaccount/storage/token.go): RS256 JWTs signed
 * with the server's key, issuer `https://kubernetes.default.svc.cluster.local` for TokenRequests
 * (audiences, expiry, `kubernetes.io` claims with the bound Pod, Secret or Node) and
 * `kubernetes/serviceaccount` for the tokens of legacy `kubernetes.io/service-account-token`
 * Secrets. A token authenticates while what it names still exists with the same uid.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, type StatusCause } from 'kubeloop/api';
import { parseJws, signRS256, verifyRS256 } from './jwt.js';
import type { ServiceAccountSigningKey } from './signing-key.js';
import type { UserInfo } from './user.js';

/** kube-apiserver's default issuer and audience (`--service-account-issuer`, `--api-audiences`). */
export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** The issuer of the tokens the tokens controller puts in legacy Secrets. */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
/** The projected volume's expiry that kube-apiserver extends to a year (`--service-account-extend-token-expiration`). */
export const WARN_ONLY_EXPIRATION_SECONDS = 3607;
const EXTENDED_EXPIRATION_SECONDS = 24 * 365 * 60 * 60;
/** go-jose's `jwt.DefaultLeeway`: clock skew allowed on exp/nbf, and on bound objects' deletion. */
const LEEWAY_SECONDS = 60;

/** `user.Info` extra keys of service account users (k8s.io/apiserver/pkg/authentication/serviceaccount). */
const EXTRA = {
  podName: 'authentication.kubernetes.io/pod-name',
  podUid: 'authentication.kubernetes.io/pod-uid',
  nodeName: 'authentication.kubernetes.io/node-name',
  nodeUid: 'authentication.kubernetes.io/node-uid',
  credentialId: 'authentication.kubernetes.io/credential-id',
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const metaOf = (o: Obj | undefined): Obj => (o && isObj(o.metadata) ? o.metadata : {});

/** Reads a stored object (`serviceaccounts`, `pods`, `secrets` in a namespace, `nodes` without). */
export type ObjectGetter = (
  resource: 'serviceaccounts' | 'pods' | 'secrets' | 'nodes',
  namespace: string | undefined,
  name: string,
) => Obj | undefined;

/**
 * Told when a legacy Secret's token authenticated on a day its `kubernetes.io/legacy-token-last-used`
 * label does not name yet (LegacyServiceAccountTokenTracking): the label is to be set to `today`.
 */
export type LegacyTokenUsed = (
  secret: { namespace: string; name: string; uid: string },
  today: string,
) => void;

/** The label the API server keeps the last day a legacy token was used on. */
export const LEGACY_TOKEN_LAST_USED_LABEL = 'kubernetes.io/legacy-token-last-used';

/** What checking a token gave: a user and the audiences it was accepted for, or why not. */
export type TokenCheck =
  | { user: UserInfo; audiences: string[]; error?: undefined }
  | { user?: undefined; audiences?: undefined; error: string };

/** The user a service account authenticates as (`ServiceAccountInfo.UserInfo`). */
export function serviceAccountUser(
  namespace: string,
  name: string,
  uid: string,
  extra: Record<string, string[]> = {},
): UserInfo {
  return {
    username: `system:serviceaccount:${namespace}:${name}`,
    uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
    ...(Object.keys(extra).length > 0 && { extra }),
  };
}

/** `Audiences.Intersect`: the elements of `a` also in `b`, in `a`'s order. */
export const intersect = (a: readonly string[], b: readonly string[]): string[] =>
  a.filter((x) => b.includes(x));

/** A time in seconds since the epoch, as metav1.Time writes it. */
const rfc3339 = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Go's `%q` of a `[]string`. */
const quoteList = (l: readonly string[]): string => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;

/** Issues and checks the service account tokens of one server. */
export class ServiceAccountTokens {
  constructor(
    private readonly key: ServiceAccountSigningKey,
    private readonly get: ObjectGetter,
    /** `--api-audiences`: what a token must be meant for to authenticate a request. */
    readonly apiAudiences: readonly string[] = [SERVICE_ACCOUNT_ISSUER],
    private readonly now: () => number = Date.now,
    private readonly legacyTokenUsed?: LegacyTokenUsed,
  ) {}

  /**
   * Answers a TokenRequest for `serviceAccount` (the stored object): `ValidateTokenRequest`, the
   * bound object looked up, then the request echoed with its defaults and
   * `status.token`/`expirationTimestamp`.
   */
  async issue(serviceAccount: Obj, request: Obj): Promise<Obj> {
    const meta = metaOf(serviceAccount);
    const name = str(meta.name);
    const namespace = str(meta.namespace);
    const spec = isObj(request.spec) ? request.spec : {};
    // The request may name its ServiceAccount in its metadata, but no other one.
    const reqMeta = metaOf(request);
    for (const [field, given, want, what] of [
      ['metadata.name', str(reqMeta.name), name, 'name'],
      ['metadata.namespace', str(reqMeta.namespace), namespace, 'namespace'],
    ] as const)
      if (given !== '' && given !== want)
        throw ApiError.invalid({ group: 'authentication.k8s.io', kind: 'TokenRequest' }, name, [
          {
            reason: 'FieldValueInvalid',
            field,
            message: `Invalid value: "${given}": must match the service account ${what} if specified`,
          },
        ]);
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
        reason: 'FieldValueInvalid',
        field: 'spec.expirationSeconds',
        message: `Invalid value: ${seconds}: may not specify a duration larger than 2^32 seconds`,
      });
    if (causes.length > 0)
      throw ApiError.invalid({ group: 'authentication.k8s.io', kind: 'TokenRequest' }, '', causes);
    const bound = this.boundObjects(namespace, name, spec.boundObjectRef);
    const audiences =
      Array.isArray(spec.audiences) && spec.audiences.length > 0
        ? spec.audiences.map(String)
        : [...this.apiAudiences];
    const key = await this.key.get();
    const iat = Math.floor(this.now() / 1000);
    // A pod's projected token asked for 3607 s is valid a year, warning after 3607 s, as
    // kube-apiserver does by default to let kubelets refresh late without failing.
    const extend =
      bound.pod !== undefined &&
      seconds === WARN_ONLY_EXPIRATION_SECONDS &&
      audiences.every((a) => this.apiAudiences.includes(a));
    const k8s: Obj = {
      namespace,
      serviceaccount: { name, uid: str(meta.uid) },
      ...(bound.pod && { pod: bound.pod }),
      ...(bound.secret && { secret: bound.secret }),
      ...(bound.node && { node: bound.node }),
      ...(extend && { warnafter: iat + seconds }),
    };
    const claims = {
      aud: audiences,
      exp: iat + (extend ? EXTENDED_EXPIRATION_SECONDS : seconds),
      iat,
      iss: SERVICE_ACCOUNT_ISSUER,
      jti: randomUUID(),
      'kubernetes.io': k8s,
      nbf: iat,
      sub: `system:serviceaccount:${namespace}:${name}`,
    };
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      // `TokenREST.Create` names the request after its ServiceAccount and stamps the issuing time.
      metadata: { name, namespace, creationTimestamp: rfc3339(iat) },
      spec: { audiences, expirationSeconds: seconds, boundObjectRef: spec.boundObjectRef ?? null },
      status: {
        token: signRS256(key.privateKey, key.kid, claims),
        expirationTimestamp: rfc3339(iat + seconds),
      },
    };
  }

  /** The objects a TokenRequest binds its token to, checked as `TokenREST.Create` checks them. */
  private boundObjects(
    namespace: string,
    serviceAccount: string,
    ref: unknown,
  ): { pod?: Obj; secret?: Obj; node?: Obj } {
    if (!isObj(ref)) return {};
    const apiVersion = str(ref.apiVersion);
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    const kind = str(ref.kind);
    const refName = str(ref.name);
    const lookup = (resource: 'pods' | 'secrets' | 'nodes', ns: string | undefined): Obj => {
      // The registry's key function refuses an empty name before any lookup.
      if (!refName) throw ApiError.badRequest('Name parameter required.');
      const found = this.get(resource, ns, refName);
      if (!found) throw ApiError.notFound({ group: '', resource }, refName);
      const uid = str(metaOf(found).uid);
      if (str(ref.uid) && str(ref.uid) !== uid)
        throw ApiError.conflict(
          { group, resource: kind },
          refName,
          `the UID in the bound object reference (${str(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
        );
      return found;
    };
    const refOf = (o: Obj): Obj => ({ name: str(metaOf(o).name), uid: str(metaOf(o).uid) });
    if (group === '' && kind === 'Pod') {
      const pod = lookup('pods', namespace);
      const spec = isObj(pod.spec) ? pod.spec : {};
      if (str(spec.serviceAccountName) !== serviceAccount)
        throw ApiError.badRequest(
          `cannot bind token for serviceaccount "${serviceAccount}" to pod running with different serviceaccount name.`,
        );
      // ServiceAccountTokenPodNodeInfo (on in 1.32): the node the pod runs on, when it exists.
      const node = str(spec.nodeName) ? this.get('nodes', undefined, str(spec.nodeName)) : undefined;
      return { pod: refOf(pod), ...(node && { node: refOf(node) }) };
    }
    if (group === '' && kind === 'Secret') return { secret: refOf(lookup('secrets', namespace)) };
    if (group === '' && kind === 'Node') return { node: refOf(lookup('nodes', undefined)) };
    throw ApiError.badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`);
  }

  /** The token of a legacy `kubernetes.io/service-account-token` Secret (`LegacyClaims`), no expiry. */
  async issueLegacy(serviceAccount: { namespace: string; name: string; uid: string }, secretName: string) {
    const key = await this.key.get();
    const { namespace, name, uid } = serviceAccount;
    return signRS256(key.privateKey, key.kid, {
      iss: LEGACY_ISSUER,
      'kubernetes.io/serviceaccount/namespace': namespace,
      'kubernetes.io/serviceaccount/secret.name': secretName,
      'kubernetes.io/serviceaccount/service-account.name': name,
      'kubernetes.io/serviceaccount/service-account.uid': uid,
      sub: `system:serviceaccount:${namespace}:${name}`,
    });
  }

  /**
   * Checks `token` for a request meant for `audiences` (default: the API audiences). Undefined
   * when the token is not one of this issuer's (another authenticator may know it).
   */
  check(token: string, audiences: readonly string[] = this.apiAudiences): TokenCheck | undefined {
    const jws = parseJws(token);
    const iss = jws?.claims.iss;
    if (!jws || (iss !== SERVICE_ACCOUNT_ISSUER && iss !== LEGACY_ISSUER)) return undefined;
    const key = this.key.current();
    if (!key || !verifyRS256(key.publicKey, jws))
      return { error: 'square/go-jose: error in cryptographic primitive' };
    const claims = jws.claims;
    const tokenAudiences = Array.isArray(claims.aud)
      ? claims.aud.map(String)
      : typeof claims.aud === 'string'
        ? [claims.aud]
        : [...this.apiAudiences];
    const accepted = intersect(tokenAudiences, audiences);
    if (accepted.length === 0)
      return {
        error: `token audiences ${quoteList(tokenAudiences)} is invalid for the target audiences ${quoteList(audiences)}`,
      };
    const result = iss === LEGACY_ISSUER ? this.checkLegacy(token, claims) : this.checkBound(claims);
    return typeof result === 'string' ? { error: result } : { user: result, audiences: accepted };
  }

  /** `validator.Validate` (claims.go): times, then the service account and bound objects by uid. */
  private checkBound(claims: Obj): UserInfo | string {
    const now = this.now() / 1000;
    if (typeof claims.exp === 'number' && now > claims.exp + LEEWAY_SECONDS)
      return 'service account token has expired';
    if (typeof claims.nbf === 'number' && now + LEEWAY_SECONDS < claims.nbf)
      return 'service account token is not valid yet';
    const k8s = isObj(claims['kubernetes.io']) ? claims['kubernetes.io'] : {};
    const namespace = str(k8s.namespace);
    const saRef = isObj(k8s.serviceaccount) ? k8s.serviceaccount : {};
    const deletedBefore = (o: Obj): boolean => {
      const ts = str(metaOf(o).deletionTimestamp);
      return ts !== '' && Date.parse(ts) / 1000 < now - LEEWAY_SECONDS;
    };
    const sa = this.get('serviceaccounts', namespace, str(saRef.name));
    if (!sa) return `serviceaccounts "${str(saRef.name)}" not found`;
    if (deletedBefore(sa)) return `service account ${namespace}/${str(saRef.name)} has been deleted`;
    const saUid = str(metaOf(sa).uid);
    if (saUid !== str(saRef.uid))
      return `service account UID (${saUid}) does not match claim (${str(saRef.uid)})`;
    const extra: Record<string, string[]> = {};
    for (const [kind, resource, ns] of [
      ['secret', 'secrets', namespace],
      ['pod', 'pods', namespace],
    ] as const) {
      const ref = k8s[kind];
      if (!isObj(ref)) continue;
      const found = this.get(resource, ns, str(ref.name));
      if (!found || deletedBefore(found)) return 'service account token has been invalidated';
      const uid = str(metaOf(found).uid);
      if (uid !== str(ref.uid))
        return `${kind} UID (${uid}) does not match service account ${kind} ref claim (${str(ref.uid)})`;
      if (kind === 'pod') {
        extra[EXTRA.podName] = [str(ref.name)];
        extra[EXTRA.podUid] = [str(ref.uid)];
      }
    }
    const nodeRef = k8s.node;
    if (isObj(nodeRef)) {
      // A node-bound token (no pod) is valid while its node exists (ServiceAccountTokenNodeBindingValidation).
      if (!isObj(k8s.pod)) {
        const node = this.get('nodes', undefined, str(nodeRef.name));
        if (!node || deletedBefore(node)) return 'service account token has been invalidated';
        if (str(nodeRef.uid) && str(metaOf(node).uid) !== str(nodeRef.uid))
          return `node UID (${str(metaOf(node).uid)}) does not match service account node ref claim (${str(nodeRef.uid)})`;
      }
      extra[EXTRA.nodeName] = [str(nodeRef.name)];
      if (str(nodeRef.uid)) extra[EXTRA.nodeUid] = [str(nodeRef.uid)];
    }
    if (str(claims.jti)) extra[EXTRA.credentialId] = [`JTI=${str(claims.jti)}`];
    return serviceAccountUser(namespace, str(saRef.name), str(saRef.uid), extra);
  }

  /** `legacyValidator.Validate` (legacy.go): the Secret holds this very token, the SA has the claimed uid. */
  private checkLegacy(token: string, claims: Obj): UserInfo | string {
    const namespace = str(claims['kubernetes.io/serviceaccount/namespace']);
    const secretName = str(claims['kubernetes.io/serviceaccount/secret.name']);
    const saName = str(claims['kubernetes.io/serviceaccount/service-account.name']);
    const saUid = str(claims['kubernetes.io/serviceaccount/service-account.uid']);
    if (!str(claims.sub)) return 'sub claim is missing';
    if (!namespace) return 'namespace claim is missing';
    if (!secretName) return 'secretName claim is missing';
    if (!saName) return 'serviceAccountName claim is missing';
    if (!saUid) return 'serviceAccountUID claim is missing';
    if (str(claims.sub) !== `system:serviceaccount:${namespace}:${saName}`) return 'sub claim is invalid';
    const secret = this.get('secrets', namespace, secretName);
    if (!secret || str(metaOf(secret).deletionTimestamp)) return 'token has been invalidated';
    const labels = isObj(metaOf(secret).labels) ? (metaOf(secret).labels as Obj) : {};
    // The legacy token cleaner (LegacyServiceAccountTokenCleanUp) marks unused tokens invalid.
    if (str(labels['kubernetes.io/legacy-token-invalid-since'])) return 'token has been invalidated';
    const data = isObj(secret.data) ? secret.data : {};
    if (Buffer.from(str(data.token), 'base64').toString('utf8') !== token)
      return "token does not match server's copy";
    const sa = this.get('serviceaccounts', namespace, saName);
    if (!sa) return `serviceaccounts "${saName}" not found`;
    if (str(metaOf(sa).deletionTimestamp)) return 'service account has been deleted';
    if (str(metaOf(sa).uid) !== saUid)
      return `service account UID (${str(metaOf(sa).uid)}) does not match claim (${saUid})`;
    // Tracking, as 1.32: the day of use in a label, written at most once a day (tomorrow's date,
    // from a server whose clock runs ahead, counts as today's).
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const today = day(this.now());
    const lastUsed = str(labels[LEGACY_TOKEN_LAST_USED_LABEL]);
    if (lastUsed !== today && lastUsed !== day(this.now() + 24 * 3600 * 1000))
      this.legacyTokenUsed?.({ namespace, name: secretName, uid: str(metaOf(secret).uid) }, today);
    return serviceAccountUser(namespace, saName, saUid);
  }
}
