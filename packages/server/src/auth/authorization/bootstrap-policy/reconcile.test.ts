import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Client,
  ClusterRole,
  ClusterRoleBinding,
  type ResourceDescriptor,
  Role,
  RoleBinding,
} from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../../control-plane.js';
import { startTestEnv } from '../../../testing/test-env.js';
import { bootstrapPolicy, reconciledBinding, reconciledRole } from './index.js';
import type { PolicyBinding, PolicyRole } from './rules.js';

const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';

/** Every RBAC object's resourceVersion, by kind and key. */
async function versions(client: Client): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const kinds: ResourceDescriptor[] = [ClusterRole, ClusterRoleBinding, Role, RoleBinding];
  for (const kind of kinds)
    for (const o of (await client.api(kind, '').list()).items)
      out.set(
        `${kind.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`,
        o.metadata?.resourceVersion ?? '',
      );
  return out;
}

describe('the bootstrap policy on a new cluster (controllers off)', () => {
  let cp: ControlPlane;
  let client: Client;
  beforeAll(async () => {
    cp = await startTestEnv({ controllers: false });
    client = new Client(cp.clientConfig);
  });
  afterAll(() => cp.stop());

  it('creates every object of the policy, as the policy has it', async () => {
    const p = bootstrapPolicy();
    const crs = (await client.api(ClusterRole).list()).items;
    expect(crs.map((r) => r.metadata?.name).sort()).toEqual(
      p.clusterRoles.map((r) => r.metadata.name).sort(),
    );
    const crbs = (await client.api(ClusterRoleBinding).list()).items;
    expect(crbs).toHaveLength(p.clusterRoleBindings.length);
    expect((await client.api(Role, '').list()).items).toHaveLength(p.roles.length);
    expect((await client.api(RoleBinding, '').list()).items).toHaveLength(p.roleBindings.length);
    const node = await client.api(ClusterRole).get('system:node-proxier');
    expect(node.rules).toEqual(p.clusterRoles.find((r) => r.metadata.name === 'system:node-proxier')?.rules);
    expect(node.metadata?.labels).toEqual({ 'kubernetes.io/bootstrapping': 'rbac-defaults' });
    expect(node.metadata?.annotations).toEqual({ [AUTOUPDATE]: 'true' });
    const lock = await client.api(RoleBinding, 'kube-system').get('system::leader-locking-kube-scheduler');
    expect(lock.subjects?.map((s) => `${s.kind}:${s.name}`)).toEqual([
      'User:system:kube-scheduler',
      'ServiceAccount:kube-scheduler',
    ]);
  });

  it('leaves admin, edit and view without rules: the API server does not aggregate', async () => {
    for (const name of ['admin', 'edit', 'view']) {
      const role = await client.api(ClusterRole).get(name);
      expect(role.aggregationRule?.clusterRoleSelectors).toHaveLength(1);
      expect(role.rules ?? []).toEqual([]);
    }
  });
});

