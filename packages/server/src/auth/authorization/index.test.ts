/**
 * The authorization stage: a refusal is the apiserver's 403 with `responsewriters.Forbidden`'s
 * message and details.
 */
import { ApiError } from 'kubeloop/api';
import { describe, expect, it } from 'vitest';
import { parseRequestInfo } from '../../http/request-info.js';
import { type Authorizer, alwaysAllow, authorizeRequest, requestAttributes } from './index.js';

const alice = { username: 'alice', groups: ['system:authenticated'] };
const info = (method: string, path: string) => parseRequestInfo(method, path, new URLSearchParams());
const refuse = (reason?: string): Authorizer => ({
  authorize: () => ({ allowed: false, ...(reason && { reason }) }),
  rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
});
const deny = refuse();

function refusal(run: () => void): ApiError {
  try {
    run();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('authorization stage', () => {
  it('lets through every request the authorizer allows', () => {
    expect(() =>
      authorizeRequest(alice, info('DELETE', '/api/v1/namespaces/default/pods/p'), alwaysAllow),
    ).not.toThrow();
    expect(() => authorizeRequest(alice, info('GET', '/metrics'), alwaysAllow)).not.toThrow();
  });

  it('asks about the request as kube-apiserver builds its attributes', () => {
    expect(requestAttributes(alice, info('PUT', '/apis/apps/v1/namespaces/ns/deployments/d/scale'))).toEqual({
      user: 'alice',
      groups: ['system:authenticated'],
      resource: {
        namespace: 'ns',
        verb: 'update',
        group: 'apps',
        version: 'v1',
        resource: 'deployments',
        subresource: 'scale',
        name: 'd',
      },
    });
    expect(requestAttributes(alice, info('GET', '/healthz')).nonResource).toEqual({
      path: '/healthz',
      verb: 'get',
    });
  });

  it('refuses a namespaced resource request with the apiserver message', () => {
    const err = refusal(() =>
      authorizeRequest(alice, info('PUT', '/apis/apps/v1/namespaces/ns/deployments/d/scale'), deny),
    );
    expect(err.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message:
        'deployments.apps "d" is forbidden: User "alice" cannot update resource "deployments/scale" in API group "apps" in the namespace "ns"',
      details: { name: 'd', group: 'apps', kind: 'deployments' },
    });
  });

  it('refuses cluster-scoped and non-resource requests, with the authorizer reason', () => {
    const nodes = refusal(() => authorizeRequest(alice, info('GET', '/api/v1/nodes'), refuse('no rule')));
    expect(nodes.status.message).toBe(
      'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope: no rule',
    );
    const path = refusal(() => authorizeRequest(alice, info('GET', '/metrics'), deny));
    expect(path.status.message).toBe('forbidden: User "alice" cannot get path "/metrics"');
  });
});
