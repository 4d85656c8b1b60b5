import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATE_ANNOTATION } from '../../src/index.js';
import { manifest } from '../e2e/support.js';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
const NS = 'default';

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 1, timeScale: 0.01 } });
  await k.ok(['apply', '-f', '-'], {
    input: manifest(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cfg', namespace: NS },
        data: { 'app.conf': 'listen 8080\n', GREETING: 'hello' },
      },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'sec', namespace: NS },
        stringData: { password: 's3cret' },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: NS, labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'nginx:1.27',
              env: [
                { name: 'MODE', value: 'prod' },
                { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'GREETING' } } },
                { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'DERIVED', value: '$(MODE)-x' },
              ],
              volumeMounts: [
                { name: 'cfg', mountPath: '/etc/app' },
                { name: 'sec', mountPath: '/etc/secret', readOnly: true },
              ],
            },
            { name: 'sidecar', image: 'busybox:1.36' },
          ],
          volumes: [
            { name: 'cfg', configMap: { name: 'cfg' } },
            { name: 'sec', secret: { secretName: 'sec' } },
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'crash', namespace: NS, annotations: { [SIMULATE_ANNOTATION]: 'crashloop' } },
        spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'done', namespace: NS, annotations: { [SIMULATE_ANNOTATION]: 'fail' } },
        spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] },
      },
    ),
  });
  await k.ok(['wait', '--for=condition=Ready', 'pod/web', '--timeout=20s']);
}, 60_000);
afterAll(async () => {
  await k?.stop();
});

describe('kubectl exec', () => {
  it('runs echo in the default container and says which it defaulted to', async () => {
    const r = await k.run(['exec', 'web', '--', 'echo', 'hello', 'world']);
    expect(r.stderr).toContain('Defaulted container "app" out of: app, sidecar');
    expect(r.stdout).toBe('hello world\n');
    expect(r.code).toBe(0);
  });
  it('prints the resolved environment', async () => {
    const out = await k.ok(['exec', 'web', '-c', 'app', '--', 'env']);
    const env = Object.fromEntries(
      out
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(env).toMatchObject({
      MODE: 'prod',
      GREETING: 'hello',
      PASSWORD: 's3cret',
      POD_NAME: 'web',
      DERIVED: 'prod-x',
      HOSTNAME: 'web',
      KUBERNETES_SERVICE_PORT: '443',
    });
    expect(env.PATH).toContain('/usr/bin');
    expect(env.KUBERNETES_SERVICE_HOST).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });
  it('reports a shell exit code as kubectl does', async () => {
    const r = await k.run(['exec', 'web', '-c', 'app', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toContain('err\n');
    expect(r.stderr).toContain('command terminated with exit code 3');
    expect(r.code).toBe(3);
  });
  it('fails an unknown program with the runtime message', async () => {
    const r = await k.run(['exec', 'web', '-c', 'app', '--', 'foo']);
    expect(r.stderr).toContain(
      'OCI runtime exec failed: exec failed: unable to start container process: exec: "foo": executable file not found in $PATH: unknown',
    );
    expect(r.code).not.toBe(0);
    const sh = await k.run(['exec', 'web', '-c', 'app', '--', 'sh', '-c', 'foo']);
    expect(sh.stderr).toContain('sh: 1: foo: not found');
    expect(sh.code).toBe(127);
  });
  it('reads mounted ConfigMap and Secret files', async () => {
    expect(await k.ok(['exec', 'web', '-c', 'app', '--', 'cat', '/etc/app/app.conf'])).toBe('listen 8080\n');
    expect(await k.ok(['exec', 'web', '-c', 'app', '--', 'cat', '/etc/secret/password'])).toBe('s3cret');
    expect(await k.ok(['exec', 'web', '-c', 'app', '--', 'ls', '/etc/app'])).toBe('GREETING\napp.conf\n');
    expect(await k.ok(['exec', 'web', '-c', 'app', '--', 'cat', '/etc/hostname'])).toBe('web\n');
  });
  it('answers an unknown container as kube-apiserver does', async () => {
    const r = await k.run(['exec', 'web', '-c', 'nope', '--', 'true']);
    expect(r.stderr).toContain('container nope is not valid for pod web');
    expect(r.code).not.toBe(0);
  });
});

describe('kubectl cp', () => {
  it('copies a file in, reads it back, and copies it out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cp-'));
    const src = join(dir, 'in.txt');
    writeFileSync(src, 'copied content\n');
    await k.ok(['cp', src, 'web:/tmp/in.txt', '-c', 'app']);
    expect(await k.ok(['exec', 'web', '-c', 'app', '--', 'cat', '/tmp/in.txt'])).toBe('copied content\n');
    const out = join(dir, 'out.txt');
    await k.ok(['cp', 'web:/tmp/in.txt', out, '-c', 'app']);
    expect(readFileSync(out, 'utf8')).toBe('copied content\n');
  });
});

describe('kubectl logs', () => {
  it('shows the simulated container output', async () => {
    const out = await k.ok(['logs', 'web', '-c', 'app']);
    expect(out).toContain('kubeloop: started container "app" (image "nginx:1.27")');
    expect(out).toContain('is ready');
  });
  it('--previous of a crash-looping container, and the error without one', async () => {
    await eventually(async () => (await k.ok(['logs', 'crash', '-p'])).includes('crashed with exit code 1'));
    const r = await k.run(['logs', 'web', '-c', 'app', '-p']);
    expect(r.stderr).toContain('previous terminated container "app" in pod "web" not found');
  });
});
