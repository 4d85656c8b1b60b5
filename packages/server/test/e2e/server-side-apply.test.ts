/**
 * Server-side apply as kubectl drives it: `apply --server-side` creating, changing and removing
 * fields; two field managers sharing a Deployment and a custom resource; a conflict, its message
 * and `--force-conflicts`; and kubectl's moves between client-side and server-side apply.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { deployment, manifest } from './support.js';

const NS = 'ssa';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv();
  await env.ok(['create', 'namespace', NS]);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

const getJson = async (args: string[]) =>
  JSON.parse(await env.ok(['get', ...args, '-o', 'json', '--show-managed-fields']));

/** The managed fields entries of an object by manager name. */
const entriesOf = (obj: any): Record<string, any> =>
  Object.fromEntries(obj.metadata.managedFields.map((e: any) => [e.manager, e]));

const apply = (obj: unknown, ...flags: string[]) =>
  env.run(['apply', '--server-side', ...flags, '-f', '-'], { input: manifest(obj) });

describe('kubectl apply --server-side', () => {
  const config = (data: Record<string, string>, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: NS, labels },
    data,
  });

  it('creates an object owned by the "kubectl" applier', async () => {
    const r = await apply(config({ color: 'blue', size: 'M' }, { team: 'a' }));
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('configmap/settings serverside-applied\n');
    const cm = await getJson(['configmap', 'settings', '-n', NS]);
    expect(cm.data).toEqual({ color: 'blue', size: 'M' });
    expect(cm.metadata.managedFields).toEqual([
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:data': { 'f:color': {}, 'f:size': {} },
          'f:metadata': { 'f:labels': { 'f:team': {} } },
        },
      },
    ]);
  });

  it('changes a field and removes the fields it no longer applies', async () => {
    const r = await apply(config({ color: 'green' }));
    expect(r.code).toBe(0);
    const cm = await getJson(['configmap', 'settings', '-n', NS]);
    expect(cm.data).toEqual({ color: 'green' });
    expect(cm.metadata.labels).toBeUndefined();
    expect(entriesOf(cm).kubectl.fieldsV1).toEqual({ 'f:data': { 'f:color': {} } });
  });

  it('changes nothing with --dry-run=server', async () => {
    const before = await getJson(['configmap', 'settings', '-n', NS]);
    const r = await apply(config({ color: 'red' }), '--dry-run=server');
    expect(r.stdout).toBe('configmap/settings serverside-applied (server dry run)\n');
    const after = await getJson(['configmap', 'settings', '-n', NS]);
    expect(after.data.color).toBe('green');
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });
});

