import { Client, Deployment, HorizontalPodAutoscaler } from 'kubeloop/client';
import { FakeClock } from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;
// The autoscaler's clock: tests move it across sync periods and stabilization windows.
const clock = new FakeClock(Date.now());

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 2 }, clock });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

const deployment = (name: string, replicas: number, cpu: string): Deployment => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: {
        labels: { app: name },
        annotations: { 'kubeloop.dev/simulate-cpu': cpu, 'kubeloop.dev/simulate-memory': '64Mi' },
      },
      spec: {
        containers: [
          { name: 'c', image: 'nginx', resources: { requests: { cpu: '100m', memory: '128Mi' } } },
        ],
      },
    },
  },
});
const hpaEvents = (name: string) =>
  k.ok([
    'get',
    'events',
    '--field-selector',
    `involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=${name}`,
    '-o',
    'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}',
  ]);

describe('metrics API', () => {
  it('serves metrics.k8s.io for kubectl top, with its APIService', async () => {
    await client.api(Deployment, 'default').create(deployment('top', 2, '150m'));
    await eventually(
      async () => (await client.api(Deployment, 'default').get('top')).status?.readyReplicas === 2,
    );
    const pods = await k.ok(['top', 'pods', '-l', 'app=top']);
    expect(pods).toMatch(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)\s*\n/);
    expect(pods.trim().split('\n').slice(1)).toHaveLength(2);
    for (const line of pods.trim().split('\n').slice(1))
      expect(line.trimEnd()).toMatch(/^top-\S+\s+150m\s+64Mi$/);
    const nodes = await k.ok(['top', 'nodes']);
    expect(nodes).toMatch(/^NAME\s+CPU\(cores\)\s+CPU(\(%\))?\s+MEMORY\(bytes\)\s+MEMORY(\(%\))?\s*\n/);
    expect(nodes.trim().split('\n')).toHaveLength(3);
    const apiService = JSON.parse(await k.ok(['get', 'apiservice', 'v1beta1.metrics.k8s.io', '-o', 'json']));
    expect(apiService.spec).toMatchObject({
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      service: { name: 'metrics-server', namespace: 'kube-system' },
    });
    await eventually(async () => {
      const s = JSON.parse(await k.ok(['get', 'apiservice', 'v1beta1.metrics.k8s.io', '-o', 'json'])).status;
      return s?.conditions?.[0]?.type === 'Available' && s.conditions[0].status === 'True';
    });
    const resources = await k.ok(['api-resources', '--api-group=metrics.k8s.io']);
    expect(resources).toMatch(/\nnodes\s+metrics.k8s.io\/v1beta1\s+false\s+NodeMetrics\n/);
    expect(resources).toMatch(/\npods\s+metrics.k8s.io\/v1beta1\s+true\s+PodMetrics\n/);
  });
});

