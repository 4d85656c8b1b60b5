/**
 * The built-in components act under their own identities, held to the permissions the bootstrap
 * policy gives them: a controller role that loses a rule makes that controller fail as it would
 * in a cluster, with the API server's forbidden message in its Event, until the rule is back; and
 * `kubectl auth can-i --as` each component answers what its role grants in a 1.32 cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 1 } });
});
afterAll(async () => {
  await k?.stop();
});

describe('built-in components under RBAC', () => {
  const ROLE = 'system:controller:replicaset-controller';

  it('the ReplicaSet controller creates pods as its ServiceAccount, and only with its role', async () => {
    await k.ok(['create', 'namespace', 'ids']);
    const role = JSON.parse(await k.ok(['get', 'clusterrole', ROLE, '-o', 'json']));
    const withoutCreate = structuredClone(role);
    for (const rule of withoutCreate.rules) {
      if ((rule.resources ?? []).includes('pods'))
        rule.verbs = rule.verbs.filter((v: string) => v !== 'create');
    }
    await k.ok(['replace', '-f', '-'], { input: JSON.stringify(withoutCreate) });
    await k.ok(['create', 'deployment', 'web', '--image=nginx', '-n', 'ids']);
    const message = await eventually(async () => {
      const m = await k.ok([
        'get',
        'events',
        '-n',
        'ids',
        '--field-selector=reason=FailedCreate',
        '-o',
        'jsonpath={.items[0].message}',
      ]);
      return m || undefined;
    });
    expect(message).toBe(
      'Error creating: pods is forbidden: User "system:serviceaccount:kube-system:replicaset-controller" cannot create resource "pods" in API group "" in the namespace "ids"',
    );
    expect(await k.ok(['get', 'pods', '-n', 'ids', '-o', 'name'])).toBe('');
    // The rule back: the controller's retries succeed.
    const current = JSON.parse(await k.ok(['get', 'clusterrole', ROLE, '-o', 'json']));
    current.rules = role.rules;
    await k.ok(['replace', '-f', '-'], { input: JSON.stringify(current) });
    await eventually(async () => (await k.ok(['get', 'pods', '-n', 'ids', '-o', 'name'])) !== '', 20_000);
  });

  it('kubectl auth can-i answers for the controllers as their roles say', async () => {
    const can = (args: string[]) => k.run(['auth', 'can-i', ...args]);
    expect(
      await can([
        'create',
        'pods',
        '--as=system:serviceaccount:kube-system:replicaset-controller',
        '-n',
        'x',
      ]),
    ).toMatchObject({ stdout: 'yes\n' });
    expect(
      await can([
        'create',
        'deployments.apps',
        '--as=system:serviceaccount:kube-system:replicaset-controller',
        '-n',
        'x',
      ]),
    ).toMatchObject({ stdout: 'no\n' });
    expect(
      await can(['create', 'pods', '--subresource=binding', '--as=system:kube-scheduler', '-n', 'x']),
    ).toMatchObject({
      stdout: 'yes\n',
    });
    expect(await can(['delete', 'nodes', '--as=system:kube-scheduler'])).toMatchObject({ stdout: 'no\n' });
  });
});
