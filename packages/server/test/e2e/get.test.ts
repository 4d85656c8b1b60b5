/**
 * Reading with kubectl: tables and output formats, selectors, chunked lists, watch, describe,
 * discovery (`api-resources`, `api-versions`) and `explain`.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { deployment, manifest, parseTable } from './support.js';

const NS = 'view';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv();
  const configMaps = [1, 2, 3, 4, 5, 6, 7].map((i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `c${i}`, namespace: NS, labels: { set: 'chunk', env: i % 2 === 0 ? 'prod' : 'dev' } },
    data: { i: String(i) },
  }));
  await env.ok(['apply', '-f', '-'], {
    input: manifest(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      deployment('web', NS, {
        replicas: 2,
        labels: { env: 'prod' },
        containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }],
      }),
      ...configMaps,
    ),
  });
});
afterAll(async () => {
  await env?.stop();
});

const names = (out: string) => out.split('\n').filter(Boolean);

describe('kubectl get', () => {
  it('prints kubectl’s table columns, and -o wide adds the wide ones', async () => {
    const t = parseTable(await env.ok(['get', 'deployments', '-n', NS]));
    expect(t.columns).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE']);
    expect(t.rows).toHaveLength(1);
    expect(t.rows[0]).toMatchObject({ NAME: 'web', READY: '0/2', 'UP-TO-DATE': '0', AVAILABLE: '0' });
    expect(t.rows[0]!.AGE).toMatch(/^\d+s$/);

    const wide = parseTable(await env.ok(['get', 'deploy', 'web', '-n', NS, '-o', 'wide']));
    expect(wide.columns).toEqual([
      'NAME',
      'READY',
      'UP-TO-DATE',
      'AVAILABLE',
      'AGE',
      'CONTAINERS',
      'IMAGES',
      'SELECTOR',
    ]);
    expect(wide.rows[0]).toMatchObject({
      NAME: 'web',
      CONTAINERS: 'web',
      IMAGES: 'nginx:1.27',
      SELECTOR: 'app=web',
    });

    const ns = parseTable(await env.ok(['get', 'namespaces']));
    expect(ns.columns).toEqual(['NAME', 'STATUS', 'AGE']);
    expect(ns.rows.map((r) => `${r.NAME} ${r.STATUS}`)).toEqual([
      'default Active',
      'kube-node-lease Active',
      'kube-public Active',
      'kube-system Active',
      `${NS} Active`,
    ]);
  });

  it('prints -o name, -o jsonpath, -o json and -o yaml', async () => {
    expect(await env.ok(['get', 'deploy', '-n', NS, '-o', 'name'])).toBe('deployment.apps/web\n');
    expect(
      await env.ok([
        'get',
        'deploy/web',
        '-n',
        NS,
        '-o',
        'jsonpath={.spec.replicas}/{.spec.strategy.type}/{.spec.template.spec.containers[0].ports[0].protocol}',
      ]),
    ).toBe('2/RollingUpdate/TCP');
    expect(
      await env.ok([
        'get',
        'configmaps',
        '-n',
        NS,
        '-l',
        'set=chunk',
        '-o',
        'jsonpath={range .items[*]}{.metadata.name}={.data.i} {end}',
      ]),
    ).toBe('c1=1 c2=2 c3=3 c4=4 c5=5 c6=6 c7=7 ');

    const json = JSON.parse(await env.ok(['get', 'deploy/web', '-n', NS, '-o', 'json']));
    const yaml = parseYaml(await env.ok(['get', 'deploy/web', '-n', NS, '-o', 'yaml']));
    expect(json).toMatchObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NS },
    });
    expect(yaml).toEqual(json);

    const list = JSON.parse(await env.ok(['get', 'cm', '-n', NS, '-l', 'env=prod', '-o', 'json']));
    expect(list.kind).toBe('List');
    expect(list.items.map((o: any) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ConfigMap/c2',
      'ConfigMap/c4',
      'ConfigMap/c6',
    ]);
  });

  it('filters with label and field selectors', async () => {
    expect(names(await env.ok(['get', 'cm', '-n', NS, '-l', 'env=prod', '-o', 'name']))).toEqual([
      'configmap/c2',
      'configmap/c4',
      'configmap/c6',
    ]);
    expect(names(await env.ok(['get', 'cm', '-n', NS, '-l', 'env!=prod,set', '-o', 'name']))).toEqual([
      'configmap/c1',
      'configmap/c3',
      'configmap/c5',
      'configmap/c7',
    ]);
    // kube-root-ca.crt is the one without the label.
    expect(names(await env.ok(['get', 'cm', '-n', NS, '-l', '!set', '-o', 'name']))).toEqual([
      'configmap/kube-root-ca.crt',
    ]);
    expect(
      names(await env.ok(['get', 'cm', '-n', NS, '--field-selector', 'metadata.name=c3', '-o', 'name'])),
    ).toEqual(['configmap/c3']);
    expect(
      names(
        await env.ok([
          'get',
          'cm',
          '-A',
          '-l',
          'env=dev',
          '--field-selector',
          'metadata.name!=c3',
          '-o',
          'name',
        ]),
      ),
    ).toEqual(['configmap/c1', 'configmap/c5', 'configmap/c7']);

    const table = parseTable(await env.ok(['get', 'cm', '-n', NS, '--field-selector', 'metadata.name=c5']));
    expect(table.columns).toEqual(['NAME', 'DATA', 'AGE']);
    expect(table.rows).toEqual([expect.objectContaining({ NAME: 'c5', DATA: '1' })]);

    const bad = await env.run(['get', 'cm', '-n', NS, '--field-selector', 'data.i=1']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'Error from server (BadRequest): Unable to find "/v1, Resource=configmaps" that match label selector "", field selector "data.i=1": "data.i" is not a known field selector: only "metadata.name", "metadata.namespace"\n',
    );
  });

  it('--chunk-size pages through the list with limit and continue', async () => {
    const r = await env.run([
      'get',
      'cm',
      '-n',
      NS,
      '-l',
      'set=chunk',
      '--chunk-size=2',
      '-o',
      'name',
      '-v=6',
    ]);
    expect(r.code).toBe(0);
    expect(names(r.stdout)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'].map((n) => `configmap/${n}`));
    const requests = r.stderr
      .split('\n')
      .filter((l) => l.includes(`GET ${env.cp.url}/api/v1/namespaces/${NS}/configmaps?`));
    expect(requests).toHaveLength(4);
    expect(requests.every((l) => l.includes('limit=2') && l.includes(' 200 OK'))).toBe(true);
    expect(requests.filter((l) => l.includes('continue='))).toHaveLength(3);
  });

  it('-w prints the current rows, then a row for each change', async () => {
    const watch = env.spawn(['get', 'deployments', '-n', NS, '-w']);
    try {
      await eventually(() => /^web\s+0\/2\s/m.test(watch.output()), 10_000, 'the initial row');
      expect(await env.ok(['scale', 'deploy/web', '-n', NS, '--replicas=3'])).toBe(
        'deployment.apps/web scaled\n',
      );
      await eventually(() => /^web\s+0\/3\s/m.test(watch.output()), 10_000, 'the row of the change');
      await env.ok(['create', '-f', '-'], { input: manifest(deployment('api', NS, { replicas: 1 })) });
      await eventually(() => /^api\s+0\/1\s/m.test(watch.output()), 10_000, 'the row of the new object');
    } finally {
      await watch.stop();
    }
    const lines = names(watch.output());
    expect(lines[0]).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/);
    expect(lines.filter((l) => l.startsWith('NAME'))).toHaveLength(1);
    await env.ok(['scale', 'deploy/web', '-n', NS, '--replicas=2']);
  });

  it('--watch-only with --output-watch-events prints only the events after the start', async () => {
    const watch = env.spawn(['get', 'cm', '-n', NS, '--watch-only', '--output-watch-events']);
    try {
      // Nothing is printed for existing objects, so make changes until the first one shows up.
      await eventually(
        async () => {
          await env.ok(['annotate', 'cm/c1', '-n', NS, '--overwrite', `ping=${Date.now()}`]);
          return /^MODIFIED\s+c1\s/m.test(watch.output());
        },
        10_000,
        'a MODIFIED event',
      );
      await env.ok(['delete', 'cm/c7', '-n', NS]);
      await eventually(() => /^DELETED\s+c7\s/m.test(watch.output()), 10_000, 'a DELETED event');
    } finally {
      await watch.stop();
    }
    expect(watch.output()).not.toMatch(/^ADDED/m);
    await env.ok(['apply', '-f', '-'], {
      input: manifest({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c7', namespace: NS, labels: { set: 'chunk', env: 'dev' } },
        data: { i: '7' },
      }),
    });
  });
});

describe('kubectl describe', () => {
  it('describes a deployment with its fields', async () => {
    const out = await env.ok(['describe', 'deployment', 'web', '-n', NS]);
    const field = (name: string) => out.match(new RegExp(`^${name}:\\s+(.*)$`, 'm'))?.[1];
    expect(field('Name')).toBe('web');
    expect(field('Namespace')).toBe(NS);
    expect(field('Selector')).toBe('app=web');
    expect(field('Replicas')).toBe('2 desired | 0 updated | 0 total | 0 available | 0 unavailable');
    expect(field('StrategyType')).toBe('RollingUpdate');
    expect(field('RollingUpdateStrategy')).toBe('25% max unavailable, 25% max surge');
    expect(out).toMatch(/^Labels:\s+app=web\n\s+env=prod\n/m);
    expect(out).toMatch(
      /^Pod Template:\n\s+Labels:\s+app=web\n\s+Containers:\n\s+web:\n\s+Image:\s+nginx:1\.27\n\s+Port:\s+80\/TCP\n/m,
    );
    expect(field('Events')).toBe('<none>');
  });
});

describe('discovery and explain', () => {
  it('api-resources lists the kinds with their short names', async () => {
    const t = parseTable(await env.ok(['api-resources']));
    expect(t.columns).toEqual(['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
    const byKind = new Map(t.rows.map((r) => [`${r.APIVERSION}/${r.KIND}`, r]));
    expect(byKind.get('apps/v1/Deployment')).toEqual({
      NAME: 'deployments',
      SHORTNAMES: 'deploy',
      APIVERSION: 'apps/v1',
      NAMESPACED: 'true',
      KIND: 'Deployment',
    });
    expect(byKind.get('v1/ConfigMap')).toMatchObject({
      NAME: 'configmaps',
      SHORTNAMES: 'cm',
      NAMESPACED: 'true',
    });
    expect(byKind.get('v1/Namespace')).toMatchObject({
      NAME: 'namespaces',
      SHORTNAMES: 'ns',
      NAMESPACED: 'false',
    });
    expect(byKind.get('v1/Secret')).toMatchObject({ NAME: 'secrets', SHORTNAMES: '', NAMESPACED: 'true' });
    expect(byKind.get('apiextensions.k8s.io/v1/CustomResourceDefinition')).toMatchObject({
      NAME: 'customresourcedefinitions',
      SHORTNAMES: 'crd,crds',
      NAMESPACED: 'false',
    });

    const clusterNames = names(await env.ok(['api-resources', '--namespaced=false', '-o', 'name']));
    expect(clusterNames).toContain('namespaces');
    expect(clusterNames).toContain('customresourcedefinitions.apiextensions.k8s.io');
    expect(clusterNames).toContain('clusterroles.rbac.authorization.k8s.io');
    expect(clusterNames).not.toContain('configmaps');
    expect(clusterNames).not.toContain('deployments.apps');

    const clusterTable = parseTable(await env.ok(['api-resources', '--namespaced=false']));
    expect(clusterTable.rows.length).toBe(clusterNames.length);
    expect(clusterTable.rows.every((r) => r.NAMESPACED === 'false')).toBe(true);
  });

  it('api-versions lists the served group versions', async () => {
    const versions = names(await env.ok(['api-versions']));
    for (const v of ['v1', 'apps/v1', 'batch/v1', 'rbac.authorization.k8s.io/v1', 'apiextensions.k8s.io/v1'])
      expect(versions).toContain(v);
    expect(versions).toEqual([...versions].sort());
  });

  it('explain documents a field from the OpenAPI schema', async () => {
    const out = await env.ok(['explain', 'deployment.spec.replicas']);
    expect(out).toMatch(/^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n/);
    expect(out).toContain('FIELD: replicas <integer>');
    expect(out).toContain('Number of desired pods.');

    const strategy = await env.ok(['explain', 'deploy.spec.strategy']);
    expect(strategy).toContain('FIELD: strategy <DeploymentStrategy>');
    expect(strategy).toMatch(/^ {2}rollingUpdate\t<RollingUpdateDeployment>$/m);
    expect(strategy).toMatch(/^ {2}type\t<string>$/m);
  });
});

describe('errors as a user sees them', () => {
  it('a missing object is NotFound', async () => {
    const r = await env.run(['get', 'deploy', 'nope', '-n', NS]);
    expect(r).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'Error from server (NotFound): deployments.apps "nope" not found\n',
    });
  });

  it('an unknown resource type is reported by discovery', async () => {
    const r = await env.run(['get', 'foos']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: the server doesn\'t have a resource type "foos"\n');
  });
});
