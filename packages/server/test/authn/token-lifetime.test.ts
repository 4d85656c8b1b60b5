/**
 * How long a service account token lives: until its expiry (plus go-jose's minute of leeway),
 * across restarts of a server on the same data directory (the signing key is kept there), and a
 * pod's projected-volume token (3607 s) the year kube-apiserver extends it to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from 'kubeloop/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { httpClient, startTestEnv } from '../../src/testing/index.js';
import { decodeJwt, whoami } from './support.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const f of cleanup.reverse()) await f();
});

async function start(options: Parameters<typeof startTestEnv>[0] = {}) {
  const cp = await startTestEnv(options);
  const http = httpClient(cp);
  cleanup.push(() => cp.stop());
  cleanup.push(() => http.close());
  return { cp, http };
}

const requestToken = async (
  http: ReturnType<typeof httpClient>,
  sa: string,
  spec: Record<string, unknown> = {},
): Promise<string> => {
  const r = await http.post(`/api/v1/namespaces/default/serviceaccounts/${sa}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec,
  });
  if (r.status !== 201) throw new Error(`${r.status} ${r.text}`);
  return r.json.status.token;
};

describe('token lifetime', () => {
  it('a token authenticates until a minute past its expiry, then gets 401', async () => {
    const clock = new FakeClock(Date.now());
    const { http } = await start({ clock });
    const token = await requestToken(http, 'default', { expirationSeconds: 600 });
    expect((await whoami(http, token)).status).toBe(201);
    clock.advance(600_000 + 59_000);
    expect((await whoami(http, token)).status).toBe(201);
    clock.advance(2_000);
    const expired = await whoami(http, token);
    expect(expired.status).toBe(401);
    expect(expired.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('a pod’s 3607-second token is valid a year, with a warnafter at the requested expiry', async () => {
    const { http } = await start();
    const pod = await http.post('/api/v1/namespaces/default/pods', {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    expect(pod.status, pod.text).toBe(201);
    const r = await http.post('/api/v1/namespaces/default/serviceaccounts/default/token', {
      spec: {
        expirationSeconds: 3607,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: pod.json.metadata.uid },
      },
    });
    expect(r.status, r.text).toBe(201);
    const { claims } = decodeJwt(r.json.status.token);
    expect(claims.exp - claims.iat).toBe(365 * 24 * 3600);
    expect(claims['kubernetes.io'].warnafter).toBe(claims.iat + 3607);
    // The answer states the expiry asked for, and when it was issued.
    expect(Date.parse(r.json.status.expirationTimestamp) / 1000).toBe(claims.iat + 3607);
    expect(r.json.metadata).toEqual({
      name: 'default',
      namespace: 'default',
      creationTimestamp: new Date(claims.iat * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
    // A uid that is not the pod's: the pod was deleted and recreated.
    const stale = await http.post('/api/v1/namespaces/default/serviceaccounts/default/token', {
      spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'not-it' } },
    });
    expect(stale.status).toBe(409);
    const misnamed = await http.post('/api/v1/namespaces/default/serviceaccounts/default/token', {
      metadata: { name: 'someone-else' },
      spec: {},
    });
    expect(misnamed.status).toBe(422);
    expect(misnamed.json.message).toBe(
      'TokenRequest.authentication.k8s.io "default" is invalid: metadata.name: Invalid value: "someone-else": must match the service account name if specified',
    );
    expect(stale.json.message).toBe(
      'Operation cannot be fulfilled on Pod "p": the UID in the bound object reference (not-it) does not match the UID in record. The object might have been deleted and then recreated',
    );
    // A reference without a name is refused as the pod registry's key function refuses it.
    const unnamed = await http.post('/api/v1/namespaces/default/serviceaccounts/default/token', {
      spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod' } },
    });
    expect([unnamed.status, unnamed.json.reason, unnamed.json.message]).toEqual([
      400,
      'BadRequest',
      'Name parameter required.',
    ]);
  });

  it('tokens survive a restart on the same data directory; the key and its kid stay', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kubeloop-authn-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const first = await start({ dataDir });
    const token = await requestToken(first.http, 'default');
    const jwks = (await first.http.get('/openid/v1/jwks')).json;
    first.http.close();
    await first.cp.stop();

    const second = await start({ dataDir });
    expect((await whoami(second.http, token)).status).toBe(201);
    expect((await second.http.get('/openid/v1/jwks')).json).toEqual(jwks);
  });

  it('tokens of one server are refused by another (another key)', async () => {
    const a = await start();
    const b = await start();
    const token = await requestToken(a.http, 'default');
    expect((await whoami(b.http, token)).status).toBe(401);
  });
});
