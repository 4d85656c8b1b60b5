/**
 * Requests without credentials are `system:anonymous` in `system:unauthenticated`, decided by
 * RBAC like any other (kube-apiserver's anonymous authenticator), while bad credentials stay a
 * 401; health and version are public only through a binding, as kube's bootstrap policy makes them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { httpClient } from '../http.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

beforeAll(async () => {
  cp = await startTestEnv({ controllers: false });
  http = httpClient(cp);
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

/** Removes every ClusterRoleBinding that names the group (the bootstrap policy's included). */
async function unbind(group: string): Promise<void> {
  const list = await http.get(`${RBAC}/clusterrolebindings`);
  for (const b of list.json.items)
    if (
      (b.subjects ?? []).some((s: { kind: string; name: string }) => s.kind === 'Group' && s.name === group)
    )
      expect((await http.delete(`${RBAC}/clusterrolebindings/${b.metadata.name}`)).status).toBe(200);
}

describe('a request without credentials', () => {
  it('is system:anonymous, refused what RBAC does not grant with the apiserver message', async () => {
    await unbind('system:unauthenticated');
    const api = await http.get('/api', { token: null });
    expect(api.status).toBe(403);
    expect(api.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'forbidden: User "system:anonymous" cannot get path "/api"',
    });
    for (const path of ['/healthz', '/livez', '/readyz', '/version']) {
      const r = await http.get(path, { token: null });
      expect(r.status, path).toBe(403);
      expect(r.json.message).toBe(`forbidden: User "system:anonymous" cannot get path "${path}"`);
    }
    const pods = await http.get('/api/v1/namespaces/default/pods/p', { token: null });
    expect(pods.json.message).toBe(
      'pods "p" is forbidden: User "system:anonymous" cannot get resource "pods" in API group "" in the namespace "default"',
    );
  });

  it('while a wrong token is a 401', async () => {
    for (const path of ['/api', '/healthz', '/api/v1/namespaces']) {
      const r = await http.get(path, { token: 'wrong' });
      expect(r.status, path).toBe(401);
      expect(r.json).toMatchObject({ reason: 'Unauthorized', message: 'Unauthorized' });
    }
  });

  it('gets what a binding to system:unauthenticated grants, on the next request', async () => {
    await unbind('system:unauthenticated');
    expect(
      (
        await http.post(`${RBAC}/clusterroles`, {
          metadata: { name: 'test-public' },
          rules: [
            { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
            { verbs: ['list'], apiGroups: [''], resources: ['namespaces'] },
          ],
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await http.post(`${RBAC}/clusterrolebindings`, {
          metadata: { name: 'test-public' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'test-public' },
          subjects: [
            { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' },
          ],
        })
      ).status,
    ).toBe(201);
    for (const path of ['/healthz', '/livez', '/readyz', '/version'])
      expect((await http.get(path, { token: null })).status, path).toBe(200);
    expect((await http.get('/api/v1/namespaces', { token: null })).json.kind).toBe('NamespaceList');
    // A SelfSubjectAccessReview of anonymous answers from the same binding.
    const review = await http.post('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      spec: {
        groups: ['system:unauthenticated'],
        user: 'system:anonymous',
        nonResourceAttributes: { path: '/version', verb: 'get' },
      },
    });
    expect(review.json.status).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "test-public" of ClusterRole "test-public" to Group "system:unauthenticated"',
    });
  });
});
