/**
 * The EtcdCluster controller on a control plane without nodes (as envtest: pods stay Pending), so
 * no member ever becomes ready: the operator seeds the cluster with one member and waits — it must
 * not add a second member while the first is not ready — and the schema validates and defaults.
 */
import { PodDisruptionBudget, Service, StatefulSet } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdCluster } from '../src/api/etcd/v1alpha1/etcdcluster.js';
import { InMemoryMemberApi } from '../src/members.js';
import { eventually, type OperatorTestEnv, startOperatorTestEnv } from '../src/testing/env.js';

const members = new InMemoryMemberApi();
let t: OperatorTestEnv;
beforeAll(async () => {
  t = await startOperatorTestEnv({ members });
});
afterAll(async () => {
  await t?.stop();
});

const ns = 'default';

describe('the EtcdCluster controller, with no node to run its pods', () => {
  it('seeds the cluster with one member, its StatefulSet, Services and budget, and adds no member before it is ready', async () => {
    await t.client.create({
      apiVersion: 'etcd.cloud.io/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'pending', namespace: ns },
      spec: { size: 3, version: '3.5.17' },
    } satisfies EtcdCluster);
    const c = await eventually(async () => {
      const live = await t.client.get(EtcdCluster, 'pending', { namespace: ns });
      return live.status?.observedGeneration === 1 ? live : undefined;
    });
    expect(c.status).toMatchObject({
      phase: 'Creating',
      size: 1,
      readyMembers: 0,
      members: [{ name: 'pending-0' }],
    });
    expect(c.status?.conditions?.find((x) => x.type === 'Available')?.status).toBe('False');
    expect((await t.client.get(StatefulSet, 'pending', { namespace: ns })).spec?.replicas).toBe(1);
    expect((await t.client.get(Service, 'pending', { namespace: ns })).spec?.clusterIP).toBe('None');
    expect((await t.client.get(Service, 'pending-client', { namespace: ns })).spec?.ports?.[0]?.port).toBe(
      2379,
    );
    expect((await t.client.get(PodDisruptionBudget, 'pending', { namespace: ns })).spec?.minAvailable).toBe(
      1,
    );

    // Another reconcile (a new generation), still with no ready pod: still one member.
    await t.client.patch(c, { spec: { version: '3.5.18' } });
    await eventually(
      async () =>
        (await t.client.get(EtcdCluster, 'pending', { namespace: ns })).status?.observedGeneration === 2,
    );
    expect(members.history.map((h) => `${h.op} ${h.member}`)).toEqual(['add pending-0']);
  });

  it('defaults the size and version, and refuses a size out of 1..9', async () => {
    const created = await t.client.create({
      apiVersion: 'etcd.cloud.io/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'defaulted', namespace: ns },
      spec: {},
    } as unknown as EtcdCluster);
    expect(created.spec).toEqual({ size: 3, version: '3.5.17' });
    await expect(
      t.client.create({
        apiVersion: 'etcd.cloud.io/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name: 'empty', namespace: ns },
        spec: { size: 0, version: '3.5.17' },
      } satisfies EtcdCluster),
    ).rejects.toThrow(/spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1/);
  });
});
