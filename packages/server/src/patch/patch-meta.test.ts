import { describe, expect, it } from 'vitest';
import { patchMetaForDefinition, patchMetaFromSchema } from './patch-meta.js';

const path = (definition: string, ...fields: string[]) => {
  let meta = patchMetaForDefinition(definition);
  for (const field of fields) meta = field === '[]' ? meta?.items() : meta?.field(field);
  return meta;
};

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const POD_SPEC = ['spec', 'template', 'spec'];

describe('patchMetaForDefinition', () => {
  it('reads merge strategies and keys of built-in lists', () => {
    const cases: [string, string[], string | undefined, string | undefined][] = [
      [DEPLOYMENT, [...POD_SPEC, 'containers'], 'merge', 'name'],
      [DEPLOYMENT, [...POD_SPEC, 'initContainers'], 'merge', 'name'],
      [DEPLOYMENT, [...POD_SPEC, 'containers', '[]', 'env'], 'merge', 'name'],
      [DEPLOYMENT, [...POD_SPEC, 'containers', '[]', 'ports'], 'merge', 'containerPort'],
      [DEPLOYMENT, [...POD_SPEC, 'containers', '[]', 'volumeMounts'], 'merge', 'mountPath'],
      [DEPLOYMENT, [...POD_SPEC, 'volumes'], 'merge,retainKeys', 'name'],
      [DEPLOYMENT, [...POD_SPEC, 'tolerations'], undefined, undefined],
      [DEPLOYMENT, [...POD_SPEC, 'containers', '[]', 'args'], undefined, undefined],
      [DEPLOYMENT, ['metadata', 'ownerReferences'], 'merge', 'uid'],
      [DEPLOYMENT, ['metadata', 'finalizers'], 'merge', undefined],
      [DEPLOYMENT, ['status', 'conditions'], 'merge', 'type'],
      ['io.k8s.api.core.v1.Service', ['spec', 'ports'], 'merge', 'port'],
      ['io.k8s.api.core.v1.Pod', ['status', 'conditions'], 'merge', 'type'],
      ['io.k8s.api.core.v1.Pod', ['status', 'podIPs'], 'merge', 'ip'],
    ];
    for (const [definition, fields, strategy, mergeKey] of cases) {
      const meta = path(definition, ...fields);
      expect(meta, `${definition} ${fields.join('.')}`).toBeDefined();
      expect(
        { strategy: meta?.strategy, mergeKey: meta?.mergeKey },
        `${definition} ${fields.join('.')}`,
      ).toEqual({
        strategy,
        mergeKey,
      });
    }
  });

  it('knows struct tags the bundled spec lost or predates', () => {
    expect(path(DEPLOYMENT, 'spec', 'strategy')?.strategy).toBe('retainKeys');
    expect(path(DEPLOYMENT, 'spec', 'strategy', 'rollingUpdate')).toBeDefined();
    expect(path('io.k8s.api.core.v1.Pod', 'status', 'hostIPs')).toMatchObject({
      strategy: 'merge',
      mergeKey: 'ip',
    });
  });

  it('exposes list types and map keys for server-side apply', () => {
    const ports = path('io.k8s.api.core.v1.Service', 'spec', 'ports');
    expect(ports?.listType).toBe('map');
    expect(ports?.listMapKeys).toStrictEqual(['port', 'protocol']);
  });

  it('describes the values of maps through field()', () => {
    const labels = path(DEPLOYMENT, 'metadata', 'labels');
    expect(labels?.field('app')).toBeDefined();
    expect(labels?.field('app')?.strategy).toBeUndefined();
    expect(path(DEPLOYMENT, ...POD_SPEC, 'nodeSelector', 'disktype')).toBeDefined();
  });

  it('returns undefined for what the schema does not describe', () => {
    expect(patchMetaForDefinition('io.k8s.api.example.v1.Nope')).toBeUndefined();
    expect(path(DEPLOYMENT, 'spec', 'noSuchField')).toBeUndefined();
    expect(path(DEPLOYMENT, 'spec', 'replicas')?.items()).toBeUndefined();
  });

  it('hands out the same view for the same definition and field', () => {
    const a = patchMetaForDefinition(DEPLOYMENT);
    expect(patchMetaForDefinition(DEPLOYMENT)).toBe(a);
    expect(a?.field('spec')).toBe(a?.field('spec'));
    expect(a?.field('spec')?.field('template')?.field('spec')?.field('containers')?.items()).toBe(
      a?.field('spec')?.field('template')?.field('spec')?.field('containers')?.items(),
    );
  });
});

describe('patchMetaFromSchema', () => {
  const definitions: Record<string, unknown> = {
    Widget: {
      type: 'object',
      properties: {
        parts: {
          type: 'array',
          items: { allOf: [{ $ref: '#/components/schemas/Part' }] },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'name',
        },
        owner: { allOf: [{ $ref: '#/components/schemas/Part' }], 'x-kubernetes-patch-strategy': 'replace' },
        children: { type: 'array', items: { $ref: '#/components/schemas/Widget' } },
      },
    },
    Part: { type: 'object', properties: { name: { type: 'string' }, size: { type: 'integer' } } },
  };
  const resolve = (ref: string) => definitions[ref.replace('#/components/schemas/', '')];

  it('follows $ref, allOf wrappers and items, reading extensions on the wrapper', () => {
    const widget = patchMetaFromSchema({ $ref: '#/components/schemas/Widget' }, resolve);
    const parts = widget?.field('parts');
    expect(parts).toMatchObject({
      strategy: 'merge',
      mergeKey: 'name',
      listType: 'map',
      listMapKeys: ['name'],
    });
    expect(parts?.items()?.field('size')).toBeDefined();
    expect(widget?.field('owner')?.strategy).toBe('replace');
    expect(widget?.field('owner')?.field('name')).toBeDefined();
  });

  it('walks recursive schemas lazily', () => {
    const widget = patchMetaFromSchema({ $ref: '#/components/schemas/Widget' }, resolve);
    const deep = widget?.field('children')?.items()?.field('children')?.items()?.field('parts');
    expect(deep?.mergeKey).toBe('name');
  });

  it('works on an inline CustomResourceDefinition schema without a resolver', () => {
    const meta = patchMetaFromSchema({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['port', 'protocol'],
              items: { type: 'object', properties: { port: { type: 'integer' } } },
            },
          },
        },
      },
    });
    expect(meta?.field('spec')?.field('ports')?.listMapKeys).toStrictEqual(['port', 'protocol']);
    expect(meta?.field('spec')?.field('ports')?.strategy).toBeUndefined();
  });

  it('returns undefined for a value that is not a schema', () => {
    expect(patchMetaFromSchema(undefined)).toBeUndefined();
    expect(patchMetaFromSchema('object')).toBeUndefined();
  });

  it('resolves a dangling $ref to an empty schema', () => {
    const meta = patchMetaFromSchema({ $ref: '#/components/schemas/Missing' }, resolve);
    expect(meta?.field('anything')).toBeUndefined();
  });
});