describe('two managers of one Deployment', () => {
  const base = deployment('web', NS, {
    replicas: 2,
    containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }],
  });

  it('co-own fields whose values agree and each own their own containers', async () => {
    expect((await apply(base, '--field-manager=team-a')).code).toBe(0);
    // team-b applies the same replicas and image, plus a sidecar of its own.
    const teamB = deployment('web', NS, {
      replicas: 2,
      containers: [
        { name: 'web', image: 'nginx:1.27' },
        { name: 'metrics', image: 'prom/exporter:1' },
      ],
    });
    const r = await apply(teamB, '--field-manager=team-b');
    expect(r.stderr).toBe('');
    const d = await getJson(['deployment', 'web', '-n', NS]);
    expect(d.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['web', 'metrics']);
    const m = entriesOf(d);
    const containersOf = (manager: string) =>
      m[manager].fieldsV1['f:spec']['f:template']['f:spec']['f:containers'];
    expect(m['team-a'].fieldsV1['f:spec']['f:replicas']).toEqual({});
    expect(m['team-b'].fieldsV1['f:spec']['f:replicas']).toEqual({});
    expect(containersOf('team-a')['k:{"name":"web"}']['f:ports']).toEqual({
      'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
    });
    expect(Object.keys(containersOf('team-b')).sort()).toEqual(['k:{"name":"metrics"}', 'k:{"name":"web"}']);
    expect(containersOf('team-a')['k:{"name":"metrics"}']).toBeUndefined();
  });

  it('reports a conflict with each field and its owner', async () => {
    const teamB = deployment('web', NS, { replicas: 3, containers: [{ name: 'web', image: 'nginx:1.28' }] });
    const r = await apply(teamB, '--field-manager=team-b');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'error: Apply failed with 2 conflicts: conflicts with "team-a":\n' +
        '- .spec.replicas\n' +
        '- .spec.template.spec.containers[name="web"].image\n',
    );
    expect(r.stderr).toContain('--force-conflicts');
    const d = await getJson(['deployment', 'web', '-n', NS]);
    expect(d.spec.replicas).toBe(2);
  });

  it('takes the fields over with --force-conflicts', async () => {
    const teamB = deployment('web', NS, {
      replicas: 3,
      containers: [
        { name: 'web', image: 'nginx:1.28' },
        { name: 'metrics', image: 'prom/exporter:1' },
      ],
    });
    const r = await apply(teamB, '--field-manager=team-b', '--force-conflicts');
    expect(r.code).toBe(0);
    const d = await getJson(['deployment', 'web', '-n', NS]);
    expect(d.spec.replicas).toBe(3);
    expect(d.spec.template.spec.containers[0].image).toBe('nginx:1.28');
    const a = entriesOf(d)['team-a'].fieldsV1;
    expect(a['f:spec']['f:replicas']).toBeUndefined();
    expect(
      a['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"web"}']['f:image'],
    ).toBeUndefined();
  });

  it('keeps a container another manager still applies, and removes it when nobody does', async () => {
    // team-b stops applying the sidecar: it is gone, since only team-b applied it.
    const r = await apply(
      deployment('web', NS, { replicas: 3, containers: [{ name: 'web', image: 'nginx:1.28' }] }),
      '--field-manager=team-b',
    );
    expect(r.code).toBe(0);
    const d = await getJson(['deployment', 'web', '-n', NS]);
    expect(d.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['web']);
  });

  it('shows the scale subresource as an owner of the replicas', async () => {
    await env.ok(['scale', 'deployment/web', '-n', NS, '--replicas=5']);
    const r = await apply(
      deployment('web', NS, { replicas: 3, containers: [{ name: 'web', image: 'nginx:1.28' }] }),
      '--field-manager=team-b',
    );
    expect(r.stderr).toContain(
      'error: Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas',
    );
    const d = await getJson(['deployment', 'web', '-n', NS]);
    expect(entriesOf(d).kubectl).toMatchObject({ operation: 'Update', subresource: 'scale' });
  });
});

