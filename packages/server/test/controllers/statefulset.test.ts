import { Client, PersistentVolumeClaim, Pod, StatefulSet } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControllerRevision, sortRevisions, templatePatch } from '../../src/controllers/history.js';
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

const statefulSet = (
  name: string,
  replicas: number,
  spec: Record<string, unknown> = {},
  simulate?: string,
): StatefulSet => ({
  metadata: { name },
  spec: {
    replicas,
    serviceName: name,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: {
        labels: { app: name },
        ...(simulate && { annotations: { 'kubeloop.dev/simulate': simulate } }),
      },
      spec: { containers: [{ name: 'c', image: 'db:1' }] },
    },
    ...spec,
  },
});

const livePods = async (app: string) =>
  (await client.api(Pod, 'default').list({ labelSelector: { app } })).items
    .filter((p) => !p.metadata?.deletionTimestamp)
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));

const manifest = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 3
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: c
        image: db:1
        volumeMounts:
        - {name: data, mountPath: /data}
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests: {storage: 1Gi}
`;

describe('StatefulSet controller', () => {
  it('creates ordinal pods with their claims (kubectl apply, rollout status, scale)', async () => {
    await k.ok(['apply', '-f', '-'], { input: manifest });
    const out = await k.ok(['rollout', 'status', 'sts/db', '--timeout=30s']);
    expect(out).toContain('partitioned roll out complete: 3 new pods have been updated');
    const set = await client.api(StatefulSet, 'default').get('db');
    expect(set.status).toMatchObject({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
      collisionCount: 0,
    });
    expect(set.status?.currentRevision).toBe(set.status?.updateRevision);
    expect(set.status?.updateRevision).toMatch(/^db-[a-z0-9]+$/);

    const pods = await livePods('db');
    expect(pods.map((p) => p.metadata?.name)).toEqual(['db-0', 'db-1', 'db-2']);
    for (const [i, p] of pods.entries()) {
      expect(p.status?.phase).toBe('Running');
      expect(p.spec?.hostname).toBe(`db-${i}`);
      expect(p.spec?.subdomain).toBe('db');
      expect(p.metadata?.labels).toMatchObject({
        app: 'db',
        'statefulset.kubernetes.io/pod-name': `db-${i}`,
        'apps.kubernetes.io/pod-index': String(i),
        'controller-revision-hash': set.status?.updateRevision,
      });
      expect(p.spec?.volumes?.find((v) => v.name === 'data')).toEqual({
        name: 'data',
        persistentVolumeClaim: { claimName: `data-db-${i}` },
      });
    }
    const claims = async () =>
      (await client.api(PersistentVolumeClaim, 'default').list({ labelSelector: { app: 'db' } })).items
        .map((c) => c.metadata?.name)
        .sort();
    expect(await claims()).toEqual(['data-db-0', 'data-db-1', 'data-db-2']);

    await k.ok(['scale', 'sts', 'db', '--replicas=1']);
    await eventually(async () => (await livePods('db')).map((p) => p.metadata?.name).join() === 'db-0');
    await eventually(async () => (await client.api(StatefulSet, 'default').get('db')).status?.replicas === 1);
    // Claims outlive the pods that scaled away.
    expect(await claims()).toEqual(['data-db-0', 'data-db-1', 'data-db-2']);
  });

  it('waits for each pod to be ready before the next with OrderedReady, not with Parallel', async () => {
    const sets = client.api(StatefulSet, 'default');
    await sets.create(statefulSet('ordered', 3, {}, 'never-ready'));
    await sets.create(statefulSet('parallel', 3, { podManagementPolicy: 'Parallel' }, 'never-ready'));
    await eventually(async () => {
      const pods = await livePods('parallel');
      return pods.length === 3 && pods.every((p) => p.status?.phase === 'Running');
    });
    await eventually(async () => {
      const s = (await sets.get('ordered')).status;
      return s?.replicas === 1 && (await livePods('ordered'))[0]?.status?.phase === 'Running';
    });
    // The controller has seen db-0 running and not ready, and wrote its status: it made no more pods.
    expect((await livePods('ordered')).map((p) => p.metadata?.name)).toEqual(['ordered-0']);
    expect((await sets.get('parallel')).status).toMatchObject({ replicas: 3, availableReplicas: 0 });
  });

  it('rolls out a new template from the highest ordinal down to the partition', async () => {
    const sets = client.api(StatefulSet, 'default');
    await sets.create(
      statefulSet('roll', 3, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }),
    );
    await eventually(async () => (await sets.get('roll')).status?.readyReplicas === 3);
    const old = (await sets.get('roll')).status?.currentRevision;

    await k.ok(['set', 'image', 'sts/roll', 'c=db:2']);
    await k.ok(['rollout', 'status', 'sts/roll', '--timeout=30s']);
    const s = await eventually(async () => {
      const st = (await sets.get('roll')).status;
      return st?.updatedReplicas === 2 && st.readyReplicas === 3 ? st : undefined;
    });
    expect(s.currentRevision).toBe(old);
    expect(s.updateRevision).not.toBe(old);
    expect(s.currentReplicas).toBe(1);
    const images = async () => (await livePods('roll')).map((p) => p.spec?.containers[0]?.image);
    expect(await images()).toEqual(['db:1', 'db:2', 'db:2']);

    await k.ok([
      'patch',
      'sts',
      'roll',
      '-p',
      '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}',
    ]);
    await k.ok(['rollout', 'status', 'sts/roll', '--timeout=30s']);
    const done = await eventually(async () => {
      const st = (await sets.get('roll')).status;
      return st?.currentRevision === st?.updateRevision && st?.updatedReplicas === 3 ? st : undefined;
    });
    expect(done).toMatchObject({ replicas: 3, readyReplicas: 3, currentReplicas: 3 });
    expect(await images()).toEqual(['db:2', 'db:2', 'db:2']);
  });

  it('recreates pods below the partition from the current revision, adopts orphan revisions, trims its history', async () => {
    const sets = client.api(StatefulSet, 'default');
    const revisions = client.api(ControllerRevision, 'default');
    const history = async () =>
      sortRevisions((await revisions.list({ labelSelector: { app: 'part' } })).items);
    const set = await sets.create(
      statefulSet('part', 2, {
        revisionHistoryLimit: 1,
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } },
      }),
    );
    const ready = (updated: number) =>
      eventually(async () => {
        const s = (await sets.get('part')).status;
        return s?.readyReplicas === 2 &&
          s.updatedReplicas === updated &&
          s.observedGeneration === (await sets.get('part')).metadata?.generation
          ? s
          : undefined;
      });
    const first = await ready(2);
    const [rev1] = await history();
    expect(rev1).toMatchObject({
      revision: 1,
      data: templatePatch(set.spec?.template),
      metadata: {
        name: first.currentRevision,
        labels: {
          app: 'part',
          'controller.kubernetes.io/hash': first.currentRevision?.slice('part-'.length),
        },
        ownerReferences: [{ kind: 'StatefulSet', name: 'part', uid: set.metadata?.uid, controller: true }],
      },
    });

    // An orphan revision the selector matches becomes the set's on its next sync.
    await revisions.create({
      metadata: { name: 'part-orphan', labels: { app: 'part' } },
      data: templatePatch({ metadata: { labels: { app: 'part' } }, spec: { containers: [] } }),
      revision: 0,
    });
    const image = (i: string) => ({
      spec: { template: { spec: { containers: [{ name: 'c', image: i }] } } },
    });
    await sets.patch('part', image('db:2'));
    const second = await ready(1);
    expect((await revisions.get('part-orphan')).metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'StatefulSet', uid: set.metadata?.uid, controller: true }),
    ]);
    expect(second.currentRevision).toBe(first.currentRevision);
    expect(second.updateRevision).not.toBe(first.currentRevision);
    expect(second).toMatchObject({ currentReplicas: 1, updatedReplicas: 1 });

    // part-0 is below the partition: deleted, it comes back with the current revision's template.
    const old0 = (await livePods('part'))[0];
    await client.api(Pod, 'default').delete('part-0');
    const back = await eventually(async () => {
      const p = (await livePods('part')).find((x) => x.metadata?.name === 'part-0');
      return p && p.metadata?.uid !== old0?.metadata?.uid && p.status?.phase === 'Running' ? p : undefined;
    });
    expect(back.spec?.containers[0]?.image).toBe('db:1');
    expect(back.metadata?.labels?.['controller-revision-hash']).toBe(first.currentRevision);

    // Two more templates: besides the live revisions (current, update), one old one stays.
    await sets.patch('part', image('db:3'));
    await ready(1);
    await sets.patch('part', image('db:4'));
    const last = await ready(1);
    const kept = await eventually(async () => {
      const h = await history();
      return h.length === 3 ? h : undefined;
    });
    expect(kept.map((r) => r.metadata?.name)).toEqual([
      first.currentRevision,
      expect.stringMatching(/^part-/),
      last.updateRevision,
    ]);
    expect(kept.map((r) => r.revision)).toEqual([1, 3, 4]);
  });
});
