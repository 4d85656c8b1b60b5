/** The Node authorizer: kubelets get kube's node rules ahead of RBAC; other users are RBAC's. */
import { describe, expect, it } from 'vitest';
import { alwaysAllow, authorizerChain } from './authorizer.js';
import { authorizeNode } from './node.js';
import type { Authorizer } from './types.js';

const kubelet = { user: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const res = (verb: string, resource: string, subresource = '', group = '') => ({
  ...kubelet,
  resource: { verb, resource, subresource, group, namespace: 'default', name: 'x' },
});

describe('the Node authorizer', () => {
  it('allows a kubelet the node rules and has no opinion on the rest', () => {
    expect(authorizeNode(res('patch', 'pods', 'status'))).toEqual({ allowed: true });
    expect(authorizeNode(res('update', 'leases', '', 'coordination.k8s.io'))).toEqual({ allowed: true });
    expect(authorizeNode(res('get', 'secrets'))).toEqual({ allowed: true });
    expect(authorizeNode(res('delete', 'deployments', '', 'apps'))).toBeUndefined();
    expect(authorizeNode(res('list', 'secrets'))).toEqual({
      allowed: false,
      reason: 'can only get individual resources of this type',
    });
  });

  it('knows only users named system:node:<name> in system:nodes', () => {
    expect(authorizeNode({ ...res('get', 'pods'), groups: ['system:authenticated'] })).toBeUndefined();
    expect(authorizeNode({ ...res('get', 'pods'), user: 'node1' })).toBeUndefined();
  });

  it('comes before the mode in the chain, whose reason it joins', () => {
    const deny: Authorizer = { ...alwaysAllow, authorize: () => ({ allowed: false, reason: 'RBAC: x' }) };
    const chain = authorizerChain(deny, true);
    expect(chain.authorize(res('get', 'pods'))).toEqual({ allowed: true });
    expect(chain.authorize(res('watch', 'configmaps'))).toEqual({
      allowed: false,
      reason: 'can only get individual resources of this type\nRBAC: x',
    });
    expect(authorizerChain(deny).authorize(res('get', 'pods')).allowed).toBe(false);
  });
});
