/**
 * Legacy service account token Secrets (`kubernetes.io/service-account-token`), end to end: the
 * tokens controller fills them, their token authenticates with kubectl, and stops doing so once
 * the Secret or the ServiceAccount goes (the controller then deletes the Secret, as 1.32's does).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  httpClient,
  type Json,
  type KubectlEnv,
  manifest,
  startKubectlEnv,
} from '../../src/testing/index.js';
import { decodeJwt, KUBECTL_401, tokenReview, whoami } from './support.js';

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

const tokenSecret = (name: string, sa: string) =>
  manifest({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'default', annotations: { 'kubernetes.io/service-account.name': sa } },
    type: 'kubernetes.io/service-account-token',
  });

const getSecret = async (name: string): Promise<Json | undefined> => {
  const r = await http.get(`/api/v1/namespaces/default/secrets/${name}`);
  return r.status === 200 ? r.json : undefined;
};

/** The Secret once the controller has filled it. */
async function filled(name: string): Promise<Json> {
  let secret: Json;
  await eventually(async () => {
    secret = await getSecret(name);
    return secret?.data?.token !== undefined;
  });
  return secret;
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

describe('legacy service account token Secrets', () => {
  it('are filled with a token, the CA and the namespace, and the token authenticates', async () => {
    await env.ok(['create', 'sa', 'robot']);
    await env.ok(['apply', '-f', '-'], { input: tokenSecret('robot-token', 'robot') });
    const secret = await filled('robot-token');
    const sa = JSON.parse(await env.ok(['get', 'sa', 'robot', '-o', 'json']));
    expect(secret.metadata.annotations).toMatchObject({
      'kubernetes.io/service-account.name': 'robot',
      'kubernetes.io/service-account.uid': sa.metadata.uid,
    });
    expect(decode(secret.data['ca.crt'])).toBe(env.cp.clientConfig.caData);
    expect(decode(secret.data.namespace)).toBe('default');
    const token = decode(secret.data.token);
    const { header, claims } = decodeJwt(token);
    expect(header.alg).toBe('RS256');
    expect(claims).toEqual({
      iss: 'kubernetes/serviceaccount',
      'kubernetes.io/serviceaccount/namespace': 'default',
      'kubernetes.io/serviceaccount/secret.name': 'robot-token',
      'kubernetes.io/serviceaccount/service-account.name': 'robot',
      'kubernetes.io/serviceaccount/service-account.uid': sa.metadata.uid,
      sub: 'system:serviceaccount:default:robot',
    });
    const who = JSON.parse(await env.ok(['--token', token, 'auth', 'whoami', '-o', 'json']));
    expect(who.status.userInfo).toEqual({
      username: 'system:serviceaccount:default:robot',
      uid: sa.metadata.uid,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
    });
    expect((await tokenReview(http, token)).authenticated).toBe(true);
    // Its day of use, tracked in a label as 1.32 does (the day in UTC).
    const today = new Date().toISOString().slice(0, 10);
    await eventually(
      async () =>
        (await getSecret('robot-token'))?.metadata.labels?.['kubernetes.io/legacy-token-last-used'] === today,
    );

    // The Secret deleted: the token is refused.
    await env.ok(['delete', 'secret', 'robot-token']);
    expect((await whoami(http, token)).status).toBe(401);
    const gone = await env.run(['--token', token, 'get', 'pods']);
    expect(gone.stderr).toMatch(KUBECTL_401);
  });

  it('a token that is not the Secret’s own copy is refused', async () => {
    await env.ok(['create', 'sa', 'copycat']);
    await env.ok(['apply', '-f', '-'], { input: tokenSecret('copycat-token', 'copycat') });
    const token = decode((await filled('copycat-token')).data.token);
    // Another token written into the Secret: the old one no longer matches the server's copy.
    await http.patch(
      '/api/v1/namespaces/default/secrets/copycat-token',
      { data: { token: Buffer.from('replaced').toString('base64') } },
      'application/merge-patch+json',
    );
    expect((await whoami(http, token)).status).toBe(401);
  });

  it('go with their ServiceAccount, and its tokens stop working at once', async () => {
    await env.ok(['create', 'sa', 'temp']);
    await env.ok(['apply', '-f', '-'], { input: tokenSecret('temp-token', 'temp') });
    const token = decode((await filled('temp-token')).data.token);
    expect((await whoami(http, token)).status).toBe(201);
    await env.ok(['delete', 'sa', 'temp']);
    expect((await whoami(http, token)).status).toBe(401);
    await eventually(async () => (await getSecret('temp-token')) === undefined);
    // A ServiceAccount of the same name again: the old token names the old uid.
    await env.ok(['create', 'sa', 'temp']);
    expect((await whoami(http, token)).status).toBe(401);
  });

  it('a Secret naming a ServiceAccount that does not exist is deleted', async () => {
    await env.ok(['apply', '-f', '-'], { input: tokenSecret('nobody-token', 'nobody') });
    await eventually(async () => (await getSecret('nobody-token')) === undefined);
  });
});
