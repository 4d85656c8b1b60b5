import { ApiError } from 'kubeloop/api';
import { describe, expect, it } from 'vitest';
import { Registry } from '../registry/registry.js';
import { Store } from '../storage/store.js';
import type { KubeObject } from '../storage/types.js';
import {
  type AdmissionAttributes,
  admissionAttributes,
  type EquivalentResources,
  isExemptAdmissionConfigurationResource,
  matchesNamespaceSelector,
  matchesObjectSelector,
  matchPolicyResources,
  matchWebhookRules,
  registryEquivalents,
  ruleMatches,
} from './matching.js';

const registry = new Registry();
const equivalents = registryEquivalents(registry);

function attrs(over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    subresource: '',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    name: 'web',
    namespace: 'default',
    object: { metadata: { name: 'web', labels: { app: 'web' } } },
    userInfo: { username: 'alice' },
    dryRun: false,
    ...over,
  };
}

const rule = { operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] };

describe('admission matching', () => {
  it('matches rules by operation, group, version, resource/subresource and scope as kube does', () => {
    expect(ruleMatches(rule, attrs())).toBe(true);
    expect(ruleMatches(rule, attrs({ operation: 'UPDATE' }))).toBe(false);
    expect(ruleMatches({ ...rule, operations: ['*'] }, attrs({ operation: 'DELETE' }))).toBe(true);
    expect(ruleMatches(rule, attrs({ subresource: 'scale' }))).toBe(false);
    expect(ruleMatches({ ...rule, resources: ['deployments/*'] }, attrs({ subresource: 'scale' }))).toBe(
      true,
    );
    // `x/*` also matches x itself, as kube's matcher reads an empty subresource against `*`.
    expect(ruleMatches({ ...rule, resources: ['deployments/*'] }, attrs())).toBe(true);
    expect(ruleMatches({ ...rule, resources: ['*/scale'] }, attrs({ subresource: 'scale' }))).toBe(true);
    expect(ruleMatches({ ...rule, resources: ['*'] }, attrs({ subresource: 'status' }))).toBe(false);
    expect(ruleMatches({ ...rule, resources: ['*/*'] }, attrs({ subresource: 'status' }))).toBe(true);
    expect(ruleMatches({ ...rule, scope: 'Cluster' }, attrs())).toBe(false);
    expect(ruleMatches({ ...rule, scope: 'Namespaced' }, attrs())).toBe(true);
    const ns = attrs({
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      namespace: 'team',
      name: 'team',
    });
    const nsRule = { operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] };
    // A Namespace is cluster-scoped even though its requests carry its name as namespace.
    expect(ruleMatches({ ...nsRule, scope: 'Cluster' }, ns)).toBe(true);
    expect(ruleMatches({ ...nsRule, scope: 'Namespaced' }, ns)).toBe(false);
  });

  it('matches an equivalent resource only under matchPolicy Equivalent, sending its kind', () => {
    const fake: EquivalentResources = {
      equivalents: (r) => [r, { group: 'extensions', version: 'v1beta1', resource: 'deployments' }],
      kindFor: (r) => ({ group: r.group, version: r.version, kind: 'Deployment' }),
    };
    const old = [{ ...rule, apiGroups: ['extensions'], apiVersions: ['v1beta1'] }];
    expect(matchWebhookRules(old, 'Exact', attrs(), fake)).toBeUndefined();
    expect(matchWebhookRules(old, 'Equivalent', attrs(), fake)).toEqual({
      resource: { group: 'extensions', version: 'v1beta1', resource: 'deployments' },
      subresource: '',
      kind: { group: 'extensions', version: 'v1beta1', kind: 'Deployment' },
    });
    expect(matchWebhookRules([rule], 'Equivalent', attrs(), fake)?.resource.group).toBe('apps');
  });

  it("finds equivalents in the registry: events.k8s.io Events share core Events' storage", () => {
    const found = equivalents.equivalents({ group: '', version: 'v1', resource: 'events' }, '');
    expect(found).toContainEqual({ group: 'events.k8s.io', version: 'v1', resource: 'events' });
    const ev = attrs({
      resource: { group: '', version: 'v1', resource: 'events' },
      kind: { group: '', version: 'v1', kind: 'Event' },
    });
    const match = matchWebhookRules(
      [{ operations: ['CREATE'], apiGroups: ['events.k8s.io'], apiVersions: ['*'], resources: ['events'] }],
      'Equivalent',
      ev,
      equivalents,
    );
    expect(match?.kind).toEqual({ group: 'events.k8s.io', version: 'v1', kind: 'Event' });
  });

  it("matches policies' resourceRules with resourceNames and excludeResourceRules", () => {
    expect(matchPolicyResources({}, attrs(), equivalents)?.resource.resource).toBe('deployments');
    expect(
      matchPolicyResources({ resourceRules: [{ ...rule, resourceNames: ['other'] }] }, attrs(), equivalents),
    ).toBe(undefined);
    expect(
      matchPolicyResources({ resourceRules: [{ ...rule, resourceNames: ['web'] }] }, attrs(), equivalents),
    ).toBeDefined();
    expect(
      matchPolicyResources({ resourceRules: [rule], excludeResourceRules: [rule] }, attrs(), equivalents),
    ).toBeUndefined();
  });

  it("selects by the namespace's labels (a missing namespace is its 404) and by object or old object labels", async () => {
    const store = Store.open();
    await store.create('/core/namespaces/default', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'default', labels: { env: 'prod' } },
    } as KubeObject);
    expect(matchesNamespaceSelector({ matchLabels: { env: 'prod' } }, attrs(), store)).toBe(true);
    expect(matchesNamespaceSelector({ matchLabels: { env: 'dev' } }, attrs(), store)).toBe(false);
    expect(matchesNamespaceSelector({}, attrs({ namespace: 'gone' }), store)).toBe(true);
    let err: unknown;
    try {
      matchesNamespaceSelector({ matchLabels: { env: 'prod' } }, attrs({ namespace: 'gone' }), store);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe('namespaces "gone" not found');
    // Cluster-scoped requests other than Namespaces always match.
    expect(matchesNamespaceSelector({ matchLabels: { env: 'dev' } }, attrs({ namespace: '' }), store)).toBe(
      true,
    );
    // A Namespace being created is judged by its own labels.
    const nsCreate = attrs({
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      namespace: '',
      object: { metadata: { name: 'new', labels: { env: 'dev' } } },
    });
    expect(matchesNamespaceSelector({ matchLabels: { env: 'dev' } }, nsCreate, store)).toBe(true);

    const sel = { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] };
    expect(matchesObjectSelector(sel, attrs())).toBe(true);
    expect(matchesObjectSelector(sel, attrs({ object: { metadata: {} } }))).toBe(false);
    expect(
      matchesObjectSelector(
        sel,
        attrs({ object: { metadata: {} }, oldObject: { metadata: { labels: { app: 'web' } } } }),
      ),
    ).toBe(true);
  });

  it('builds attributes from what the registry passes, and exempts the admission configuration kinds', () => {
    const t = registry.lookup('apps', 'v1', 'deployments')!;
    const a = admissionAttributes(
      'UPDATE',
      t,
      { metadata: { name: 'web', namespace: 'default' } },
      undefined,
      {
        subresource: 'scale',
        user: { username: 'bob', groups: ['devs'] },
        dryRun: true,
      },
    );
    expect(a.kind).toEqual({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect(a.namespace).toBe('default');
    expect(a.userInfo).toEqual({ username: 'bob', groups: ['devs'] });
    const ns = registry.lookup('', 'v1', 'namespaces')!;
    expect(admissionAttributes('UPDATE', ns, { metadata: { name: 'team' } }, undefined, {}).namespace).toBe(
      'team',
    );
    expect(admissionAttributes('CREATE', ns, { metadata: { name: 'team' } }, undefined, {}).namespace).toBe(
      '',
    );
    expect(
      isExemptAdmissionConfigurationResource(
        attrs({
          kind: {
            group: 'admissionregistration.k8s.io',
            version: 'v1',
            kind: 'ValidatingWebhookConfiguration',
          },
        }),
      ),
    ).toBe(true);
  });
});
