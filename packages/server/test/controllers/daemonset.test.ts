import { Client, DaemonSet, type Node, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeShouldRunDaemonPod } from '../../src/controllers/daemonset.js';
import { ControllerRevision, sortRevisions, templatePatch } from '../../src/controllers/history.js';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 3 } });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

const daemonSet = (name: string, spec: Record<string, unknown> = {}): DaemonSet => ({
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'c', image: 'agent:1' }], ...spec },
    },
  },
});

const livePods = async (app: string) =>
  (await client.api(Pod, 'default').list({ labelSelector: { app } })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
const runningNodes = async (app: string) =>
  (await livePods(app))
    .filter((p) => p.status?.phase === 'Running')
    .map((p) => p.spec?.nodeName)
    .sort();

describe('DaemonSet controller', () => {
  it('runs a pod on the nodes that kubectl labels, and removes it when the label goes', async () => {
    const sets = client.api(DaemonSet, 'default');
    const ds = await sets.create(daemonSet('agent', { nodeSelector: { role: 'daemon' } }));
    const empty = await eventually(async () =>
      (await sets.get('agent')).status?.observedGeneration === 1
        ? (await sets.get('agent')).status
        : undefined,
    );
    expect(empty).toMatchObject({ desiredNumberScheduled: 0, currentNumberScheduled: 0, numberReady: 0 });
    expect(await livePods('agent')).toHaveLength(0);

    await k.ok(['label', 'node', 'kubeloop-node-1', 'kubeloop-node-2', 'role=daemon']);
    await eventually(async () => (await runningNodes('agent')).join() === 'kubeloop-node-1,kubeloop-node-2');
    const status = await eventually(async () => {
      const s = (await sets.get('agent')).status;
      return s?.numberReady === 2 ? s : undefined;
    });
    expect(status).toMatchObject({
      desiredNumberScheduled: 2,
      currentNumberScheduled: 2,
      numberMisscheduled: 0,
      numberAvailable: 2,
      updatedNumberScheduled: 2,
      observedGeneration: 1,
    });

    const pods = await livePods('agent');
    for (const p of pods) {
      expect(p.metadata?.name).toMatch(/^agent-[a-z0-9]{5}$/);
      expect(p.metadata?.ownerReferences).toEqual([
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          name: 'agent',
          uid: ds.metadata?.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(p.metadata?.labels).toMatchObject({ 'pod-template-generation': '1' });
      expect(p.metadata?.labels?.['controller-revision-hash']).toMatch(/^[a-z0-9]+$/);
      // Pinned by affinity, bound by the scheduler.
      expect(p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual({
        nodeSelectorTerms: [
          { matchFields: [{ key: 'metadata.name', operator: 'In', values: [p.spec?.nodeName] }] },
        ],
      });
      expect(p.spec?.tolerations).toEqual(
        expect.arrayContaining([
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
          { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
          { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
        ]),
      );
    }

    await k.ok(['label', 'node', 'kubeloop-node-1', 'role-']);
    await eventually(
      async () => (await livePods('agent')).map((p) => p.spec?.nodeName).join() === 'kubeloop-node-2',
    );
    await eventually(async () => {
      const s = (await sets.get('agent')).status;
      return s?.desiredNumberScheduled === 1 && s.currentNumberScheduled === 1 && s.numberReady === 1;
    });
    await sets.delete('agent');
  });

  it('replaces a deleted daemon pod and leaves nodes whose NoExecute taint it does not tolerate', async () => {
    const sets = client.api(DaemonSet, 'default');
    await sets.create(daemonSet('everywhere'));
    await sets.create(
      daemonSet('tolerant', { tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }] }),
    );
    const all = 'kubeloop-node-1,kubeloop-node-2,kubeloop-node-3';
    await eventually(async () => (await runningNodes('everywhere')).join() === all);
    await eventually(async () => (await runningNodes('tolerant')).join() === all);

    const victim = (await livePods('everywhere'))[0];
    await client.api(Pod, 'default').delete(victim?.metadata?.name ?? '');
    await eventually(async () => {
      const pods = await livePods('everywhere');
      return (
        (await runningNodes('everywhere')).join() === all &&
        !pods.some((p) => p.metadata?.uid === victim?.metadata?.uid)
      );
    });

    await k.ok(['taint', 'node', 'kubeloop-node-3', 'dedicated=infra:NoExecute']);
    await eventually(
      async () =>
        (await livePods('everywhere'))
          .map((p) => p.spec?.nodeName)
          .sort()
          .join() === 'kubeloop-node-1,kubeloop-node-2',
    );
    await eventually(async () => (await sets.get('everywhere')).status?.desiredNumberScheduled === 2);
    expect(await runningNodes('tolerant')).toEqual(all.split(','));
    expect((await sets.get('tolerant')).status?.desiredNumberScheduled).toBe(3);
    await k.ok(['taint', 'node', 'kubeloop-node-3', 'dedicated-']);
    await eventually(async () => (await runningNodes('everywhere')).join() === all);
    await sets.delete('everywhere');
    await sets.delete('tolerant');
  });

  it('rolls out a new template node by node (kubectl set image, rollout status)', async () => {
    const sets = client.api(DaemonSet, 'default');
    await sets.create(daemonSet('roll'));
    await eventually(async () => (await sets.get('roll')).status?.numberReady === 3);
    const before = new Set((await livePods('roll')).map((p) => p.metadata?.uid));

    await k.ok(['set', 'image', 'ds/roll', 'c=agent:2']);
    const out = await k.ok(['rollout', 'status', 'ds/roll', '--timeout=30s']);
    expect(out).toContain('daemon set "roll" successfully rolled out');
    const status = await eventually(async () => {
      const s = (await sets.get('roll')).status;
      return s?.updatedNumberScheduled === 3 && s.numberReady === 3 ? s : undefined;
    });
    expect(status).toMatchObject({ observedGeneration: 2, desiredNumberScheduled: 3, numberAvailable: 3 });
    const pods = await eventually(async () => {
      const p = await livePods('roll');
      return p.length === 3 ? p : undefined;
    });
    for (const p of pods) {
      expect(before.has(p.metadata?.uid)).toBe(false);
      expect(p.spec?.containers[0]?.image).toBe('agent:2');
      expect(p.metadata?.labels?.['pod-template-generation']).toBe('2');
    }
  });

  it('keeps a revision per template, the newest revisionHistoryLimit old ones, and labels pods with its hash', async () => {
    const sets = client.api(DaemonSet, 'default');
    const revisions = client.api(ControllerRevision, 'default');
    const history = async () =>
      sortRevisions((await revisions.list({ labelSelector: { app: 'hist' } })).items);
    const rolledOut = (generation: number) =>
      eventually(async () => {
        const s = (await sets.get('hist')).status;
        return (
          s?.observedGeneration === generation && s.updatedNumberScheduled === 3 && s.numberAvailable === 3
        );
      });
    const ds = await sets.create({
      ...daemonSet('hist'),
      spec: { ...daemonSet('hist').spec, revisionHistoryLimit: 1 },
    } as DaemonSet);
    await rolledOut(1);
    const [first] = await history();
    expect(first).toMatchObject({
      revision: 1,
      data: templatePatch(ds.spec?.template),
      metadata: {
        labels: { app: 'hist', 'controller-revision-hash': expect.any(String) },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'hist', uid: ds.metadata?.uid, controller: true },
        ],
      },
    });
    const hash1 = first?.metadata?.labels?.['controller-revision-hash'];
    expect(first?.metadata?.name).toBe(`hist-${hash1}`);
    expect((await livePods('hist')).map((p) => p.metadata?.labels?.['controller-revision-hash'])).toEqual([
      hash1,
      hash1,
      hash1,
    ]);

    for (const [i, image] of ['agent:2', 'agent:3'].entries()) {
      await sets.patch('hist', { spec: { template: { spec: { containers: [{ name: 'c', image }] } } } });
      await rolledOut(i + 2);
    }
    // Revision 1 went: one old revision is kept besides the current one.
    const kept = await eventually(async () => {
      const h = await history();
      return h.length === 2 ? h : undefined;
    });
    expect(kept.map((r) => r.revision)).toEqual([2, 3]);
    const hash3 = kept[1]?.metadata?.labels?.['controller-revision-hash'];
    expect(
      (await livePods('hist')).map((p) => [
        p.spec?.containers[0]?.image,
        p.metadata?.labels?.['controller-revision-hash'],
      ]),
    ).toEqual([
      ['agent:3', hash3],
      ['agent:3', hash3],
      ['agent:3', hash3],
    ]);
  });
});

describe('DaemonSet template generation', () => {
  const TG = 'deprecated.daemonset.template.generation';
  it('counts template changes in its annotation, and labels pods with it, as kube-apiserver and the controller do', async () => {
    const sets = client.api(DaemonSet, 'default');
    const created = await sets.create(daemonSet('tgen'));
    expect(created.metadata?.annotations?.[TG]).toBe('1');
    expect(created.metadata?.generation).toBe(1);
    // A spec change outside the template: the generation moves, the template generation does not.
    const strategy = await sets.patch('tgen', { spec: { minReadySeconds: 5 } });
    expect([strategy.metadata?.generation, strategy.metadata?.annotations?.[TG]]).toEqual([2, '1']);
    // A template change moves both.
    const image = await sets.patch('tgen', {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'agent:2' }] } } },
    });
    expect([image.metadata?.generation, image.metadata?.annotations?.[TG]]).toEqual([3, '2']);
    // Status writes leave it alone; so does a metadata-only change.
    const labelled = await sets.patch('tgen', { metadata: { labels: { team: 'x' } } });
    expect(labelled.metadata?.annotations?.[TG]).toBe('2');
    await eventually(async () => {
      const pods = await livePods('tgen');
      return pods.length === 3 && pods.every((p) => p.metadata?.labels?.['pod-template-generation'] === '2')
        ? pods
        : undefined;
    });
    expect((await sets.get('tgen')).metadata?.annotations?.[TG]).toBe('2');
    // What conversion cannot read is refused.
    const bad = await sets
      .patch('tgen', { metadata: { annotations: { [TG]: 'x' } } })
      .catch((e: unknown) => e as { code?: number; message?: string });
    expect(bad).toMatchObject({ code: 400 });
    expect((bad as { message?: string }).message).toContain('strconv.ParseInt: parsing "x": invalid syntax');
    // kubectl shows it as a real cluster does.
    const shown = await k.ok(['get', 'daemonset', 'tgen', '-o', 'jsonpath={.metadata.annotations}']);
    expect(JSON.parse(shown)).toEqual({ [TG]: '2' });
    await sets.delete('tgen');
  });
});

