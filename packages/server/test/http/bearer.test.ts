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

  it('two spaces before the token: refused, with the apiserver warning', async () => {
    const r = await as(`Bearer  ${cp.clientConfig.token}`);
    expect(r.status).toBe(401);
    expect(r.json.reason).toBe('Unauthorized');
    expect(r.headers.warning).toBe(
      '299 - "the provided Authorization header contains extra space before the bearer token, and is ignored"',
    );
  });

  it('a tab instead of a space is refused', async () => {
    expect((await as(`Bearer\t${cp.clientConfig.token}`)).status).toBe(401);
  });

  it('another scheme is refused', async () => {
    expect((await as(`Basic ${cp.clientConfig.token}`)).status).toBe(401);
  });
});
