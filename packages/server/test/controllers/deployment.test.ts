import { Client, Deployment, Pod, ReplicaSet } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podTemplateHash } from '../../src/controllers/deployment.js';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 2 } });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

const setsOf = async (app: string) =>
  (await client.api(ReplicaSet, 'default').list({ labelSelector: { app } })).items.sort((a, b) =>
    (a.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? '').localeCompare(
      b.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? '',
    ),
  );

describe('Deployment controller', () => {
  it('hashes pod templates like Kubernetes writes them: stable, in its alphabet', () => {
    const t = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    expect(podTemplateHash(t)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    expect(podTemplateHash(structuredClone(t))).toBe(podTemplateHash(t));
    expect(podTemplateHash(t, 1)).not.toBe(podTemplateHash(t));
  });

  it('rolls out a Deployment: kubectl rollout status, set image, history, cascading delete', async () => {
    await k.ok(['create', 'deployment', 'web', '--image=nginx:1.26', '--replicas=3']);
    expect(await k.ok(['rollout', 'status', 'deployment/web', '--timeout=30s'])).toContain(
      'deployment "web" successfully rolled out',
    );
    const d = await client.api(Deployment, 'default').get('web');
    expect(d.status).toMatchObject({
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    });
    expect(d.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Available', 'True', 'MinimumReplicasAvailable'],
      ['Progressing', 'True', 'NewReplicaSetAvailable'],
    ]);
    const [first] = await setsOf('web');
    expect(first?.metadata?.name).toBe(`web-${first?.metadata?.labels?.['pod-template-hash']}`);
    expect(await k.ok(['get', 'deploy', 'web'])).toMatch(/^web\s+3\/3\s+3\s+3\s+/m);

    await k.ok(['set', 'image', 'deployment/web', 'nginx=nginx:1.27']);
    await k.ok(['rollout', 'status', 'deployment/web', '--timeout=30s']);
    const sets = await setsOf('web');
    expect(
      sets.map((rs) => [rs.metadata?.annotations?.['deployment.kubernetes.io/revision'], rs.spec?.replicas]),
    ).toEqual([
      ['1', 0],
      ['2', 3],
    ]);
    await eventually(async () => {
      const live = (await client.api(Pod, 'default').list({ labelSelector: { app: 'web' } })).items;
      return live.length === 3 && live.every((p) => p.spec?.containers?.[0]?.image === 'nginx:1.27');
    });
    expect(await k.ok(['rollout', 'history', 'deployment/web'])).toMatch(/^1\s+<none>\s*\n2\s+<none>/m);

    await k.ok(['delete', 'deployment', 'web']);
    await eventually(async () => {
      const rs = await client.api(ReplicaSet, 'default').list({ labelSelector: { app: 'web' } });
      const p = await client.api(Pod, 'default').list({ labelSelector: { app: 'web' } });
      return rs.items.length === 0 && p.items.length === 0;
    });
  });

  it('Recreate: the old pods go before the new ones come', async () => {
    await k.ok(['create', 'deployment', 'batch', '--image=busybox:1', '--replicas=2']);
    await k.ok([
      'patch',
      'deployment',
      'batch',
      '-p',
      '{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}',
    ]);
    await k.ok(['rollout', 'status', 'deployment/batch', '--timeout=30s']);
    await k.ok(['set', 'image', 'deployment/batch', 'busybox=busybox:2']);
    await k.ok(['rollout', 'status', 'deployment/batch', '--timeout=30s']);
    const sets = await setsOf('batch');
    expect(sets.map((rs) => rs.spec?.replicas)).toEqual([0, 2]);
  });
});
