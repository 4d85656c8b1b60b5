import { describe, expect, it } from 'vitest';
import { defaultHpaV2, formatHpaMetrics, hpaV1ToV2, hpaV2ToV1 } from './horizontalpodautoscaler.js';

describe('HorizontalPodAutoscaler v1 ⇄ v2', () => {
  it('keeps metrics v1 cannot express in an annotation, so a round trip loses nothing', () => {
    const v2 = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'd' },
        maxReplicas: 3,
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } },
          },
          {
            type: 'Resource',
            resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } },
          },
        ],
      },
    };
    defaultHpaV2(v2);
    const v1 = hpaV2ToV1(v2);
    expect(v1.spec).toEqual({
      scaleTargetRef: { kind: 'Deployment', name: 'd' },
      minReplicas: 1,
      maxReplicas: 3,
      targetCPUUtilizationPercentage: 60,
    });
    expect(Object.keys((v1.metadata as { annotations: object }).annotations)).toEqual([
      'autoscaling.alpha.kubernetes.io/metrics',
    ]);
    const back = hpaV1ToV2(v1);
    // The conversion puts the annotation's metrics first, then targetCPUUtilizationPercentage's.
    expect(back.spec).toEqual({ ...v2.spec, metrics: [v2.spec.metrics[1], v2.spec.metrics[0]] });
    expect(back.metadata).toEqual({ name: 'h' });
  });

  it('writes the alpha annotations in autoscaling/v1’s own formats, as conversion.go does', () => {
    const v2 = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: {
        name: 'h',
        annotations: { 'autoscaling.alpha.kubernetes.io/metrics': 'stale', keep: 'me' },
      },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'd', apiVersion: 'apps/v1' },
        maxReplicas: 3,
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } },
          },
          {
            type: 'Resource',
            resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } },
          },
          {
            type: 'Pods',
            pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } },
          },
          {
            type: 'Object',
            object: {
              describedObject: { kind: 'Service', name: 's', apiVersion: 'v1' },
              target: { type: 'Value', value: '2k' },
              metric: { name: 'hits' },
            },
          },
          {
            type: 'External',
            external: {
              metric: { name: 'queue', selector: { matchLabels: { q: 'a' } } },
              target: { type: 'AverageValue', averageValue: '30' },
            },
          },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
      status: {
        currentReplicas: 2,
        desiredReplicas: 2,
        currentMetrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', current: { averageValue: '120m', averageUtilization: 40 } },
          },
          { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '7' } } },
        ],
        conditions: [
          {
            type: 'AbleToScale',
            status: 'True',
            lastTransitionTime: '2026-01-01T00:00:00Z',
            reason: 'ReadyForNewScale',
            message: 'ok',
          },
        ],
      },
    };
    defaultHpaV2(v2);
    const v1 = hpaV2ToV1(v2) as any;
    expect(v1.spec.targetCPUUtilizationPercentage).toBe(60);
    expect(v1.status.currentCPUUtilizationPercentage).toBe(40);
    const a = v1.metadata.annotations;
    expect(Object.keys(a).sort()).toEqual([
      'autoscaling.alpha.kubernetes.io/behavior',
      'autoscaling.alpha.kubernetes.io/conditions',
      'autoscaling.alpha.kubernetes.io/current-metrics',
      'autoscaling.alpha.kubernetes.io/metrics',
      'keep',
    ]);
    expect(a['autoscaling.alpha.kubernetes.io/metrics']).toBe(
      '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1Gi"}},' +
        '{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}},' +
        '{"type":"Object","object":{"target":{"kind":"Service","name":"s","apiVersion":"v1"},"metricName":"hits","targetValue":"2k"}},' +
        '{"type":"External","external":{"metricName":"queue","metricSelector":{"matchLabels":{"q":"a"}},"targetAverageValue":"30"}}]',
    );
    // Every current metric, the CPU one too (its raw value is kept).
    expect(a['autoscaling.alpha.kubernetes.io/current-metrics']).toBe(
      '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"120m"}},' +
        '{"type":"Pods","pods":{"metricName":"qps","currentAverageValue":"7"}}]',
    );
    expect(a['autoscaling.alpha.kubernetes.io/conditions']).toBe(
      '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"ReadyForNewScale","message":"ok"}]',
    );
    // The internal type, marshalled without JSON tags.
    expect(a['autoscaling.alpha.kubernetes.io/behavior']).toBe(
      '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}]},' +
        '"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}]}}',
    );
    // And back: the same v2 object, the annotation's metrics first.
    const back = hpaV1ToV2(v1) as any;
    expect(back.spec.metrics).toEqual([...v2.spec.metrics.slice(1), v2.spec.metrics[0]]);
    expect(back.spec.behavior).toEqual(v2.spec.behavior);
    expect(back.status.currentMetrics).toEqual(v2.status.currentMetrics);
    expect(back.status.conditions).toEqual(v2.status.conditions);
    expect(back.metadata.annotations).toEqual({ keep: 'me' });
  });

  it('reads a behavior annotation whatever the case of its field names, as Go’s decoder does', () => {
    const v1 = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: {
        name: 'h',
        annotations: {
          'autoscaling.alpha.kubernetes.io/behavior': '{"scaleDown":{"stabilizationWindowSeconds":30}}',
          'autoscaling.alpha.kubernetes.io/metrics': 'not json',
        },
      },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, maxReplicas: 3 },
    };
    const v2 = hpaV1ToV2(v1) as any;
    expect(v2.spec.behavior.scaleDown.stabilizationWindowSeconds).toBe(30);
    // No metric at all: CPU at 80 %, as autoscaling/v1 always meant.
    expect(v2.spec.metrics).toEqual([
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
      },
    ]);
    expect(v2.metadata.annotations).toBeUndefined();
  });

  it('prints targets as printers.go does', () => {
    const metrics = [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } },
      },
      {
        type: 'Pods',
        pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } },
      },
      { type: 'External', external: { metric: { name: 'q' }, target: { type: 'Value', value: '5' } } },
    ];
    expect(
      formatHpaMetrics(metrics, [
        { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 20 } } },
      ]),
    ).toBe('cpu: 20%/50%, <unknown>/10 + 1 more...');
    expect(formatHpaMetrics([], [])).toBe('<none>');
  });
});
