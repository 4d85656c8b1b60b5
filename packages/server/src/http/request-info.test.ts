import { describe, expect, it } from 'vitest';
import { parseRequestInfo } from './request-info.js';

const info = (method: string, path: string, query = '') =>
  parseRequestInfo(method, path, new URLSearchParams(query));

describe('parseRequestInfo', () => {
  it('reads discovery paths as non-resource requests', () => {
    for (const path of ['/', '/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/version']) {
      expect(info('GET', path).isResourceRequest).toBe(false);
    }
    expect(info('GET', '/apis/apps/v1')).toMatchObject({ apiPrefix: 'apis', group: 'apps', version: 'v1' });
  });

  it('reads namespaced objects, subresources and watches', () => {
    expect(info('PATCH', '/apis/g.example.com/v1/namespaces/ns/foos/a/status')).toMatchObject({
      isResourceRequest: true,
      verb: 'patch',
      group: 'g.example.com',
      version: 'v1',
      namespace: 'ns',
      resource: 'foos',
      name: 'a',
      subresource: 'status',
    });
    expect(info('GET', '/api/v1/watch/namespaces/ns/pods')).toMatchObject({
      verb: 'watch',
      resource: 'pods',
    });
    expect(info('GET', '/api/v1/pods', 'watch=1')).toMatchObject({ verb: 'watch', namespace: '' });
    expect(info('DELETE', '/api/v1/namespaces/ns/pods')).toMatchObject({ verb: 'deletecollection' });
    expect(info('GET', '/api/v1/namespaces/ns/pods/p/log/x')).toMatchObject({ subresource: 'log/x' });
  });

  it('reads a namespace and its own subresources', () => {
    expect(info('PUT', '/api/v1/namespaces/ns/finalize')).toMatchObject({
      verb: 'update',
      namespace: 'ns',
      resource: 'namespaces',
      name: 'ns',
      subresource: 'finalize',
    });
    expect(info('GET', '/api/v1/namespaces/ns')).toMatchObject({
      verb: 'get',
      resource: 'namespaces',
      name: 'ns',
    });
    expect(info('GET', '/api/v1/namespaces')).toMatchObject({ verb: 'list', namespace: '' });
  });
});
