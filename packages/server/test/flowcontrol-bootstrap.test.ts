/**
 * API Priority and Fairness' bootstrap configuration, as a fresh kube-apiserver 1.32 has it
 * (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go), seen and changed with kubectl.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from './kubectl.js';

let k: KubectlEnv;
beforeAll(async () => {
  k = await startKubectlEnv();
});
afterAll(async () => {
  await k?.stop();
});

/** `kubectl get` without the AGE column (the rest is what a 1.32 cluster prints). */
async function table(resource: string): Promise<string[][]> {
  const out = await k.ok(['get', resource, '--no-headers']);
  return out
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/));
}

const getJson = async (args: string[]) => JSON.parse(await k.ok(['get', ...args, '-o', 'json']));

describe('APF bootstrap configuration', () => {
  it('lists the mandatory and suggested flow schemas, none missing its priority level', async () => {
    const rows = await table('flowschemas');
    expect(
      rows.map(([name, pl, precedence, method, , missing]) => [name, pl, precedence, method, missing]),
    ).toEqual([
      ['catch-all', 'catch-all', '10000', 'ByUser', 'False'],
      ['endpoint-controller', 'workload-high', '150', 'ByUser', 'False'],
      ['exempt', 'exempt', '1', '<none>', 'False'],
      ['global-default', 'global-default', '9900', 'ByUser', 'False'],
      ['kube-controller-manager', 'workload-high', '800', 'ByNamespace', 'False'],
      ['kube-scheduler', 'workload-high', '800', 'ByNamespace', 'False'],
      ['kube-system-service-accounts', 'workload-high', '900', 'ByNamespace', 'False'],
      ['probes', 'exempt', '2', '<none>', 'False'],
      ['service-accounts', 'workload-low', '9000', 'ByUser', 'False'],
      ['system-leader-election', 'leader-election', '100', 'ByUser', 'False'],
      ['system-node-high', 'node-high', '400', 'ByUser', 'False'],
      ['system-nodes', 'system', '500', 'ByUser', 'False'],
      ['workload-leader-election', 'leader-election', '200', 'ByUser', 'False'],
    ]);
  });

  it('lists the priority levels with their limits', async () => {
    const levels = (await getJson(['prioritylevelconfigurations'])).items;
    expect(levels.map((l: any) => [l.metadata.name, l.spec.type])).toEqual([
      ['catch-all', 'Limited'],
      ['exempt', 'Exempt'],
      ['global-default', 'Limited'],
      ['leader-election', 'Limited'],
      ['node-high', 'Limited'],
      ['system', 'Limited'],
      ['workload-high', 'Limited'],
      ['workload-low', 'Limited'],
    ]);
    const byName = Object.fromEntries(levels.map((l: any) => [l.metadata.name, l]));
    expect(byName['workload-low'].spec.limited).toEqual({
      nominalConcurrencyShares: 100,
      limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
      lendablePercent: 90,
    });
    expect(byName['catch-all'].spec.limited).toEqual({
      nominalConcurrencyShares: 5,
      limitResponse: { type: 'Reject' },
      lendablePercent: 0,
    });
    expect(byName.exempt.spec).toEqual({
      type: 'Exempt',
      exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 },
    });
    for (const l of levels)
      expect(l.metadata.annotations).toEqual({ 'apf.kubernetes.io/autoupdate-spec': 'true' });
  });

  it('has kube’s matching rules and the Dangling condition', async () => {
    const fs = await getJson(['flowschema', 'system-leader-election']);
    expect(fs.metadata.annotations).toEqual({ 'apf.kubernetes.io/autoupdate-spec': 'true' });
    expect(fs.spec).toEqual({
      priorityLevelConfiguration: { name: 'leader-election' },
      matchingPrecedence: 100,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [
            { kind: 'User', user: { name: 'system:kube-controller-manager' } },
            { kind: 'User', user: { name: 'system:kube-scheduler' } },
            { kind: 'ServiceAccount', serviceAccount: { name: '*', namespace: 'kube-system' } },
          ],
          resourceRules: [
            {
              verbs: ['get', 'create', 'update'],
              apiGroups: ['coordination.k8s.io'],
              resources: ['leases'],
              namespaces: ['*'],
            },
          ],
        },
      ],
    });
    expect(fs.status.conditions).toEqual([
      {
        type: 'Dangling',
        status: 'False',
        lastTransitionTime: expect.any(String),
        reason: 'Found',
        message:
          'This FlowSchema references the PriorityLevelConfiguration object named "leader-election" and it exists',
      },
    ]);
    const exempt = await getJson(['flowschema', 'exempt']);
    expect(exempt.spec.rules).toEqual([
      {
        subjects: [{ kind: 'Group', group: { name: 'system:masters' } }],
        resourceRules: [
          { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] },
        ],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      },
    ]);
  });

  it('restores a deleted or edited object whose spec is auto-updated, and leaves one that opted out', async () => {
    const before = await getJson(['flowschema', 'probes']);
    await k.ok(['delete', 'flowschema', 'probes']);
    await eventually(async () => {
      const r = await k.run(['get', 'flowschema', 'probes', '-o', 'json']);
      return r.code === 0 && JSON.parse(r.stdout).metadata.uid !== before.metadata.uid;
    });
    expect((await getJson(['flowschema', 'probes'])).spec).toEqual(before.spec);
    // A mandatory priority level's spec cannot be edited (kube's validation refuses it), and a
    // deleted one comes back.
    const edit = await k.run([
      'patch',
      'prioritylevelconfiguration',
      'catch-all',
      '--type=merge',
      '-p',
      '{"metadata":{"annotations":{"apf.kubernetes.io/autoupdate-spec":"false"}},"spec":{"limited":{"nominalConcurrencyShares":7}}}',
    ]);
    expect(edit.code).not.toBe(0);
    expect(edit.stderr).toContain(
      `The PriorityLevelConfiguration "catch-all" is invalid: spec: Invalid value:`,
    );
    expect(edit.stderr).toContain("spec of 'catch-all' must equal the fixed value");
    const catchAll = await getJson(['prioritylevelconfiguration', 'catch-all']);
    await k.ok(['delete', 'prioritylevelconfiguration', 'catch-all']);
    await eventually(async () => {
      const r = await k.run(['get', 'prioritylevelconfiguration', 'catch-all', '-o', 'json']);
      return r.code === 0 && JSON.parse(r.stdout).metadata.uid !== catchAll.metadata.uid;
    });
    expect((await getJson(['prioritylevelconfiguration', 'catch-all'])).spec).toEqual(catchAll.spec);
    // A suggested one that opted out keeps the user's spec.
    await k.ok([
      'patch',
      'flowschema',
      'service-accounts',
      '--type=merge',
      '-p',
      '{"metadata":{"annotations":{"apf.kubernetes.io/autoupdate-spec":"false"}},"spec":{"matchingPrecedence":9001}}',
    ]);
    await k.ok([
      'patch',
      'flowschema',
      'global-default',
      '--type=merge',
      '-p',
      '{"spec":{"matchingPrecedence":9901}}',
    ]);
    await eventually(
      async () => (await getJson(['flowschema', 'global-default'])).spec.matchingPrecedence === 9900,
    );
    expect((await getJson(['flowschema', 'service-accounts'])).spec.matchingPrecedence).toBe(9001);
  });

  it('marks a flow schema whose priority level is missing as dangling', async () => {
    await k.ok(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'FlowSchema',
        metadata: { name: 'mine' },
        spec: { priorityLevelConfiguration: { name: 'nowhere' }, matchingPrecedence: 5000 },
      }),
    });
    await eventually(async () => {
      const c = (await getJson(['flowschema', 'mine'])).status?.conditions?.[0];
      return c?.status === 'True' && c.reason === 'NotFound';
    });
    const row = (await table('flowschemas')).find((r) => r[0] === 'mine');
    expect(row?.[5]).toBe('True');
  });
});
