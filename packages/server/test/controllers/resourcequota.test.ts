import { Client, ConfigMap, Pod, ResourceQuota } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 1 } });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

const pod = (name: string, cpu: string, memory: string): Pod => ({
  metadata: { name },
  spec: {
    containers: [
      {
        name: 'a',
        image: 'nginx',
        resources: { requests: { cpu, memory }, limits: { cpu: '1', memory: '256Mi' } },
      },
      { name: 'b', image: 'nginx', resources: { requests: { cpu: '50m', memory: '64Mi' } } },
    ],
  },
});

describe('resource quota controller', () => {
  it('mirrors hard into status and counts what the namespace uses, following changes', async () => {
    await k.ok(['create', 'namespace', 'team']);
    const quotas = client.api(ResourceQuota, 'team');
    await client.api(Pod, 'team').create(pod('one', '250m', '128Mi'));
    await client.api(ConfigMap, 'team').create({ metadata: { name: 'settings' } });
    await quotas.create({
      metadata: { name: 'compute' },
      spec: {
        hard: {
          pods: '10',
          'count/configmaps': '5',
          'requests.cpu': '2',
          'requests.memory': '1Gi',
          'limits.memory': '2Gi',
          'count/deployments.apps': '3',
        },
      },
    });
    const status = await eventually(async () => {
      const s = (await quotas.get('compute')).status;
      return s?.used?.pods === '1' ? s : undefined;
    });
    expect(status.hard).toEqual({
      pods: '10',
      'count/configmaps': '5',
      'requests.cpu': '2',
      'requests.memory': '1Gi',
      'limits.memory': '2Gi',
      'count/deployments.apps': '3',
    });
    expect(status.used).toEqual({
      pods: '1',
      // kube-root-ca.crt is published in every namespace too, when the server does so.
      'count/configmaps': expect.stringMatching(/^[12]$/),
      'requests.cpu': '300m',
      'requests.memory': '192Mi',
      'limits.memory': '256Mi',
      'count/deployments.apps': '0',
    });
    // Now that the quota tracks limits.memory, every container must state one (the pod one,
    // created before the quota, did not): a pod like it is refused at admission.
    await expect(client.api(Pod, 'team').create(pod('like-one', '1', '256Mi'))).rejects.toMatchObject({
      status: {
        code: 403,
        message: 'pods "like-one" is forbidden: failed quota: compute: must specify limits.memory for: b',
      },
    });
    // A second pod: the pod event brings the quota up to date.
    const two = pod('two', '1', '256Mi');
    two.spec!.containers[1]!.resources!.limits = { memory: '64Mi' };
    await client.api(Pod, 'team').create(two);
    const later = await eventually(async () => {
      const s = (await quotas.get('compute')).status;
      return s?.used?.pods === '2' ? s : undefined;
    });
    expect(later.used).toMatchObject({
      'requests.cpu': '1350m',
      'requests.memory': '512Mi',
      'limits.memory': '576Mi',
    });
    const described = await k.ok(['describe', 'quota', 'compute', '-n', 'team']);
    expect(described).toMatch(/requests\.cpu\s+1350m\s+2/);
  });
});

describe('a quota over a workload', () => {
  it('caps a Deployment: the ReplicaSet creates what fits and reports the refusals', async () => {
    await k.ok(['create', 'namespace', 'capped']);
    await k.ok(['create', 'quota', 'pods', '--hard=pods=2', '-n', 'capped']);
    await eventually(
      async () => (await client.api(ResourceQuota, 'capped').get('pods')).status?.used?.pods === '0',
    );
    await k.ok(['create', 'deployment', 'web', '--image=nginx', '--replicas=3', '-n', 'capped']);
    const warning = await eventually(async () => {
      const events = await k.ok([
        'get',
        'events',
        '-n',
        'capped',
        '--field-selector=reason=FailedCreate',
        '-o',
        'jsonpath={.items[0].message}',
      ]);
      return events || undefined;
    });
    expect(warning).toMatch(
      /^Error creating: pods "web-[a-z0-9]+-[a-z0-9]{5}" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2$/,
    );
    const pods = await client.api(Pod, 'capped').list();
    expect(pods.items).toHaveLength(2);
    expect((await client.api(ResourceQuota, 'capped').get('pods')).status?.used).toEqual({ pods: '2' });
  });
});
