/**
 * Service account tokens as kube-apiserver issues them, end to end: `kubectl create token`
 * (duration, audience, bound objects), the token used by kubectl and a raw HTTPS client, the
 * OIDC discovery documents that verify it, TokenReview, and what makes a token stop working.
 */
import { createHash, createPublicKey, createVerify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, type KubectlEnv, startKubectlEnv } from '../../src/testing/index.js';
import { decodeJwt, tokenReview, whoami } from './support.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

const createToken = async (...args: string[]) => (await env.ok(['create', 'token', ...args])).trim();

describe('kubectl create token', () => {
  it('issues an RS256 JWT with kube claims that kubectl then authenticates with', async () => {
    const token = await createToken('default');
    const { header, claims } = decodeJwt(token);
    expect(Object.keys(header)).toEqual(['alg', 'kid']);
    expect(header.alg).toBe('RS256');
    const sa = JSON.parse(await env.ok(['get', 'sa', 'default', '-o', 'json']));
    expect(claims).toMatchObject({
      aud: ['https://kubernetes.default.svc.cluster.local'],
      iss: 'https://kubernetes.default.svc.cluster.local',
      sub: 'system:serviceaccount:default:default',
      'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'default', uid: sa.metadata.uid } },
    });
    expect(claims.exp - claims.iat).toBe(3600);
    expect(claims.nbf).toBe(claims.iat);
    // Go writes the claims as a map: keys sorted.
    expect(Object.keys(claims)).toEqual([...Object.keys(claims)].sort());

    const who = JSON.parse(await env.ok(['--token', token, 'auth', 'whoami', '-o', 'json']));
    expect(who.status.userInfo).toEqual({
      username: 'system:serviceaccount:default:default',
      uid: sa.metadata.uid,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
    });
    // The service account is then what RBAC makes of it: nothing granted, a 403 naming it.
    const get = await env.run(['--token', token, 'get', 'sa', 'default', '-o', 'name']);
    expect(get.stderr).toContain(
      'serviceaccounts "default" is forbidden: User "system:serviceaccount:default:default" cannot get resource "serviceaccounts" in API group "" in the namespace "default"',
    );
  });

  it('--duration sets the expiry, within kube’s bounds', async () => {
    const { claims } = decodeJwt(await createToken('default', '--duration=10m'));
    expect(claims.exp - claims.iat).toBe(600);
    const tooShort = await env.run(['create', 'token', 'default', '--duration=1m']);
    expect(tooShort.code).not.toBe(0);
    expect(tooShort.stderr).toContain(
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
  });

  it('--audience: a token for another audience is refused by the API (401), accepted by a TokenReview for it', async () => {
    const token = await createToken('default', '--audience=vault', '--audience=other');
    expect(decodeJwt(token).claims.aud).toEqual(['vault', 'other']);
    expect((await whoami(http, token)).status).toBe(401);
    const kubectl = await env.run(['--token', token, 'get', 'ns']);
    expect(kubectl.code).not.toBe(0);
    expect(kubectl.stderr).toContain('Unauthorized');

    const forVault = await tokenReview(http, token, ['vault']);
    expect(forVault.authenticated).toBe(true);
    expect(forVault.audiences).toEqual(['vault']);
    expect(forVault.user.username).toBe('system:serviceaccount:default:default');
    const forApi = await tokenReview(http, token);
    expect(forApi.authenticated).toBeUndefined();
    expect(forApi.error).toBe(
      'token audiences ["vault" "other"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]',
    );
    // A token for the API audience, reviewed for another audience: not for it.
    const apiToken = await createToken('default');
    expect((await tokenReview(http, apiToken)).audiences).toEqual([
      'https://kubernetes.default.svc.cluster.local',
    ]);
    expect((await tokenReview(http, apiToken, ['vault'])).authenticated).toBeUndefined();
  });

  it('--bound-object-kind Pod: valid while that very pod exists', async () => {
    await env.ok(['run', 'bound', '--image=nginx', '--restart=Never']);
    const pod = JSON.parse(await env.ok(['get', 'pod', 'bound', '-o', 'json']));
    const token = await createToken('default', '--bound-object-kind=Pod', '--bound-object-name=bound');
    expect(decodeJwt(token).claims['kubernetes.io'].pod).toEqual({ name: 'bound', uid: pod.metadata.uid });
    const who = JSON.parse(await env.ok(['--token', token, 'auth', 'whoami', '-o', 'json']));
    expect(who.status.userInfo.extra).toMatchObject({
      'authentication.kubernetes.io/pod-name': ['bound'],
      'authentication.kubernetes.io/pod-uid': [pod.metadata.uid],
    });

    await env.ok(['delete', 'pod', 'bound', '--wait']);
    expect((await whoami(http, token)).status).toBe(401);
    expect((await tokenReview(http, token)).error).toBe('service account token has been invalidated');
    // Recreated under the same name: another uid, still refused.
    await env.ok(['run', 'bound', '--image=nginx', '--restart=Never']);
    expect((await whoami(http, token)).status).toBe(401);
    expect((await tokenReview(http, token)).error).toMatch(
      /^pod UID \(.+\) does not match service account pod ref claim \(.+\)$/,
    );
  });

  it('binding to a pod of another service account, or to a missing object, is refused', async () => {
    await env.ok(['create', 'sa', 'other']);
    await env.ok(['run', 'mine', '--image=nginx', '--restart=Never']);
    const wrong = await env.run([
      'create',
      'token',
      'other',
      '--bound-object-kind=Pod',
      '--bound-object-name=mine',
    ]);
    expect(wrong.stderr).toContain(
      'cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.',
    );
    const missing = await env.run([
      'create',
      'token',
      'default',
      '--bound-object-kind=Secret',
      '--bound-object-name=nope',
    ]);
    expect(missing.stderr).toContain('secrets "nope" not found');
  });

  it('--bound-object-kind Secret: valid while the secret exists', async () => {
    await env.ok(['create', 'secret', 'generic', 'anchor', '--from-literal=a=b']);
    const token = await createToken('default', '--bound-object-kind=Secret', '--bound-object-name=anchor');
    expect(decodeJwt(token).claims['kubernetes.io'].secret.name).toBe('anchor');
    expect((await whoami(http, token)).status).toBe(201);
    await env.ok(['delete', 'secret', 'anchor']);
    expect((await whoami(http, token)).status).toBe(401);
  });

  it('--bound-object-kind Node: valid while the node exists', async () => {
    const node = await http.post('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1' },
    });
    expect(node.status, node.text).toBe(201);
    const token = await createToken('default', '--bound-object-kind=Node', '--bound-object-name=n1');
    expect(decodeJwt(token).claims['kubernetes.io'].node).toEqual({
      name: 'n1',
      uid: node.json.metadata.uid,
    });
    const who = (await whoami(http, token)).json;
    expect(who.status.userInfo.extra).toMatchObject({
      'authentication.kubernetes.io/node-name': ['n1'],
      'authentication.kubernetes.io/node-uid': [node.json.metadata.uid],
    });
    await env.ok(['delete', 'node', 'n1']);
    expect((await whoami(http, token)).status).toBe(401);
  });

  it('a token of a deleted service account is refused, also once one of the same name exists again', async () => {
    await env.ok(['create', 'sa', 'gone']);
    const token = await createToken('gone');
    expect((await whoami(http, token)).status).toBe(201);
    await env.ok(['delete', 'sa', 'gone']);
    expect((await whoami(http, token)).status).toBe(401);
    await env.ok(['create', 'sa', 'gone']);
    expect((await whoami(http, token)).status).toBe(401);
    expect((await tokenReview(http, token)).error).toMatch(
      /^service account UID \(.+\) does not match claim \(.+\)$/,
    );
  });
});

