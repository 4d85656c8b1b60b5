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
    expect(back.spec).toEqual(v2.spec);
    expect(back.metadata).toEqual({ name: 'h' });
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
