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
    // The controller writes the revision through deployments/status, as kube's: the status
    // strategy keeps the annotation, and the generation stays the creation's.
    expect(d.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
    expect(d.metadata?.generation).toBe(1);
    const revisionWriter = d.metadata?.managedFields?.find(
      (e) => (e.fieldsV1 as any)?.['f:metadata']?.['f:annotations']?.['f:deployment.kubernetes.io/revision'],
    );
    expect(revisionWriter?.subresource).toBe('status');
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

  it('kubectl rollout undo restores the previous template, or the one of --to-revision', async () => {
    await k.ok(['create', 'deployment', 'undo', '--image=nginx:1.26', '--replicas=2']);
    await k.ok(['annotate', 'deployment', 'undo', 'kubernetes.io/change-cause=first']);
    await k.ok(['rollout', 'status', 'deployment/undo', '--timeout=30s']);
    await k.ok(['set', 'image', 'deployment/undo', 'nginx=nginx:1.27']);
    await k.ok(['annotate', '--overwrite', 'deployment', 'undo', 'kubernetes.io/change-cause=second']);
    await k.ok(['rollout', 'status', 'deployment/undo', '--timeout=30s']);
    // The Deployment's annotations travel to the ReplicaSet of its template: history shows them.
    await eventually(async () =>
      /^1\s+first\s*\n2\s+second\s*$/m.test(await k.ok(['rollout', 'history', 'deployment/undo'])),
    );

    expect(await k.ok(['rollout', 'undo', 'deployment/undo'])).toContain('deployment.apps/undo rolled back');
    await k.ok(['rollout', 'status', 'deployment/undo', '--timeout=30s']);
    const image = async () =>
      (await client.api(Deployment, 'default').get('undo')).spec?.template?.spec?.containers?.[0]?.image;
    expect(await image()).toBe('nginx:1.26');
    // The first ReplicaSet is the new one again, with the next revision; its old one is history.
    const revisions = async () =>
      (await setsOf('undo')).map((rs) => [
        rs.spec?.template?.spec?.containers?.[0]?.image,
        rs.metadata?.annotations?.['deployment.kubernetes.io/revision'],
        rs.metadata?.annotations?.['deployment.kubernetes.io/revision-history'],
        rs.spec?.replicas,
      ]);
    expect(await revisions()).toEqual([
      ['nginx:1.27', '2', undefined, 0],
      ['nginx:1.26', '3', '1', 2],
    ]);
    const d = await client.api(Deployment, 'default').get('undo');
    expect(d.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('3');
    expect(d.metadata?.annotations?.['kubernetes.io/change-cause']).toBe('first');
    await eventually(async () => {
      const pods = (await client.api(Pod, 'default').list({ labelSelector: { app: 'undo' } })).items;
      return pods.length === 2 && pods.every((p) => p.spec?.containers?.[0]?.image === 'nginx:1.26');
    });
    expect(await k.ok(['rollout', 'history', 'deployment/undo'])).toMatch(/^2\s+second\s*\n3\s+first\s*$/m);

    expect(await k.ok(['rollout', 'undo', 'deployment/undo', '--to-revision=2'])).toContain('rolled back');
    await k.ok(['rollout', 'status', 'deployment/undo', '--timeout=30s']);
    expect(await image()).toBe('nginx:1.27');
    expect(await revisions()).toEqual([
      ['nginx:1.26', '3', '1', 0],
      ['nginx:1.27', '4', '2', 2],
    ]);
    expect(await k.ok(['rollout', 'history', 'deployment/undo', '--revision=4'])).toMatch(
      /Image:\s+nginx:1\.27/,
    );
    // A revision that no longer exists: kubectl's own error.
    const missing = await k.run(['rollout', 'undo', 'deployment/undo', '--to-revision=1']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('unable to find specified revision 1 in history');
  });

  it('keeps the last revisionHistoryLimit old ReplicaSets', async () => {
    await k.ok(['create', 'deployment', 'short', '--image=nginx:1', '--replicas=1']);
    await k.ok(['patch', 'deployment', 'short', '-p', '{"spec":{"revisionHistoryLimit":1}}']);
    for (const tag of ['2', '3', '4']) {
      await k.ok(['set', 'image', 'deployment/short', `nginx=nginx:${tag}`]);
      await k.ok(['rollout', 'status', 'deployment/short', '--timeout=30s']);
    }
    await eventually(async () => (await setsOf('short')).length === 2);
    expect(
      (await setsOf('short')).map((rs) => rs.metadata?.annotations?.['deployment.kubernetes.io/revision']),
    ).toEqual(['3', '4']);
  });

  it('pause: template changes wait; resume rolls them out (DeploymentPaused, DeploymentResumed)', async () => {
    const api = client.api(Deployment, 'default');
    await k.ok(['create', 'deployment', 'held', '--image=nginx:1', '--replicas=2']);
    await k.ok(['rollout', 'status', 'deployment/held', '--timeout=30s']);
    await k.ok(['rollout', 'pause', 'deployment/held']);
    const progressing = async () =>
      (await api.get('held')).status?.conditions?.find((c) => c.type === 'Progressing');
    expect(
      await eventually(async () => {
        const c = await progressing();
        return c?.reason === 'DeploymentPaused' ? c : undefined;
      }),
    ).toMatchObject({ status: 'Unknown', message: 'Deployment is paused' });

    await k.ok(['set', 'image', 'deployment/held', 'nginx=nginx:2']);
    // Once the controller has seen the new generation, still one ReplicaSet, of the old image.
    await eventually(async () => {
      const d = await api.get('held');
      return d.status?.observedGeneration === d.metadata?.generation;
    });
    expect((await setsOf('held')).map((rs) => rs.spec?.template?.spec?.containers?.[0]?.image)).toEqual([
      'nginx:1',
    ]);
    // Scaling still works while paused.
    await k.ok(['scale', 'deployment', 'held', '--replicas=3']);
    await eventually(async () => (await setsOf('held'))[0]?.status?.readyReplicas === 3);

    const seen: string[] = [];
    // From the version before the resume: every change after it is seen, however late the watch opens.
    const from = (await api.get('held')).metadata?.resourceVersion;
    const watching = (async () => {
      for await (const ev of api.watch({ fieldSelector: 'metadata.name=held', resourceVersion: from })) {
        if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
        const c = ev.object.status?.conditions?.find((x) => x.type === 'Progressing');
        if (c?.reason && seen.at(-1) !== c.reason) seen.push(c.reason);
        if (
          c?.reason === 'NewReplicaSetAvailable' &&
          ev.object.metadata?.annotations?.['deployment.kubernetes.io/revision'] === '2'
        )
          return;
      }
    })();
    await k.ok(['rollout', 'resume', 'deployment/held']);
    await k.ok(['rollout', 'status', 'deployment/held', '--timeout=30s']);
    await watching;
    expect(seen).toContain('DeploymentResumed');
    expect(seen.indexOf('DeploymentResumed')).toBeLessThan(seen.lastIndexOf('NewReplicaSetAvailable'));
    expect(
      (await setsOf('held')).map((rs) => [
        rs.spec?.template?.spec?.containers?.[0]?.image,
        rs.spec?.replicas,
      ]),
    ).toEqual([
      ['nginx:1', 0],
      ['nginx:2', 3],
    ]);
    const undo = await k.run(['rollout', 'pause', 'deployment/held']);
    expect(undo.code).toBe(0);
    const refused = await k.run(['rollout', 'undo', 'deployment/held']);
    expect(refused.stderr).toContain('you cannot rollback a paused deployment');
  });

  it('progressDeadlineSeconds: a rollout whose pods never get ready times out', async () => {
    await k.ok(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'stall' },
        spec: {
          replicas: 1,
          progressDeadlineSeconds: 1,
          selector: { matchLabels: { app: 'stall' } },
          template: {
            metadata: { labels: { app: 'stall' }, annotations: { 'kubeloop.dev/simulate': 'never-ready' } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      }),
    });
    const condition = await eventually(async () => {
      const d = await client.api(Deployment, 'default').get('stall');
      const c = d.status?.conditions?.find((x) => x.type === 'Progressing');
      return c?.reason === 'ProgressDeadlineExceeded' ? c : undefined;
    });
    const [rs] = await setsOf('stall');
    expect(condition).toMatchObject({
      status: 'False',
      message: `ReplicaSet "${rs?.metadata?.name}" has timed out progressing.`,
    });
    const status = await k.run(['rollout', 'status', 'deployment/stall', '--timeout=10s']);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain('error: deployment "stall" exceeded its progress deadline');
  });

  it('scales up and down with kubectl, and describes what it did in events', async () => {
    await k.ok(['create', 'deployment', 'sized', '--image=nginx', '--replicas=2']);
    await k.ok(['rollout', 'status', 'deployment/sized', '--timeout=30s']);
    const [rs] = await setsOf('sized');
    const rsName = rs?.metadata?.name ?? '';
    await k.ok(['scale', 'deployment', 'sized', '--replicas=4']);
    await k.ok(['rollout', 'status', 'deployment/sized', '--timeout=30s']);
    await eventually(
      async () =>
        (await client.api(Pod, 'default').list({ labelSelector: { app: 'sized' } })).items.length === 4,
    );
    await k.ok(['scale', 'deployment', 'sized', '--replicas=1']);
    await eventually(async () => {
      const d = await client.api(Deployment, 'default').get('sized');
      const pods = (await client.api(Pod, 'default').list({ labelSelector: { app: 'sized' } })).items;
      return d.status?.replicas === 1 && d.status.availableReplicas === 1 && pods.length === 1;
    });
    const described = await eventually(async () => {
      const out = await k.ok(['describe', 'deployment', 'sized']);
      return out.includes(`Scaled down replica set ${rsName} to 1 from 4`) ? out : undefined;
    });
    expect(described).toMatch(
      new RegExp(
        `Normal\\s+ScalingReplicaSet\\s+\\S+\\s+deployment-controller\\s+Scaled up replica set ${rsName} from 0 to 2`,
      ),
    );
    expect(described).toContain(`Scaled up replica set ${rsName} to 4 from 2`);
  });
});
