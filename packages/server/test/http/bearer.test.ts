/**
 * The `Authorization` header read as k8s.io/apiserver's bearer token authenticator reads it: the
 * scheme in any case, the token the word after one space.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { httpClient } from '../http.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

const as = (authorization: string) =>
  http.get('/api/v1/namespaces', { token: null, headers: { Authorization: authorization } });

describe('bearer tokens', () => {
  it.each(['bearer', 'BEARER', 'BeArEr'])('the scheme %s is accepted', async (scheme) => {
    const r = await as(`${scheme} ${cp.clientConfig.token}`);
    expect(r.status, r.text).toBe(200);
  });

  it('surrounding white space is trimmed', async () => {
    expect((await as(`  Bearer ${cp.clientConfig.token}  `)).status).toBe(200);
  });

  it('words after the token are ignored', async () => {
    expect((await as(`Bearer ${cp.clientConfig.token} extra`)).status).toBe(200);
  });

  // A header the bearer token authenticator does not read is no credential: the request is
  // system:anonymous's, whom RBAC does not let list namespaces (kube's 403, not a 401).
  const ANONYMOUS_LIST =
    'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope';

  it('two spaces before the token: anonymous, with the apiserver warning', async () => {
    const r = await as(`Bearer  ${cp.clientConfig.token}`);
    expect(r.status).toBe(403);
    expect(r.json.message).toBe(ANONYMOUS_LIST);
    expect(r.headers.warning).toBe(
      '299 - "the provided Authorization header contains extra space before the bearer token, and is ignored"',
    );
  });

  it('a tab instead of a space is no token: anonymous', async () => {
    const r = await as(`Bearer\t${cp.clientConfig.token}`);
    expect(r.status).toBe(403);
    expect(r.json.message).toBe(ANONYMOUS_LIST);
  });

  it('another scheme is no token: anonymous', async () => {
    const r = await as(`Basic ${cp.clientConfig.token}`);
    expect(r.status).toBe(403);
    expect(r.json.message).toBe(ANONYMOUS_LIST);
  });

  it('a wrong token is refused', async () => {
    const r = await as('Bearer wrong');
    expect(r.status).toBe(401);
    expect(r.json.reason).toBe('Unauthorized');
  });
});
