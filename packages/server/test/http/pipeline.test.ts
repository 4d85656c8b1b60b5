/**
 * The stages of the request's path seen from a client: the user authentication resolves (or
 * impersonation makes) is the one every later stage sees (kinds without storage answer for it
 * without authenticating again).
 */
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { httpClient } from '../http.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
  // Authenticated users may ask who they are (kube's bootstrap system:basic-user does it).
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await http.post(`${rbac}/clusterroles`, {
    metadata: { name: 'test-whoami' },
    rules: [{ verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] }],
  });
  await http.post(`${rbac}/clusterrolebindings`, {
    metadata: { name: 'test-whoami' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'test-whoami' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
  });
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

const selfSubjectReview = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
const SSR_PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

/** POSTs `body` with a client certificate instead of a token. */
function postWithCertificate(
  path: string,
  body: unknown,
  pair: { cert: string; key: string },
): Promise<{ status: number; json: Record<string, unknown> }> {
  const url = new URL(cp.url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        ca: cp.clientConfig.caData,
        cert: pair.cert,
        key: pair.key,
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('the request pipeline', () => {
  it('a kind without storage answers for the user the certificate authenticated', async () => {
    const pair = await cp.issueClientCertificate('alice', ['devs']);
    const r = await postWithCertificate(SSR_PATH, selfSubjectReview, pair);
    expect(r.status).toBe(201);
    expect((r.json.status as { userInfo: unknown }).userInfo).toEqual({
      username: 'alice',
      groups: ['devs', 'system:authenticated'],
    });
  });

  it('Impersonate-* headers make the request the impersonated user, for an admin who may impersonate', async () => {
    const r = await http.post(SSR_PATH, selfSubjectReview, {
      headers: { 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:masters' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.status.userInfo).toEqual({
      username: 'bob',
      groups: ['system:masters', 'system:authenticated'],
    });
  });

  it("a TokenReview authenticates a service account's token as a request would", async () => {
    const sa = await http.post('/api/v1/namespaces/default/serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'reviewed' },
    });
    expect(sa.status, sa.text).toBe(201);
    const issued = await http.post('/api/v1/namespaces/default/serviceaccounts/reviewed/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    expect(issued.status, issued.text).toBe(201);
    const token = issued.json.status.token as string;
    const review = await http.post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    expect(review.status, review.text).toBe(201);
    expect(review.json.status).toMatchObject({
      authenticated: true,
      user: { username: 'system:serviceaccount:default:reviewed' },
    });
    // The same token authenticates a request: the service account's, which RBAC then decides.
    const asSa = await http.get('/api/v1/namespaces/default/configmaps', { token });
    expect(asSa.status).toBe(403);
    expect(asSa.json.message).toBe(
      'configmaps is forbidden: User "system:serviceaccount:default:reviewed" cannot list resource "configmaps" in API group "" in the namespace "default"',
    );
  });
});