describe('horizontal pod autoscaler', () => {
  it('scales up on utilization above target (rate-limited, capped at max), then down after the stabilization window', async () => {
    const deps = client.api(Deployment, 'default');
    await deps.create(deployment('web', 2, '200m'));
    await eventually(async () => (await deps.get('web')).status?.readyReplicas === 2);
    await k.ok(['autoscale', 'deployment', 'web', '--cpu-percent=50', '--min=1', '--max=5']);
    const hpas = client.api(HorizontalPodAutoscaler, 'default');
    // 200% of requests against 50%: four times the pods, but the default policy allows 2 → 6 at most, and max is 5.
    const status = await eventually(async () => {
      const s = (await hpas.get('web')).status;
      return s?.desiredReplicas === 5 ? s : undefined;
    });
    expect(status.currentMetrics).toEqual([
      {
        type: 'Resource',
        resource: { name: 'cpu', current: { averageValue: '200m', averageUtilization: 200 } },
      },
    ]);
    // The sync that rescaled says SucceededRescale; any later one (its own status write may requeue
    // it before this read) finds nothing to change and says ReadyForNewScale, as kube's does.
    expect(status.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual(
      expect.arrayContaining([
        ['AbleToScale', 'True', expect.stringMatching(/^(SucceededRescale|ReadyForNewScale)$/)],
        ['ScalingActive', 'True', 'ValidMetricFound'],
        ['ScalingLimited', 'True', 'TooManyReplicas'],
      ]),
    );
    expect((await deps.get('web')).spec?.replicas).toBe(5);
    expect(await hpaEvents('web')).toContain(
      'SuccessfulRescale: New size: 5; reason: cpu resource utilization (percentage of request) above target',
    );
    await eventually(async () => (await deps.get('web')).status?.readyReplicas === 5);
    expect(await k.ok(['get', 'hpa', 'web'])).toMatch(
      /\nweb\s+Deployment\/web\s+cpu: \d+%\/50%\s+1\s+5\s+\d\s+\S+\n/,
    );

    // Usage drops to 10%: the recommendation is 1, held at 5 by the 5-minute scale-down window.
    await k.ok(['annotate', 'pods', '-l', 'app=web', 'kubeloop.dev/simulate-cpu=10m', '--overwrite']);
    clock.advance(15_000);
    const held = await eventually(async () => {
      const s = (await hpas.get('web')).status;
      return s?.conditions?.find((c) => c.type === 'AbleToScale' && c.reason === 'ScaleDownStabilized')
        ? s
        : undefined;
    });
    expect(held.desiredReplicas).toBe(5);
    expect(held.currentMetrics?.[0]?.resource?.current?.averageUtilization).toBe(10);
    clock.advance(301_000);
    await eventually(async () => (await deps.get('web')).spec?.replicas === 1);
    expect(await hpaEvents('web')).toContain(
      'SuccessfulRescale: New size: 1; reason: All metrics below target',
    );
  });

  it('stays put within the tolerance, and reports pods without requests', async () => {
    const deps = client.api(Deployment, 'default');
    // 52% against 50%: within 10%, no change.
    await deps.create(deployment('calm', 3, '52m'));
    await eventually(async () => (await deps.get('calm')).status?.readyReplicas === 3);
    await client.api(HorizontalPodAutoscaler, 'default').create({
      metadata: { name: 'calm' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'calm' },
        minReplicas: 1,
        maxReplicas: 10,
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } },
          },
        ],
      },
    });
    const s = await eventually(async () => {
      const st = (await client.api(HorizontalPodAutoscaler, 'default').get('calm')).status;
      return st?.currentMetrics ? st : undefined;
    });
    expect(s).toMatchObject({ currentReplicas: 3, desiredReplicas: 3 });
    expect(s.conditions?.find((c) => c.type === 'ScalingLimited')).toMatchObject({
      status: 'False',
      reason: 'DesiredWithinRange',
    });

    const bare = deployment('bare', 1, '50m');
    delete bare.spec?.template.spec?.containers[0]?.resources;
    await deps.create(bare);
    await eventually(async () => (await deps.get('bare')).status?.readyReplicas === 1);
    await k.ok(['autoscale', 'deployment', 'bare', '--cpu-percent=50', '--max=3']);
    const failed = await eventually(async () =>
      (await client.api(HorizontalPodAutoscaler, 'default').get('bare')).status?.conditions?.find(
        (c) => c.type === 'ScalingActive' && c.status === 'False',
      ),
    );
    expect(failed.reason).toBe('FailedGetResourceMetric');
    expect(failed.message).toContain('missing request for cpu in container c of Pod bare-');
    // The autoscaling/v1 view of the same object.
    const v1 = JSON.parse(
      await k.ok(['get', '--raw', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/calm']),
    );
    expect(v1).toMatchObject({
      apiVersion: 'autoscaling/v1',
      spec: { targetCPUUtilizationPercentage: 50 },
      status: { currentReplicas: 3, currentCPUUtilizationPercentage: 52 },
    });
  });
});
