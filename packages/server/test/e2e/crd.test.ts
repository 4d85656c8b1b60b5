/**
 * A CustomResourceDefinition as an operator author drives it with kubectl: apply the CRD, wait
 * for Established, then use the new kind like a built-in one (discovery, short names,
 * categories, printer columns, schema defaulting and validation, merge patch, status and
 * scale subresources, explain), and delete the CRD with its resources.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { manifest, parseTable } from './support.js';

const NS = 'widgets';
const CRD = 'widgets.example.com';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'], categories: ['all'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
        },
        additionalPrinterColumns: [
          { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
          { name: 'Color', type: 'string', jsonPath: '.spec.color', priority: 1 },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                description: 'What the widget should be.',
                properties: {
                  size: {
                    type: 'integer',
                    minimum: 1,
                    maximum: 10,
                    default: 3,
                    description: 'How big the widget is.',
                  },
                  replicas: { type: 'integer' },
                  color: { type: 'string' },
                },
              },
              status: { type: 'object', properties: { replicas: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
};
const widget = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: NS },
  spec,
});

let env: KubectlEnv;
const getJson = async (target: string) => JSON.parse(await env.ok(['get', target, '-n', NS, '-o', 'json']));

beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(async () => {
  await env?.stop();
});

describe('a CustomResourceDefinition through kubectl', () => {
  it('is established and discoverable after apply', async () => {
    expect(
      await env.ok(['apply', '-f', '-'], {
        input: manifest({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }, crd),
      }),
    ).toBe(`namespace/${NS} created\ncustomresourcedefinition.apiextensions.k8s.io/${CRD} created\n`);
    expect(await env.ok(['wait', '--for=condition=Established', `crd/${CRD}`, '--timeout=30s'])).toBe(
      `customresourcedefinition.apiextensions.k8s.io/${CRD} condition met\n`,
    );
    const t = parseTable(await env.ok(['api-resources', '--api-group=example.com']));
    expect(t.rows).toEqual([
      { NAME: 'widgets', SHORTNAMES: 'wd', APIVERSION: 'example.com/v1', NAMESPACED: 'true', KIND: 'Widget' },
    ]);
    expect(await env.ok(['api-versions'])).toContain('example.com/v1\n');
  });

  it('defaults, validates and prints custom resources', async () => {
    expect(await env.ok(['apply', '-f', '-'], { input: manifest(widget('w1', { color: 'red' })) })).toBe(
      'widget.example.com/w1 created\n',
    );
    const w1 = await getJson('widget/w1');
    expect(w1.spec).toEqual({ color: 'red', size: 3 });
    expect(w1.metadata.generation).toBe(1);

    const table = parseTable(await env.ok(['get', 'wd', '-n', NS]));
    expect(table.columns).toEqual(['NAME', 'SIZE', 'AGE']);
    expect(table.rows).toEqual([expect.objectContaining({ NAME: 'w1', SIZE: '3' })]);
    const wide = parseTable(await env.ok(['get', 'wd', '-n', NS, '-o', 'wide']));
    expect(wide.columns).toEqual(['NAME', 'SIZE', 'COLOR', 'AGE']); // in the CRD's order
    expect(wide.rows[0]).toMatchObject({ NAME: 'w1', COLOR: 'red' });
    // The `all` category includes it.
    expect(await env.ok(['get', 'all', '-n', NS, '-o', 'name'])).toContain('widget.example.com/w1\n');

    const tooBig = await env.run(['apply', '-f', '-'], {
      input: manifest(widget('w1', { color: 'red', size: 11 })),
    });
    expect(tooBig).toMatchObject({
      code: 1,
      stderr:
        'The Widget "w1" is invalid: spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10\n',
    });
    const unknown = await env.run(['apply', '-f', '-'], { input: manifest(widget('w2', { extra: true })) });
    expect(unknown).toMatchObject({
      code: 1,
      stderr:
        'Error from server (BadRequest): error when creating "STDIN": Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.extra"\n',
    });
  });

  it('patches with merge patch only, and writes status and scale through their subresources', async () => {
    const strategic = await env.run(['patch', 'widget/w1', '-n', NS, '-p', '{"spec":{"size":2}}']);
    expect(strategic.code).toBe(1);
    expect(strategic.stderr).toContain(
      'application/strategic-merge-patch+json is not supported by example.com/v1, Kind=Widget',
    );

    expect(
      await env.ok(['patch', 'widget/w1', '-n', NS, '--type', 'merge', '-p', '{"spec":{"size":2}}']),
    ).toBe('widget.example.com/w1 patched\n');
    // The main resource ignores status; the status subresource writes it.
    expect(
      await env.ok(['patch', 'widget/w1', '-n', NS, '--type', 'merge', '-p', '{"status":{"replicas":7}}']),
    ).toBe('widget.example.com/w1 patched (no change)\n');
    await env.ok([
      'patch',
      'widget/w1',
      '-n',
      NS,
      '--subresource=status',
      '--type',
      'merge',
      '-p',
      '{"status":{"replicas":2}}',
    ]);
    expect(await env.ok(['scale', 'widget/w1', '-n', NS, '--replicas=4'])).toBe(
      'widget.example.com/w1 scaled\n',
    );

    const w1 = await getJson('widget/w1');
    expect(w1.spec).toEqual({ color: 'red', size: 2, replicas: 4 });
    expect(w1.status).toEqual({ replicas: 2 });
    expect(w1.metadata.generation).toBe(3); // status writes do not count
    const scale = JSON.parse(
      await env.ok(['get', '--raw', `/apis/example.com/v1/namespaces/${NS}/widgets/w1/scale`]),
    );
    expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 4 }, status: { replicas: 2 } });
  });

  it('explains the schema', async () => {
    const out = await env.ok(['explain', 'widget.spec.size']);
    expect(out).toMatch(/^GROUP:\s+example\.com\nKIND:\s+Widget\nVERSION:\s+v1\n/);
    expect(out).toContain('FIELD: size <integer>');
    expect(out).toContain('How big the widget is.');
  });

  it('deleting the CRD deletes its resources', async () => {
    const watch = env.spawn(['get', 'widgets', '-n', NS, '--watch-only', '--output-watch-events', '-v=6']);
    try {
      await eventually(() => watch.errorOutput().includes('watch=true'), 10_000, 'the watch to start');
      expect(await env.ok(['delete', 'crd', CRD])).toBe(
        `customresourcedefinition.apiextensions.k8s.io "${CRD}" deleted\n`,
      );
      await eventually(() => /^DELETED\s+w1\s/m.test(watch.output()), 10_000, 'the widget to be deleted');
    } finally {
      await watch.stop();
    }
    const r = await env.run(['get', `crd/${CRD}`]);
    expect(r).toMatchObject({
      code: 1,
      stderr: `Error from server (NotFound): customresourcedefinitions.apiextensions.k8s.io "${CRD}" not found\n`,
    });
    const gone = await env.run(['get', '--raw', `/apis/example.com/v1/namespaces/${NS}/widgets`]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('NotFound');
  });
});