describe('nodeShouldRunDaemonPod', () => {
  const node = (labels: Record<string, string>, taints: Node['spec'] = {}): Node => ({
    metadata: { name: 'n1', labels },
    spec: taints,
  });
  const ds = (spec: Record<string, unknown>) => daemonSet('d', spec);

  it('follows the node selector and required node affinity', () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }],
        },
      },
    };
    expect(nodeShouldRunDaemonPod(ds({ nodeSelector: { role: 'x' } }), node({ role: 'x' })).shouldRun).toBe(
      true,
    );
    expect(nodeShouldRunDaemonPod(ds({ nodeSelector: { role: 'x' } }), node({ role: 'y' }))).toEqual({
      shouldRun: false,
      shouldContinueRunning: false,
    });
    expect(nodeShouldRunDaemonPod(ds({ affinity }), node({ zone: 'b' })).shouldRun).toBe(true);
    expect(nodeShouldRunDaemonPod(ds({ affinity }), node({ zone: 'c' })).shouldRun).toBe(false);
  });

  it('keeps a pod on a NoSchedule-tainted node without placing new ones, and tolerates cordoned and not-ready nodes', () => {
    const noSchedule = node({}, { taints: [{ key: 'gpu', effect: 'NoSchedule' }] });
    expect(nodeShouldRunDaemonPod(ds({}), noSchedule)).toEqual({
      shouldRun: false,
      shouldContinueRunning: true,
    });
    const tolerated = ds({ tolerations: [{ key: 'gpu', operator: 'Exists' }] });
    expect(nodeShouldRunDaemonPod(tolerated, noSchedule)).toEqual({
      shouldRun: true,
      shouldContinueRunning: true,
    });
    const cordoned = node(
      {},
      {
        unschedulable: true,
        taints: [
          { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
          { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' },
        ],
      },
    );
    expect(nodeShouldRunDaemonPod(ds({}), cordoned)).toEqual({
      shouldRun: true,
      shouldContinueRunning: true,
    });
    const network = node(
      {},
      { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] },
    );
    expect(nodeShouldRunDaemonPod(ds({}), network).shouldRun).toBe(false);
    expect(nodeShouldRunDaemonPod(ds({ hostNetwork: true }), network).shouldRun).toBe(true);
  });
});
