/**
 * The exact requests the client sends, checked on a recording server: what the local control
 * plane does not implement yet (server-side apply) or does not make observable (grace periods,
 * query parameters, HTTP/2).
 */
import { createSecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, issueServingCertificate } from '@kubeloop/server/testing';
import { Client, ConfigMap, Deployment, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Captured, captureServer } from './helpers.js';

let server: Awaited<ReturnType<typeof captureServer>>;
let client: Client;
const warnings: string[] = [];

beforeAll(async () => {
  server = await captureServer((req, res) => {
    const headers: Record<string, string | string[]> = { 'content-type': 'application/json' };
    if (decodeURIComponent(req.url).includes('warn=1'))
      headers.warning = ['299 - "first"', '299 - "second, with comma"'];
    res.writeHead(200, headers);
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }));
  });
  client = new Client({ server: server.url, token: 't' }, { onWarning: (w) => warnings.push(w) });
});
afterAll(async () => {
  await client.close();
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

const last = (): Captured => server.requests.at(-1)!;
const queryOf = (r: Captured) => Object.fromEntries(new URL(r.url, 'http://x').searchParams);
const pathOf = (r: Captured) => new URL(r.url, 'http://x').pathname;

describe('server-side apply', () => {
  it('PATCHes application/apply-patch+yaml with fieldManager and force', async () => {
    await client
      .api(Deployment, 'prod')
      .apply(
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2 } },
        { fieldManager: 'my-operator', force: true, dryRun: true, fieldValidation: 'Strict' },
      );
    const r = last();
    expect(r.method).toBe('PATCH');
    expect(pathOf(r)).toBe('/apis/apps/v1/namespaces/prod/deployments/web');
    expect(r.headers['content-type']).toBe('application/apply-patch+yaml');
    expect(queryOf(r)).toEqual({
      fieldManager: 'my-operator',
      force: 'true',
      dryRun: 'All',
      fieldValidation: 'Strict',
    });
    expect(JSON.parse(r.body)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2 },
    });
  });

  it('fills apiVersion and kind, applies status, and refuses to apply without a fieldManager', async () => {
    await client
      .api(ConfigMap, 'default')
      .apply({ metadata: { name: 'cfg' }, data: { a: '1' } } as ConfigMap, {
        fieldManager: 'm',
      });
    expect(JSON.parse(last().body)).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(queryOf(last())).toEqual({ fieldManager: 'm' });

    await client.applyStatus(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'prod' },
        status: { replicas: 1 },
      },
      { fieldManager: 'm' },
    );
    expect(pathOf(last())).toBe('/apis/apps/v1/namespaces/prod/deployments/web/status');

    await client.apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'via-client' } },
      { fieldManager: 'm' },
    );
    expect(pathOf(last())).toBe('/api/v1/namespaces/default/configmaps/via-client');

    const before = server.requests.length;
    await expect(
      client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }, { fieldManager: '' }),
    ).rejects.toThrow('fieldManager');
    await expect(
      client
        .api(ConfigMap)
        .patch(
          'x',
          { metadata: { name: 'x' }, apiVersion: 'v1', kind: 'ConfigMap' },
          { type: 'apply', fieldManager: '' },
        ),
    ).rejects.toThrow('fieldManager');
    expect(server.requests.length).toBe(before);
  });
});

