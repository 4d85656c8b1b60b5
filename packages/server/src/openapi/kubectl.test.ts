/**
 * The real kubectl against a small HTTP server that serves these OpenAPI documents plus the
 * minimal discovery kubectl needs (`/api`, `/apis`, APIResourceLists) and records writes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiResource } from './paths.js';
import { OpenApiService } from './service.js';

const run = promisify(execFile);
const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const resources: (OpenApiResource & { shortNames: string[] })[] = [
  {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    resource: 'configmaps',
    namespaced: true,
    verbs: ALL_VERBS,
    subresources: [],
    definition: 'io.k8s.api.core.v1.ConfigMap',
    shortNames: ['cm'],
  },
  {
    group: '',
    version: 'v1',
    kind: 'Pod',
    resource: 'pods',
    namespaced: true,
    verbs: ALL_VERBS,
    subresources: ['status'],
    definition: 'io.k8s.api.core.v1.Pod',
    shortNames: ['po'],
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    resource: 'deployments',
    namespaced: true,
    verbs: ALL_VERBS,
    subresources: ['status', 'scale'],
    definition: 'io.k8s.api.apps.v1.Deployment',
    shortNames: ['deploy'],
  },
  {
    group: 'stable.example.com',
    version: 'v1',
    kind: 'CronTab',
    resource: 'crontabs',
    namespaced: true,
    verbs: ALL_VERBS,
    subresources: ['status'],
    shortNames: ['ct'],
    schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          description: 'CronTabSpec says when to run what.',
          properties: { cronSpec: { type: 'string', description: 'The schedule, in cron format.' } },
        },
      },
    },
  },
];

interface Recorded {
  method: string;
  url: string;
  accept: string;
}

function groupVersionKey(r: OpenApiResource): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

function startServer(openapi: OpenApiService, recorded: Recorded[]): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      recorded.push({ method: req.method ?? '', url: req.url ?? '', accept: req.headers.accept ?? '' });
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const answer = openapi.handle(url.pathname, url.searchParams, {
        accept: req.headers.accept,
        'if-none-match': req.headers['if-none-match'],
      });
      if (answer) {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
        return;
      }
      const groupVersions = [...new Set(resources.map(groupVersionKey))];
      const path = url.pathname;
      if (path === '/version') return send(200, { major: '1', minor: '32', gitVersion: 'v1.32.0' });
      if (path === '/api')
        return send(200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
      if (path === '/apis') {
        const groups = groupVersions
          .filter((gv) => gv.includes('/'))
          .map((gv) => {
            const [name, version] = gv.split('/');
            const v = { groupVersion: gv, version };
            return { name, versions: [v], preferredVersion: v };
          });
        return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups });
      }
      const list = path.match(/^\/(?:api\/(v1)|apis\/([^/]+\/[^/]+))$/);
      if (list) {
        const gv = list[1] ?? list[2];
        const members = resources.filter((r) => groupVersionKey(r) === gv);
        if (members.length === 0) return send(404, {});
        const items = members.flatMap((r) => [
          {
            name: r.resource,
            singularName: r.kind.toLowerCase(),
            namespaced: r.namespaced,
            kind: r.kind,
            verbs: r.verbs,
            shortNames: r.shortNames,
          },
          ...r.subresources.map((s) => ({
            name: `${r.resource}/${s}`,
            singularName: '',
            namespaced: r.namespaced,
            kind: r.kind,
            verbs: ['get', 'patch', 'update'],
          })),
        ]);
        return send(200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources: items });
      }
      if (req.method === 'POST') {
        const obj = JSON.parse(Buffer.concat(chunks).toString()) as { metadata: Record<string, unknown> };
        obj.metadata.uid = '0e6f8d1c-0000-4000-8000-000000000001';
        obj.metadata.resourceVersion = '1';
        return send(201, obj);
      }
      send(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: 'not found',
      });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('kubectl against the OpenAPI documents', () => {
  const recorded: Recorded[] = [];
  let server: Server;
  let dir: string;
  let serverUrl: string;

  beforeAll(async () => {
    server = await startServer(new OpenApiService(() => resources), recorded);
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'kubeloop-openapi-'));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
    try {
      const { stdout, stderr } = await run(
        'kubectl',
        [`--server=${serverUrl}`, `--cache-dir=${join(dir, 'cache')}`, '--request-timeout=20s', ...args],
        { env: { ...process.env, HOME: dir, KUBECONFIG: join(dir, 'none') }, timeout: 60_000 },
      );
      return { stdout, stderr, code: 0 };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; code?: number };
      return {
        stdout: e.stdout ?? '',
        stderr: e.stderr ?? '',
        code: typeof e.code === 'number' ? e.code : 1,
      };
    }
  }

  function file(name: string, content: string): string {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  }

  it('explain deployment.spec.replicas prints the field description (OpenAPI v3)', async () => {
    recorded.length = 0;
    const { stdout, code } = await kubectl('explain', 'deployment.spec.replicas');
    expect(code).toBe(0);
    expect(stdout).toContain('FIELD: replicas <integer>');
    expect(stdout).toContain('Number of desired pods.');
    expect(recorded.some((r) => r.url.startsWith('/openapi/v3/apis/apps/v1?hash='))).toBe(true);
    expect(recorded.some((r) => r.url.startsWith('/openapi/v2'))).toBe(false);
  });

  it('explain deployment.spec.strategy and pods --recursive walk nested definitions', async () => {
    const strategy = await kubectl('explain', 'deployment.spec.strategy');
    expect(strategy.code).toBe(0);
    expect(strategy.stdout).toContain('FIELD: strategy <DeploymentStrategy>');
    expect(strategy.stdout).toMatch(/rollingUpdate\s+<RollingUpdateDeployment>/);
    const pods = await kubectl('explain', 'pods', '--recursive');
    expect(pods.code).toBe(0);
    expect(pods.stdout).toContain('KIND:       Pod');
    expect(pods.stdout).toMatch(/containers\s+<\[\]Container> -required-/);
    expect(pods.stdout).toMatch(/imagePullPolicy\s+<string>/);
  });

  it('explain reads a custom resource schema', async () => {
    const { stdout, code } = await kubectl('explain', 'crontabs.spec');
    expect(code).toBe(0);
    expect(stdout).toContain('CronTabSpec says when to run what.');
    expect(stdout).toMatch(/cronSpec\s+<string>/);
  });

  it('create asks the server to validate fields, having found fieldValidation in OpenAPI v3', async () => {
    recorded.length = 0;
    const manifest = file(
      'deployment.yaml',
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web, namespace: default}',
        'spec:',
        '  selector: {matchLabels: {app: web}}',
        '  template:',
        '    metadata: {labels: {app: web}}',
        '    spec: {containers: [{name: web, image: nginx}]}',
        '',
      ].join('\n'),
    );
    const { stdout, stderr, code } = await kubectl('create', '-f', manifest);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('deployment.apps/web created');
    const post = recorded.find((r) => r.method === 'POST');
    expect(post?.url).toContain('fieldValidation=Strict');
    expect(recorded.some((r) => r.url.startsWith('/openapi/v2'))).toBe(false);
  });

  it('create -f of a kind: List validates client-side against the OpenAPI v2 protobuf', async () => {
    recorded.length = 0;
    const manifest = file(
      'list.yaml',
      [
        'apiVersion: v1',
        'kind: List',
        'items:',
        '- apiVersion: v1',
        '  kind: ConfigMap',
        '  metadata: {name: a, namespace: default}',
        '  data: {key: value}',
        '  bogus: 1',
        '',
      ].join('\n'),
    );
    const bad = await kubectl('create', '-f', manifest);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('unknown field "bogus" in io.k8s.api.core.v1.ConfigMap');
    const v2 = recorded.find((r) => r.url.startsWith('/openapi/v2'));
    expect(v2?.accept).toBe('application/com.github.proto-openapi.spec.v2@v1.0+protobuf');
    expect(recorded.some((r) => r.method === 'POST')).toBe(false);

    file(
      'list.yaml',
      [
        'apiVersion: v1',
        'kind: List',
        'items:',
        '- apiVersion: v1',
        '  kind: ConfigMap',
        '  metadata: {name: a, namespace: default}',
        '  data: {key: value}',
        '',
      ].join('\n'),
    );
    const good = await kubectl('create', '-f', manifest);
    expect(good.stderr).toBe('');
    expect(good.stdout).toContain('configmap/a created');
  });
});
