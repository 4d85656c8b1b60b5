import { canonicalQuantity } from 'kubeloop/api';
import { describe, expect, it } from 'vitest';
import { pruneUnknownFields } from './field-validation.js';
import { SchemaCompiler } from './schema-view.js';

describe('canonicalQuantity (ParseQuantity + String of apimachinery)', () => {
  it.each([
    // Kept as sent: already canonical.
    ['500m', '500m'],
    ['1Gi', '1Gi'],
    ['100Mi', '100Mi'],
    ['10', '10'],
    ['129e6', '129e6'],
    ['128974848', '128974848'],
    ['2e-3', '2e-3'],
    ['-500m', '-500m'],
    ['0', '0'],
    // Re-rendered.
    ['0.5', '500m'],
    ['0.1', '100m'],
    ['1.5', '1500m'],
    ['1000m', '1'],
    ['1000', '1k'],
    ['10000', '10k'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Ki', '512'],
    ['1.5e3', '1500'],
    ['-0.5', '-500m'],
    ['0m', '0'],
    ['00', '0'],
    [' 250m ', '250m'],
    // Rounded up to a whole nano.
    ['0.0000000001', '1n'],
    ['1.0000000001', '1000000001n'],
  ])('%j → %j', (input, want) => {
    expect(canonicalQuantity(input)).toBe(want);
  });

  it('reads JSON numbers as their text', () => {
    expect(canonicalQuantity(0.5)).toBe('500m');
    expect(canonicalQuantity(2)).toBe('2');
    expect(canonicalQuantity(1000)).toBe('1k');
  });

  it('leaves what does not parse to the type check', () => {
    expect(canonicalQuantity('abc')).toBeUndefined();
    expect(canonicalQuantity('1Xi')).toBeUndefined();
  });
});

describe('the Go struct round trip of built-in objects (pruneUnknownFields)', () => {
  const compiler = new SchemaCompiler();

  it('re-renders quantities and drops empty omitempty lists and maps', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', labels: {}, annotations: { a: 'b' }, finalizers: [] },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'x',
            args: [],
            resources: { limits: { cpu: '0.5', memory: '1024Mi' }, requests: { cpu: 0.25 } },
          },
        ],
        volumes: [{ name: 'v', emptyDir: { sizeLimit: '1000Mi' } }],
        tolerations: [],
      },
    };
    expect(pruneUnknownFields(pod, compiler.definition('io.k8s.api.core.v1.Pod')!)).toEqual([]);
    expect(pod).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', annotations: { a: 'b' } },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'x',
            resources: { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '250m' } },
          },
        ],
        volumes: [{ name: 'v', emptyDir: { sizeLimit: '1000Mi' } }],
      },
    });
  });

  it('keeps empty required lists, and the optional ones Go declares without omitempty', () => {
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r' },
      rules: [],
    };
    pruneUnknownFields(role, compiler.definition('io.k8s.api.rbac.v1.Role')!);
    expect(role.rules).toEqual([]);
    const rule = { apiGroups: [], verbs: [] };
    pruneUnknownFields(rule, compiler.definition('io.k8s.api.rbac.v1.PolicyRule')!);
    expect(rule).toEqual({ verbs: [] });
  });
});
