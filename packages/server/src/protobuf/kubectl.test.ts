/**
 * The bodies kubectl 1.32 really sends. A throwaway HTTP server (not ours: no dependency on the API server)
 * serves the little discovery kubectl needs, records each POST and answers with the decoded object as JSON,
 * which also proves that kubectl accepts a JSON answer to its protobuf request.
 *
 * For every `kubectl create …` the decoded protobuf body must equal `kubectl create … --dry-run=client -o json`,
 * the JSON kubectl would have sent itself. The captured bodies are kept under testdata/ so that the same checks
 * run without kubectl; `UPDATE_PROTOBUF_FIXTURES=1 npx vitest run src/protobuf/kubectl.test.ts` refreshes them.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decodeProtobufObject, encodeProtobufObject, PROTOBUF_CONTENT_TYPE } from './index.js';

const run = promisify(execFile);
const testdata = new URL('./testdata/', import.meta.url);
const update = process.env.UPDATE_PROTOBUF_FIXTURES === '1';

const hasKubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** name → kubectl arguments after `create`. */
const COMMANDS: Record<string, string[]> = {
  deployment: ['deployment', 'web', '--image=nginx'],
  'deployment-zero-replicas': ['deployment', 'zero', '--image=nginx:1.27', '--replicas=0', '--port=8080'],
  configmap: ['configmap', 'cm', '--from-literal=a=b', '--from-literal=empty='],
  'secret-generic': ['secret', 'generic', 's', '--from-literal=password=hunter2', '--from-literal=blank='],
  'secret-docker-registry': [
    'secret',
    'docker-registry',
    'reg',
    '--docker-server=registry.example.com',
    '--docker-username=u',
    '--docker-password=p',
  ],
  'service-clusterip': ['service', 'clusterip', 'svc', '--tcp=80:8080', '--tcp=443:https'],
  'service-nodeport': ['service', 'nodeport', 'np', '--tcp=80:8080', '--node-port=30080'],
  namespace: ['namespace', 'ns1'],
  serviceaccount: ['serviceaccount', 'sa'],
  role: ['role', 'r', '--verb=get,list', '--resource=pods,deployments.apps', '--resource-name=x'],
  rolebinding: ['rolebinding', 'rb', '--role=r', '--serviceaccount=default:sa', '--user=alice'],
  clusterrole: ['clusterrole', 'cr', '--verb=get', '--non-resource-url=/healthz'],
  clusterrolebinding: ['clusterrolebinding', 'crb', '--clusterrole=cr', '--group=devs'],
  job: ['job', 'j', '--image=busybox', '--', 'echo', 'hi'],
  cronjob: ['cronjob', 'cj', '--image=busybox', '--schedule=*/5 * * * *', '--', 'date'],
};

const RESOURCES: Record<string, [string, string, boolean][]> = {
  v1: [
    ['namespaces', 'Namespace', false],
    ['configmaps', 'ConfigMap', true],
    ['secrets', 'Secret', true],
    ['services', 'Service', true],
    ['serviceaccounts', 'ServiceAccount', true],
    ['pods', 'Pod', true],
  ],
  'apps/v1': [['deployments', 'Deployment', true]],
  'batch/v1': [
    ['jobs', 'Job', true],
    ['cronjobs', 'CronJob', true],
  ],
  'rbac.authorization.k8s.io/v1': [
    ['roles', 'Role', true],
    ['rolebindings', 'RoleBinding', true],
    ['clusterroles', 'ClusterRole', false],
    ['clusterrolebindings', 'ClusterRoleBinding', false],
  ],
};

interface Captured {
  contentType: string | undefined;
  accept: string | undefined;
  body: Buffer;
}

