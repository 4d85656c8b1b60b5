/**
 * The bootstrap controller roles, as the built-in components' users see them: `kubectl auth
 * can-i --as` each component answers what its role grants in a 1.32 cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 1 } });
});
afterAll(async () => {
  await k?.stop();
});

describe('built-in components under RBAC', () => {
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