describe('request shapes', () => {
  it('sends each patch type with its content type', async () => {
    const cms = client.api(ConfigMap, 'default');
    await cms.patch('x', { data: { a: null } });
    expect(last().headers['content-type']).toBe('application/merge-patch+json');
    expect(JSON.parse(last().body)).toEqual({ data: { a: null } });
    await cms.patch('x', [{ op: 'add', path: '/data/b', value: '1' }], { type: 'json', fieldManager: 'fm' });
    expect(last().headers['content-type']).toBe('application/json-patch+json');
    expect(queryOf(last())).toEqual({ fieldManager: 'fm' });
    await cms.patch('x', { data: { c: '1' } }, { type: 'strategic' });
    expect(last().headers['content-type']).toBe('application/strategic-merge-patch+json');
    await cms.patch(
      'x',
      { metadata: { name: 'x' }, apiVersion: 'v1', kind: 'ConfigMap' },
      { type: 'apply', fieldManager: 'a', force: true },
    );
    expect(last().headers['content-type']).toBe('application/apply-patch+yaml');
    expect(queryOf(last())).toEqual({ fieldManager: 'a', force: 'true' });
    // force is only for apply.
    await cms.patch('x', { data: {} }, { force: true });
    expect(queryOf(last())).toEqual({});
  });

  it('sends DeleteOptions in the body and dryRun in the query', async () => {
    await client.api(Pod, 'default').delete('p', {
      gracePeriodSeconds: 5,
      propagationPolicy: 'Foreground',
      preconditions: { uid: 'u1', resourceVersion: '7' },
      dryRun: true,
    });
    const r = last();
    expect([r.method, pathOf(r), r.headers['content-type']]).toEqual([
      'DELETE',
      '/api/v1/namespaces/default/pods/p',
      'application/json',
    ]);
    expect(queryOf(r)).toEqual({ dryRun: 'All' });
    expect(JSON.parse(r.body)).toEqual({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      gracePeriodSeconds: 5,
      propagationPolicy: 'Foreground',
      preconditions: { uid: 'u1', resourceVersion: '7' },
      dryRun: ['All'],
    });

    await client.api(Pod, 'default').delete('plain');
    expect(last().body).toBe('');

    await client.api(Pod, 'default').deleteCollection({
      labelSelector: { app: 'web' },
      fieldSelector: { 'status.phase': 'Failed' },
      gracePeriodSeconds: 0,
    });
    expect(pathOf(last())).toBe('/api/v1/namespaces/default/pods');
    expect(queryOf(last())).toEqual({ labelSelector: 'app=web', fieldSelector: 'status.phase=Failed' });
    expect(JSON.parse(last().body)).toMatchObject({ gracePeriodSeconds: 0 });
  });

  it('sends list, get and watch parameters', async () => {
    const cms = client.api(ConfigMap, '');
    await cms.list({
      limit: 5,
      resourceVersion: '0',
      resourceVersionMatch: 'NotOlderThan',
      timeoutSeconds: 3,
    });
    expect(pathOf(last())).toBe('/api/v1/configmaps');
    expect(queryOf(last())).toEqual({
      limit: '5',
      resourceVersion: '0',
      resourceVersionMatch: 'NotOlderThan',
      timeoutSeconds: '3',
    });

    await client.api(ConfigMap, 'default').get('x', { resourceVersion: '0' });
    expect(queryOf(last())).toEqual({ resourceVersion: '0' });

    for await (const _ of client
      .api(ConfigMap, 'default')
      .watch({ sendInitialEvents: true, timeoutSeconds: 1 })) {
      // the recording server answers one non-event line
    }
    expect(queryOf(last())).toEqual({
      watch: 'true',
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: 'true',
      sendInitialEvents: 'true',
      timeoutSeconds: '1',
    });
  });

  it('surfaces every Warning header', async () => {
    warnings.length = 0;
    await client.api(ConfigMap, 'default').list({ labelSelector: 'warn=1' });
    expect(warnings).toEqual(['first', 'second, with comma']);
  });

  it('emits each distinct warning once by default', async () => {
    const quiet = new Client({ server: server.url });
    const seen: Error[] = [];
    const listener = (w: Error) => seen.push(w);
    process.on('warning', listener);
    try {
      await quiet.api(ConfigMap, 'default').list({ labelSelector: 'warn=1' });
      await quiet.api(ConfigMap, 'default').list({ labelSelector: 'warn=1' });
      // process 'warning' events are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
      expect(seen.map((w) => [w.name, w.message])).toEqual([
        ['KubernetesWarning', 'first'],
        ['KubernetesWarning', 'second, with comma'],
      ]);
    } finally {
      process.off('warning', listener);
      await quiet.close();
    }
  });

  it('writes status and scale subresources at their paths', async () => {
    const deps = client.api(Deployment, 'default');
    const d: Deployment = {
      metadata: { name: 'd', resourceVersion: '3' },
      spec: { selector: {}, template: {} },
    };
    await deps.updateStatus(d);
    expect([last().method, pathOf(last())]).toEqual([
      'PUT',
      '/apis/apps/v1/namespaces/default/deployments/d/status',
    ]);
    expect(JSON.parse(last().body)).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
    await deps.updateScale('d', { spec: { replicas: 3 } }, { dryRun: true });
    expect([last().method, pathOf(last()), queryOf(last()).dryRun]).toEqual([
      'PUT',
      '/apis/apps/v1/namespaces/default/deployments/d/scale',
      'All',
    ]);
    expect(JSON.parse(last().body)).toEqual({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      spec: { replicas: 3 },
    });
  });
});

describe('HTTP/2', () => {
  it('speaks h2 when offered and the server accepts', async () => {
    const ca = await createCertificateAuthority();
    const serving = await issueServingCertificate(ca, ['127.0.0.1']);
    const versions: string[] = [];
    const h2 = createSecureServer({ cert: serving.cert, key: serving.key, allowHTTP1: true }, (req, res) => {
      versions.push(req.httpVersion);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'h2' } }));
    });
    await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(h2.address() as AddressInfo).port}`;
    const withH2 = new Client({ server: url, caData: ca.cert }, { http2: true });
    const withoutH2 = new Client({ server: url, caData: ca.cert });
    try {
      expect((await withH2.api(ConfigMap, 'default').get('h2')).metadata?.name).toBe('h2');
      expect((await withoutH2.api(ConfigMap, 'default').get('h2')).metadata?.name).toBe('h2');
      expect(versions).toEqual(['2.0', '1.1']);
    } finally {
      await withH2.close();
      await withoutH2.close();
      await new Promise<void>((r) => h2.close(() => r()));
    }
  });
});
