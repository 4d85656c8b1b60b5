/**
 * The ClusterRole aggregation controller of the built-in kube-controller-manager: the bootstrap
 * admin/edit/view roles filled from the roles labelled for them, following those labels.
 */
import { Client, ClusterRole } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregatedRules } from '../../src/controllers/kcm/clusterrole-aggregation.js';
import type { ControlPlane } from '../../src/index.js';
import { eventually, startTestEnv } from '../../src/testing/index.js';

type Rule = NonNullable<ClusterRole['rules']>[number];

const WIDGETS: Rule = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] };
const has = (role: ClusterRole, rule: Rule) =>
  (role.rules ?? []).some((r) => JSON.stringify(r) === JSON.stringify(rule));

describe('aggregatedRules (syncClusterRole)', () => {
  const role = (name: string, labels: Record<string, string>, rules: Rule[]): ClusterRole => ({
    metadata: { name, labels },
    rules,
  });
  it('takes the matching roles in name order, each rule once, never the role itself', () => {
    const agg: ClusterRole = {
      metadata: { name: 'agg', labels: { a: 'x' } },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'x' } }] },
      rules: [WIDGETS],
    };
    const one = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
    const two = { apiGroups: [''], resources: ['secrets'], verbs: ['get'] };
    expect(
      aggregatedRules(agg, [
        agg,
        role('z', { a: 'x' }, [one]),
        role('b', { a: 'x' }, [two, one]),
        role('c', {}, [WIDGETS]),
      ]),
    ).toEqual([two, one]);
  });
});

describe('the clusterrole-aggregation controller', () => {
  let cp: ControlPlane;
  let client: Client;
  beforeAll(async () => {
    cp = await startTestEnv();
    client = new Client(cp.clientConfig);
  });
  afterAll(() => cp.stop());

  const get = (name: string) => client.api(ClusterRole).get(name);

  it('fills view, edit and admin from the bootstrap aggregate-to roles, as kube-controller-manager does', async () => {
    const view = await eventually(async (): Promise<ClusterRole | undefined> => {
      const v = await get('view');
      return (v.rules?.length ?? 0) > 0 ? v : undefined;
    });
    expect(view.rules).toEqual((await get('system:aggregate-to-view')).rules);
    const edit = await eventually(async () => {
      const e = await get('edit');
      return e.rules?.length === 23 ? e : undefined;
    });
    // edit = system:aggregate-to-edit's rules, then view's (matching roles in name order).
    expect(edit.rules).toEqual([
      ...((await get('system:aggregate-to-edit')).rules ?? []),
      ...(view.rules ?? []),
    ]);
    const admin = await eventually(async () => {
      const a = await get('admin');
      return a.rules?.length === 25 ? a : undefined;
    });
    expect(admin.rules?.slice(23)).toEqual((await get('system:aggregate-to-admin')).rules);
  });

  it("adds a custom resource's role labelled aggregate-to-admin to admin, and takes it away with the label", async () => {
    const roles = client.api(ClusterRole);
    await roles.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'widgets-admin', labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } },
      rules: [WIDGETS],
    });
    await eventually(async () => has(await get('admin'), WIDGETS), 10_000, 'admin to get the widgets rule');
    expect(has(await get('edit'), WIDGETS)).toBe(false);

    const labelled = await roles.get('widgets-admin');
    await roles.update({ ...labelled, metadata: { ...labelled.metadata, labels: {} } });
    await eventually(async () => !has(await get('admin'), WIDGETS), 10_000, 'admin to lose the widgets rule');
    expect((await get('admin')).rules).toHaveLength(25);
  });

  it('follows a new aggregated role, its contributors changing and going', async () => {
    const roles = client.api(ClusterRole);
    await roles.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'monitoring' },
      aggregationRule: {
        clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate-to-monitoring': 'true' } }],
      },
    });
    const part = await roles.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'monitoring-widgets', labels: { 'example.com/aggregate-to-monitoring': 'true' } },
      rules: [WIDGETS],
    });
    await eventually(async () => has(await get('monitoring'), WIDGETS), 10_000, 'monitoring to get the rule');
    const pods: Rule = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
    await roles.update({ ...part, rules: [WIDGETS, pods] });
    await eventually(
      async () => has(await get('monitoring'), pods),
      10_000,
      'monitoring to follow the change',
    );
    await roles.delete('monitoring-widgets');
    await eventually(
      async () => ((await get('monitoring')).rules ?? []).length === 0,
      10_000,
      'no rules left',
    );
  });
});