describe('two managers of one custom resource', () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'routes.net.example.com' },
    spec: {
      group: 'net.example.com',
      scope: 'Namespaced',
      names: { plural: 'routes', singular: 'route', kind: 'Route' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    host: { type: 'string' },
                    backends: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['name'],
                      items: {
                        type: 'object',
                        required: ['name'],
                        properties: { name: { type: 'string' }, weight: { type: 'integer' } },
                      },
                    },
                    tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                    options: {
                      type: 'object',
                      'x-kubernetes-map-type': 'atomic',
                      additionalProperties: { type: 'string' },
                    },
                  },
                },
                status: { type: 'object', properties: { ready: { type: 'boolean' } } },
              },
            },
          },
        },
      ],
    },
  };
  const route = (spec: Record<string, unknown>) => ({
    apiVersion: 'net.example.com/v1',
    kind: 'Route',
    metadata: { name: 'home', namespace: NS },
    spec,
  });

  beforeAll(async () => {
    await env.ok(['apply', '-f', '-'], { input: manifest(crd) });
    await env.ok(['wait', '--for=condition=Established', 'crd/routes.net.example.com', '--timeout=30s']);
  }, 60_000);

  it('merges list-map items by key and set items by value from both managers', async () => {
    expect(
      (
        await apply(
          route({
            host: 'example.com',
            backends: [{ name: 'blue', weight: 90 }],
            tags: ['public'],
            options: { a: '1' },
          }),
          '--field-manager=blue-team',
        )
      ).stderr,
    ).toBe('');
    expect(
      (
        await apply(
          route({ backends: [{ name: 'green', weight: 10 }], tags: ['canary', 'public'] }),
          '--field-manager=green-team',
        )
      ).stderr,
    ).toBe('');
    const r = await getJson(['route', 'home', '-n', NS]);
    expect(r.spec).toEqual({
      host: 'example.com',
      backends: [
        { name: 'blue', weight: 90 },
        { name: 'green', weight: 10 },
      ],
      tags: ['canary', 'public'],
      options: { a: '1' },
    });
    expect(entriesOf(r)['green-team'].fieldsV1).toEqual({
      'f:spec': {
        'f:backends': { 'k:{"name":"green"}': { '.': {}, 'f:name': {}, 'f:weight': {} } },
        'f:tags': { 'v:"canary"': {}, 'v:"public"': {} },
      },
    });
  });

  it('conflicts on an atomic map and on a shared item field with another value', async () => {
    const r = await apply(
      route({ backends: [{ name: 'blue', weight: 50 }], options: { b: '2' } }),
      '--field-manager=green-team',
    );
    expect(r.stderr).toContain(
      'error: Apply failed with 2 conflicts: conflicts with "blue-team":\n- .spec.options\n- .spec.backends[name="blue"].weight\n',
    );
  });

  it('removes what one manager stops applying but keeps what the other still applies', async () => {
    expect(
      (
        await apply(
          route({ host: 'example.com', backends: [{ name: 'blue', weight: 90 }] }),
          '--field-manager=blue-team',
        )
      ).code,
    ).toBe(0);
    const r = await getJson(['route', 'home', '-n', NS]);
    // The tag "public" stays (green-team applies it); blue-team's options are gone.
    expect(r.spec).toEqual({
      host: 'example.com',
      backends: [
        { name: 'blue', weight: 90 },
        { name: 'green', weight: 10 },
      ],
      tags: ['canary', 'public'],
    });
  });
});

describe('client-side and server-side apply', () => {
  const config = (data: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'migrating', namespace: NS },
    data,
  });

  it('moves from client-side apply to server-side apply without conflicts', async () => {
    await env.ok(['apply', '-f', '-'], { input: manifest(config({ a: '1', b: '2' })) });
    let cm = await getJson(['configmap', 'migrating', '-n', NS]);
    expect(Object.keys(entriesOf(cm))).toEqual(['kubectl-client-side-apply']);

    const r = await apply(config({ a: '1', b: '3' }));
    expect(r.stderr).toBe('');
    cm = await getJson(['configmap', 'migrating', '-n', NS]);
    expect(cm.data).toEqual({ a: '1', b: '3' });
    // kubectl moved the client-side manager's fields to its applier; the server keeps the
    // annotation in step with what was applied.
    expect(entriesOf(cm).kubectl.fieldsV1).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {} } });
    expect(entriesOf(cm)['kubectl-client-side-apply']).toBeUndefined();
    expect(JSON.parse(cm.metadata.annotations[LAST_APPLIED]).data).toEqual({ a: '1', b: '3' });
  });

  it('moves back to client-side apply, whose three-way merge still sees what was applied', async () => {
    const r = await env.run(['apply', '-f', '-'], { input: manifest(config({ a: '1' })) });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const cm = await getJson(['configmap', 'migrating', '-n', NS]);
    expect(cm.data).toEqual({ a: '1' });
    expect(entriesOf(cm).kubectl.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    expect(entriesOf(cm)['kubectl-client-side-apply'].operation).toBe('Update');
  });
});
