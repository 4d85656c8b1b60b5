/** RBAC's rule matching and coverage, case by case as kube's evaluation helpers decide them. */
import { describe, expect, it } from 'vitest';
import type { AuthorizationAttributes } from '../types.js';
import { compactRules, compactString, covers, type PolicyRule, ruleAllows } from './rules.js';

const res = (
  verb: string,
  resource: string,
  more: Partial<NonNullable<AuthorizationAttributes['resource']>> = {},
) => ({ user: 'u', groups: [], resource: { verb, resource, group: '', ...more } }) as AuthorizationAttributes;
const path = (verb: string, p: string) => ({ user: 'u', groups: [], nonResource: { verb, path: p } });

describe('ruleAllows', () => {
  const pods: PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] };

  it('matches verbs, groups and resources exactly or by *', () => {
    expect(ruleAllows(res('get', 'pods'), pods)).toBe(true);
    expect(ruleAllows(res('delete', 'pods'), pods)).toBe(false);
    expect(ruleAllows(res('get', 'pods', { group: 'apps' }), pods)).toBe(false);
    expect(ruleAllows(res('get', 'services'), pods)).toBe(false);
    const all: PolicyRule = { verbs: ['*'], apiGroups: ['*'], resources: ['*'] };
    expect(
      ruleAllows(res('escalate', 'roles', { group: 'rbac.authorization.k8s.io', subresource: 'x' }), all),
    ).toBe(true);
  });

  it('matches a subresource as res/sub or */sub, never by the bare resource or res/*', () => {
    const log = res('get', 'pods', { subresource: 'log' });
    expect(ruleAllows(log, pods)).toBe(false);
    expect(ruleAllows(log, { ...pods, resources: ['pods/log'] })).toBe(true);
    expect(ruleAllows(log, { ...pods, resources: ['*/log'] })).toBe(true);
    expect(ruleAllows(log, { ...pods, resources: ['*/status'] })).toBe(false);
    // kube 1.32 has no res/* wildcard: it is a resource literally named so.
    expect(ruleAllows(log, { ...pods, resources: ['pods/*'] })).toBe(false);
    expect(ruleAllows(res('get', 'pods'), { ...pods, resources: ['*/log'] })).toBe(false);
  });

  it('restricts to resourceNames when the rule has some (a list has no name)', () => {
    const named: PolicyRule = { ...pods, resourceNames: ['a'] };
    expect(ruleAllows(res('get', 'pods', { name: 'a' }), named)).toBe(true);
    expect(ruleAllows(res('get', 'pods', { name: 'b' }), named)).toBe(false);
    expect(ruleAllows(res('list', 'pods'), named)).toBe(false);
  });

  it('matches non-resource URLs exactly, by a trailing * prefix, or *', () => {
    const rule: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] };
    expect(ruleAllows(path('get', '/healthz'), rule)).toBe(true);
    expect(ruleAllows(path('get', '/healthz/etcd'), rule)).toBe(false);
    expect(ruleAllows(path('get', '/apis/apps/v1'), rule)).toBe(true);
    expect(ruleAllows(path('get', '/apis'), rule)).toBe(false);
    expect(ruleAllows(path('post', '/healthz'), rule)).toBe(false);
    expect(ruleAllows(path('get', '/metrics'), { verbs: ['get'], nonResourceURLs: ['*'] })).toBe(true);
    // A resource rule never allows a path, nor a path rule a resource.
    expect(ruleAllows(path('get', '/healthz'), pods)).toBe(false);
    expect(ruleAllows(res('get', 'pods'), rule)).toBe(false);
  });
});

describe('covers', () => {
  it('breaks the servant rules down and reports what no owner rule covers', () => {
    const owner: PolicyRule[] = [
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', '*/status'] },
      { verbs: ['get'], nonResourceURLs: ['/api/*'] },
    ];
    expect(
      covers(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods', 'services/status'] }]).covered,
    ).toBe(true);
    expect(covers(owner, [{ verbs: ['get'], nonResourceURLs: ['/api/v1'] }]).covered).toBe(true);
    const { covered, missing } = covers(owner, [
      { verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] },
    ]);
    expect(covered).toBe(false);
    expect(missing).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'], resourceNames: ['a'] },
    ]);
  });

  it('lets a named owner rule cover only the same names', () => {
    const owner: PolicyRule[] = [
      { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] },
    ];
    expect(
      covers(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }]).covered,
    ).toBe(true);
    expect(covers(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]).covered).toBe(false);
  });
});

describe('compact rules and their text', () => {
  it('merges simple rules that differ only in verbs, and prints them as kube does', () => {
    const compact = compactRules([
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
      { nonResourceURLs: ['/x'], verbs: ['get'] },
    ]);
    expect(compact.map(compactString)).toEqual([
      '{NonResourceURLs:["/x"], Verbs:["get"]}',
      '{APIGroups:[""], Resources:["pods"], Verbs:["get" "delete"]}',
    ]);
    expect(
      compactString({
        apiGroups: ['apps'],
        resources: ['deployments'],
        resourceNames: ['d'],
        verbs: ['patch'],
      }),
    ).toBe('{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["d"], Verbs:["patch"]}');
  });
});
