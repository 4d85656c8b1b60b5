/**
 * Impersonation headers as kube-apiserver's WithImpersonation filter reads them: the user,
 * groups, uid and percent-decoded extras a SelfSubjectReview then reports, the `impersonate`
 * checks of each (and their 403s), and kube's 500 for groups or extras without a user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { httpClient } from '../http.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;
const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };

beforeAll(async () => {
  cp = await startTestEnv({ controllers: false });
  http = httpClient(cp);
  // Everyone may ask who they are (kube's system:basic-user does it for the authenticated).
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await http.post(`${rbac}/clusterroles`, {
    metadata: { name: 'test-whoami' },
    rules: [{ verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] }],
  });
  await http.post(`${rbac}/clusterrolebindings`, {
    metadata: { name: 'test-whoami' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'test-whoami' },
    subjects: ['system:authenticated', 'system:unauthenticated'].map((name) => ({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Group',
      name,
    })),
  });
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

describe('impersonation headers', () => {
  it('make the request the named user, with its groups, uid and percent-decoded extras', async () => {
    const r = await http.post(WHOAMI, review, {
      headers: {
        'Impersonate-User': 'bob',
        'Impersonate-Uid': 'u-1',
        'Impersonate-Extra-Acme.com%2Fscopes': 'view',
      },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.status.userInfo).toEqual({
      username: 'bob',
      uid: 'u-1',
      groups: ['system:authenticated'],
      extra: { 'acme.com/scopes': ['view'] },
    });
    const anonymous = await http.post(WHOAMI, review, {
      headers: { 'Impersonate-User': 'system:anonymous' },
    });
    expect(anonymous.json.status.userInfo).toEqual({
      username: 'system:anonymous',
      groups: ['system:unauthenticated'],
    });
    const unauthenticated = await http.post(WHOAMI, review, {
      headers: { 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:unauthenticated' },
    });
    expect(unauthenticated.json.status.userInfo.groups).toEqual(['system:unauthenticated']);
  });

  it("without a user, are kube's plain 500", async () => {
    const r = await http.get('/api/v1/namespaces', { headers: { 'Impersonate-Group': 'g' } });
    expect(r.status).toBe(500);
    expect(r.text).toBe(
      'Internal Server Error: "/api/v1/namespaces": requested [{Group  g    }] without impersonating a user\n',
    );
  });

  it('need the impersonate verb on each part, refused with the first one missing', async () => {
    const { cert, key } = await cp.issueClientCertificate('eve');
    const { request } = await import('node:https');
    const asEve = (headers: Record<string, string>) =>
      new Promise<{ status: number; json: any }>((resolve, reject) => {
        const url = new URL(`${cp.url}/api/v1/namespaces`);
        request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            ca: cp.clientConfig.caData,
            cert,
            key,
            headers,
          },
          (res) => {
            let text = '';
            res.on('data', (d: Buffer) => {
              text += d.toString();
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
          },
        )
          .on('error', reject)
          .end();
      });
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    await http.post(`${rbac}/clusterroles`, {
      metadata: { name: 'impersonator' },
      rules: [{ verbs: ['impersonate'], apiGroups: [''], resources: ['users', 'groups'] }],
    });
    await http.post(`${rbac}/clusterrolebindings`, {
      metadata: { name: 'eve-impersonates' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonator' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'eve' }],
    });
    // Users and groups may be impersonated; a uid and extras need authentication.k8s.io's uids and userextras.
    const masters = await asEve({ 'Impersonate-User': 'root', 'Impersonate-Group': 'system:masters' });
    expect(masters.status).toBe(200);
    const uid = await asEve({ 'Impersonate-User': 'root', 'Impersonate-Uid': '1' });
    expect(uid.json.message).toBe(
      'uids.authentication.k8s.io "1" is forbidden: User "eve" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
    );
    const extra = await asEve({ 'Impersonate-User': 'root', 'Impersonate-Extra-Scopes': 'all' });
    expect(extra.json.message).toBe(
      'userextras.authentication.k8s.io "all" is forbidden: User "eve" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
    );
  });
});
