import { describe, expect, it } from 'vitest';
import {
  formatQuotaAmount,
  podQuotaConstraints,
  quotaMatches,
  quotaUsage,
  sumQuotaAmounts,
} from './quota.js';

const printed = (m: Map<string, { m: number; binary: boolean }>) =>
  Object.fromEntries([...m].map(([k, v]) => [k, formatQuotaAmount(v)]));

describe('quotaUsage', () => {
  it('counts a pod, its requests (defaulted from limits) and limits, the larger of containers and init containers', () => {
    const pod = {
      spec: {
        containers: [
          {
            name: 'a',
            resources: { requests: { cpu: '250m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          },
          { name: 'b', resources: { limits: { cpu: '500m', 'nvidia.com/gpu': '1' } } },
        ],
        initContainers: [{ name: 'i', resources: { requests: { cpu: '2' } } }],
        overhead: { cpu: '10m' },
      },
    };
    expect(printed(quotaUsage('', 'pods', pod))).toEqual({
      'count/pods': '1',
      pods: '1',
      cpu: '2010m',
      'requests.cpu': '2010m',
      'limits.cpu': '510m',
      memory: '128Mi',
      'requests.memory': '128Mi',
      'limits.memory': '256Mi',
      'requests.nvidia.com/gpu': '1',
    });
  });

  it('counts a terminal pod as an object only', () => {
    expect(printed(quotaUsage('', 'pods', { status: { phase: 'Succeeded' }, spec: {} }))).toEqual({
      'count/pods': '1',
    });
  });

  it('counts services by type and node ports, claims by storage and class, any kind by count', () => {
    expect(printed(quotaUsage('', 'services', { spec: { type: 'NodePort', ports: [{}, {}] } }))).toEqual({
      'count/services': '1',
      services: '1',
      'services.nodeports': '2',
    });
    const claim = { spec: { storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } } };
    expect(printed(quotaUsage('', 'persistentvolumeclaims', claim))).toEqual({
      'count/persistentvolumeclaims': '1',
      persistentvolumeclaims: '1',
      'requests.storage': '5Gi',
      'fast.storageclass.storage.k8s.io/requests.storage': '5Gi',
      'fast.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
    });
    expect(printed(quotaUsage('example.com', 'widgets', {}))).toEqual({ 'count/widgets.example.com': '1' });
  });

  it('sums amounts in the format they share', () => {
    expect(formatQuotaAmount(sumQuotaAmounts([{ m: 1024000 * 1024, binary: true }, undefined]))).toBe('1Mi');
    expect(
      formatQuotaAmount(
        sumQuotaAmounts([
          { m: 500, binary: false },
          { m: 1000, binary: true },
        ]),
      ),
    ).toBe('1500m');
    expect(formatQuotaAmount(sumQuotaAmounts([]))).toBe('0');
  });
});

describe('quotaMatches and podQuotaConstraints', () => {
  it('knows which quota resources concern a kind', () => {
    expect(quotaMatches('', 'pods', 'limits.cpu')).toBe(true);
    expect(quotaMatches('', 'pods', 'requests.storage')).toBe(false);
    expect(quotaMatches('', 'configmaps', 'configmaps')).toBe(true);
    expect(quotaMatches('', 'configmaps', 'pods')).toBe(false);
    expect(quotaMatches('apps', 'deployments', 'count/deployments.apps')).toBe(true);
    expect(
      quotaMatches('', 'persistentvolumeclaims', 'gold.storageclass.storage.k8s.io/requests.storage'),
    ).toBe(true);
  });

  it('names the containers that leave out what a quota tracks, per resource', () => {
    const pod = {
      spec: {
        containers: [
          { name: 'b', resources: { requests: { cpu: '1' } } },
          { name: 'a', resources: {} },
        ],
      },
    };
    expect(podQuotaConstraints(['pods'], pod)).toBeUndefined();
    expect(podQuotaConstraints(['requests.cpu', 'limits.memory'], pod)).toBe(
      'must specify limits.memory for: a,b; requests.cpu for: a',
    );
  });
});