describe('the bootstrap policy across restarts on a data directory', () => {
  let dir: string;
  let cp: ControlPlane | undefined;
  // One server on the directory at a time: each start stops the one before.
  const start = async () => {
    await cp?.stop();
    cp = await startTestEnv({ controllers: false, dataDir: dir });
    return new Client(cp.clientConfig);
  };
  const restart = start;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kubeloop-policy-'));
  });
  afterAll(async () => {
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('changes nothing on a second start', async () => {
    const before = await versions(await start());
    const after = await versions(await restart());
    expect(after).toEqual(before);
  });

  it('adds back what was taken from an autoupdate role and binding, and keeps what was added', async () => {
    let client = await start();
    const roles = client.api(ClusterRole);
    const view = await roles.get('system:aggregate-to-view');
    const extra = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] };
    await roles.update({ ...view, rules: [...(view.rules ?? []).slice(1), extra] });
    const bindings = client.api(ClusterRoleBinding);
    const pub = await bindings.get('system:public-info-viewer');
    await bindings.update({
      ...pub,
      metadata: { ...pub.metadata, labels: { team: 'a' } },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
    });

    client = await restart();
    const healed = await client.api(ClusterRole).get('system:aggregate-to-view');
    const first = bootstrapPolicy().clusterRoles.find((r) => r.metadata.name === 'system:aggregate-to-view')
      ?.rules?.[0];
    // The missing rule comes back broken down, one verb and resource each, after what was there.
    expect(healed.rules?.slice(0, -30)).toEqual([...(view.rules ?? []).slice(1), extra]);
    expect(healed.rules).toHaveLength((view.rules?.length ?? 0) + 30);
    expect(healed.rules?.at(-1)).toEqual({
      apiGroups: [''],
      resources: ['services/status'],
      verbs: ['watch'],
    });
    expect(first?.resources).toHaveLength(10);
    const pubNow = await client.api(ClusterRoleBinding).get('system:public-info-viewer');
    expect(pubNow.subjects?.map((s) => s.name)).toEqual([
      'alice',
      'system:authenticated',
      'system:unauthenticated',
    ]);
    expect(pubNow.metadata?.labels).toEqual({ team: 'a', 'kubernetes.io/bootstrapping': 'rbac-defaults' });
  });

  it('leaves a role annotated autoupdate "false" as it is', async () => {
    let client = await start();
    const roles = client.api(ClusterRole);
    const basic = await roles.get('system:basic-user');
    await roles.update({
      ...basic,
      metadata: { ...basic.metadata, annotations: { [AUTOUPDATE]: 'false' } },
      rules: [],
    });
    const rv = (await roles.get('system:basic-user')).metadata?.resourceVersion;
    client = await restart();
    const after = await client.api(ClusterRole).get('system:basic-user');
    expect(after.metadata?.resourceVersion).toBe(rv);
    expect(after.rules ?? []).toEqual([]);
  });

  it('recreates a deleted role', async () => {
    let client = await start();
    await client.api(ClusterRole).delete('system:heapster');
    await client.api(RoleBinding, 'kube-system').delete('system:controller:token-cleaner');
    client = await restart();
    expect((await client.api(ClusterRole).get('system:heapster')).rules).toHaveLength(2);
    expect(
      (await client.api(RoleBinding, 'kube-system').get('system:controller:token-cleaner')).subjects,
    ).toEqual([{ kind: 'ServiceAccount', name: 'token-cleaner', namespace: 'kube-system' }]);
  });
});

describe('computing a reconcile (union mode)', () => {
  const policy = bootstrapPolicy();
  const admin = policy.clusterRoles.find((r) => r.metadata.name === 'admin') as PolicyRole;
  const crb = policy.clusterRoleBindings.find((b) => b.metadata.name === 'cluster-admin') as PolicyBinding;

  it('keeps the rules the aggregation controller gave an aggregated role', () => {
    const existing = {
      ...structuredClone(admin),
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
    };
    expect(reconciledRole(existing as never, admin)).toBeUndefined();
  });

  it('adds missing aggregation selectors, and removes an aggregation the policy does not have', () => {
    const noSelectors = { ...structuredClone(admin), aggregationRule: { clusterRoleSelectors: [] } };
    expect(reconciledRole(noSelectors as never, admin)?.aggregationRule).toEqual(admin.aggregationRule);
    const heapster = policy.clusterRoles.find((r) => r.metadata.name === 'system:heapster') as PolicyRole;
    const aggregated = { ...structuredClone(heapster), aggregationRule: admin.aggregationRule };
    expect(reconciledRole(aggregated as never, heapster)?.aggregationRule).toBeUndefined();
  });

  it('recreates a binding whose roleRef differs', () => {
    const other = { ...structuredClone(crb), roleRef: { ...crb.roleRef, name: 'view' } };
    expect(reconciledBinding(other as never, crb)).toBe('recreate');
  });
});