describe('OIDC discovery', () => {
  it('serves the issuer configuration and the JWKS that verifies the tokens', async () => {
    const config = await http.get('/.well-known/openid-configuration');
    expect(config.status).toBe(200);
    expect(config.headers['content-type']).toBe('application/json');
    expect(config.headers['cache-control']).toBe('public, max-age=3600');
    expect(config.json).toEqual({
      issuer: 'https://kubernetes.default.svc.cluster.local',
      jwks_uri: `${env.cp.url}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
    expect(Object.keys(config.json)).toEqual([
      'issuer',
      'jwks_uri',
      'response_types_supported',
      'subject_types_supported',
      'id_token_signing_alg_values_supported',
    ]);

    const jwks = await http.get('/openid/v1/jwks');
    expect(jwks.status).toBe(200);
    expect(jwks.headers['content-type']).toBe('application/jwk-set+json');
    expect(jwks.headers['cache-control']).toBe('public, max-age=3600');
    const [jwk] = jwks.json.keys;
    expect(Object.keys(jwk)).toEqual(['use', 'kty', 'kid', 'alg', 'n', 'e']);
    expect(jwk).toMatchObject({ use: 'sig', kty: 'RSA', alg: 'RS256', e: 'AQAB' });
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    // kube's key id: the SHA-256 of the DER public key, base64url.
    expect(jwk.kid).toBe(
      createHash('sha256')
        .update(key.export({ type: 'spki', format: 'der' }))
        .digest('base64url'),
    );

    const token = await createToken('default');
    const [h, c, s] = token.split('.');
    expect(decodeJwt(token).header.kid).toBe(jwk.kid);
    expect(
      createVerify('RSA-SHA256')
        .update(`${h}.${c}`)
        .verify(key, Buffer.from(s ?? '', 'base64url')),
    ).toBe(true);
  });
});