/** A stand-in API server: discovery plus a POST handler that records the body and echoes it decoded. */
function captureServer(): Promise<{ url: string; posts: Captured[]; server: Server }> {
  const posts: Captured[] = [];
  const discovery = (gv: string) => ({
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: gv,
    resources: (RESOURCES[gv] ?? []).map(([name, kind, namespaced]) => ({
      name,
      singularName: kind.toLowerCase(),
      namespaced,
      kind,
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    })),
  });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (code: number, obj: unknown) => {
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      const path = (req.url ?? '').split('?')[0]!;
      if (req.method === 'POST') {
        const body = Buffer.concat(chunks);
        posts.push({ contentType: req.headers['content-type'], accept: req.headers.accept, body });
        try {
          return send(201, decodeProtobufObject(body));
        } catch (err) {
          return send(400, {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            message: String(err),
            code: 400,
          });
        }
      }
      if (path === '/version') return send(200, { major: '1', minor: '32', gitVersion: 'v1.32.0' });
      if (path === '/api') return send(200, { kind: 'APIVersions', versions: ['v1'] });
      if (path === '/apis') {
        const groups = Object.keys(RESOURCES)
          .filter((gv) => gv.includes('/'))
          .map((gv) => {
            const [name, version] = gv.split('/');
            return {
              name,
              versions: [{ groupVersion: gv, version }],
              preferredVersion: { groupVersion: gv, version },
            };
          });
        return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups });
      }
      if (path === '/api/v1') return send(200, discovery('v1'));
      const gv = /^\/apis\/(.+\/v1)$/.exec(path)?.[1];
      if (gv && RESOURCES[gv]) return send(200, discovery(gv));
      send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, posts, server });
    });
  });
}

describe.skipIf(!hasKubectl)('kubectl 1.32 protobuf bodies (live)', () => {
  let capture: Awaited<ReturnType<typeof captureServer>>;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    capture = await captureServer();
    dir = mkdtempSync(join(tmpdir(), 'kubeloop-protobuf-'));
    writeFileSync(join(dir, 'kubeconfig'), '');
    env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
  });
  afterAll(() => {
    capture?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `kubectl create <args> <flags>`, keeping the flags before a `--` that starts a container command. */
  const create = async (args: string[], ...flags: string[]) => {
    const dash = args.indexOf('--');
    const argv = dash === -1 ? [...args, ...flags] : [...args.slice(0, dash), ...flags, ...args.slice(dash)];
    const global = [`--server=${capture.url}`, `--cache-dir=${join(dir, 'cache')}`];
    return (await run('kubectl', [...global, 'create', ...argv], { env })).stdout;
  };

  test.each(Object.entries(COMMANDS))('kubectl create %s', async (name, args) => {
    const before = capture.posts.length;
    // Not a dry run: kubectl sends the object, and prints our JSON answer back.
    const printed = JSON.parse(await create(args, '-o', 'json'));
    expect(capture.posts.length).toBe(before + 1);
    const post = capture.posts[before]!;
    expect(post.contentType).toBe(PROTOBUF_CONTENT_TYPE);
    expect(post.accept).toContain('application/json');

    const expected = JSON.parse(await create(args, '--dry-run=client', '-o', 'json'));
    const decoded = decodeProtobufObject(post.body);
    expect(decoded).toEqual(expected);
    expect(printed).toEqual(expected);
    // The descriptors reproduce gogo's encoding byte for byte.
    expect(encodeProtobufObject(decoded, { gogo: true }).equals(post.body)).toBe(true);

    if (update) {
      writeFileSync(new URL(`${name}.pb`, testdata), post.body);
      writeFileSync(new URL(`${name}.json`, testdata), `${JSON.stringify(expected, null, 2)}\n`);
    }
  });

  test('kubectl create token sends a TokenRequest', async () => {
    const before = capture.posts.length;
    // Our echo has no status.token, which kubectl reports; the request is what matters here.
    await expect(create(['token', 'sa', '--duration=10m', '--audience=api'])).rejects.toThrow(/no token/);
    const post = capture.posts[before]!;
    expect(post.contentType).toBe(PROTOBUF_CONTENT_TYPE);
    expect(decodeProtobufObject(post.body)).toEqual({
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { audiences: ['api'], expirationSeconds: 600, boundObjectRef: null },
      status: { token: '', expirationTimestamp: null },
    });
  });
});

describe('captured kubectl 1.32 bodies (testdata)', () => {
  const names = readdirSync(testdata)
    .filter((f) => f.endsWith('.pb'))
    .map((f) => f.slice(0, -3));

  test('every kubectl create command has a fixture', () => {
    expect(names.sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  test.each(names)('%s decodes to the JSON kubectl would send', (name) => {
    const body = readFileSync(new URL(`${name}.pb`, testdata));
    const expected = JSON.parse(readFileSync(new URL(`${name}.json`, testdata), 'utf8'));
    const decoded = decodeProtobufObject(body);
    expect(decoded).toEqual(expected);
    expect(encodeProtobufObject(decoded, { gogo: true }).equals(body)).toBe(true);
  });
});
