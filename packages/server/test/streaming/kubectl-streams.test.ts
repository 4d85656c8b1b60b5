import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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
  it('feeds -i stdin to a shell that reads its script from it', async () => {
    const r = await k.run(['exec', '-i', 'web', '-c', 'app', '--', 'sh'], {
      input: 'echo first\ncd /etc/app\nls; exit 4\necho never\n',
    });
    expect(r.stdout).toBe('first\nGREETING\napp.conf\n');
    expect(r.stderr).toContain('command terminated with exit code 4');
    expect(r.code).toBe(4);
  });
  it('says the container is not running for a crash-looping pod', async () => {
    const r = await k.run(['exec', 'crash', '--', 'true']);
    expect(r.stderr).toContain('container not found ("app")');
    expect(r.code).not.toBe(0);
  });
  it('refuses a completed pod (kubectl) and a pod no node runs (the apiserver, after the SPDY fallback)', async () => {
    await eventually(
      async () => (await k.ok(['get', 'pod', 'done', '-o', 'jsonpath={.status.phase}'])) === 'Failed',
    );
    const done = await k.run(['exec', 'done', '--', 'true']);
    expect(done.stderr).toContain('cannot exec into a container in a completed pod; current phase is Failed');
    await k.ok(['run', 'pending', '--image=busybox:1.36', '--overrides={"spec":{"schedulerName":"nobody"}}']);
    const pending = await k.run(['exec', 'pending', '--', 'true']);
    expect(pending.stderr).toContain(
      'Error from server (BadRequest): pod pending does not have a host assigned',
    );
    expect(pending.code).not.toBe(0);
  });
  it('answers an unknown container as kube-apiserver does', async () => {
    const r = await k.run(['exec', 'web', '-c', 'nope', '--', 'true']);
    expect(r.stderr).toContain('container nope is not valid for pod web');
    expect(r.code).not.toBe(0);
  });
});

describe('kubectl attach', () => {
  it('streams what the container writes from then on', async () => {
    const a = k.spawn(['attach', 'web', '-c', 'app']);
    // kubectl prints its hint once the streams are up; what the container writes then arrives.
    await eventually(async () => {
      await k.ok(['exec', 'web', '-c', 'app', '--', 'sh', '-c', 'echo attached > /proc/1/fd/1']);
      return a.output().includes('attached\n');
    });
    await a.stop();
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
  it('copies a directory in and out, into an existing directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cp-'));
    mkdirSync(join(dir, 'tree', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'tree', 'a.txt'), 'A');
    writeFileSync(join(dir, 'tree', 'sub', 'b.txt'), 'B\n');
    await k.ok(['exec', 'web', '-c', 'app', '--', 'mkdir', '-p', '/data']);
    await k.ok(['cp', join(dir, 'tree'), 'web:/data', '-c', 'app']);
    expect(await k.ok(['exec', 'web', '-c', 'app', '--', 'ls', '/data/tree', '/data/tree/sub'])).toBe(
      '/data/tree:\na.txt\nsub\n\n/data/tree/sub:\nb.txt\n',
    );
    await k.ok(['cp', 'web:/data/tree', join(dir, 'back'), '-c', 'app']);
    expect(readFileSync(join(dir, 'back', 'a.txt'), 'utf8')).toBe('A');
    expect(readFileSync(join(dir, 'back', 'sub', 'b.txt'), 'utf8')).toBe('B\n');
  });
  it('keeps a large binary file intact both ways', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cp-'));
    const data = randomBytes(3 * 1024 * 1024 + 123);
    writeFileSync(join(dir, 'blob.bin'), data);
    await k.ok(['cp', join(dir, 'blob.bin'), 'web:/tmp/blob.bin', '-c', 'app']);
    await k.ok(['cp', 'web:/tmp/blob.bin', join(dir, 'back.bin'), '-c', 'app']);
    expect(readFileSync(join(dir, 'back.bin')).equals(data)).toBe(true);
  });
  it('cannot write into a ConfigMap volume', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cp-'));
    writeFileSync(join(dir, 'x'), 'x');
    const r = await k.run(['cp', join(dir, 'x'), 'web:/etc/app/x', '-c', 'app']);
    expect(r.stderr).toContain('tar: x: Cannot open: Read-only file system');
  });
});

describe('kubectl logs', () => {
  it('shows the simulated container output', async () => {
    const out = await k.ok(['logs', 'web', '-c', 'app']);
    expect(out).toContain('kubeloop: started container "app" (image "nginx:1.27")');
    expect(out).toContain('is ready');
  });
  it('--tail, --timestamps, --since and -c pick lines of the named container', async () => {
    await k.ok([
      'exec',
      'web',
      '-c',
      'app',
      '--',
      'sh',
      '-c',
      'echo one > /proc/1/fd/1; echo two > /proc/1/fd/2',
    ]);
    expect(await k.ok(['logs', 'web', '-c', 'app', '--tail=2'])).toBe('one\ntwo\n');
    const stamped = await k.ok(['logs', 'web', '-c', 'app', '--tail=1', '--timestamps']);
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z two\n$/);
    expect(await k.ok(['logs', 'web', '-c', 'app', '--since=1h'])).toContain('one\ntwo\n');
    const future = new Date(Date.now() + 3_600_000).toISOString().slice(0, 19) + 'Z';
    expect(await k.ok(['logs', 'web', '-c', 'app', `--since-time=${future}`])).toBe('');
    const sidecar = await k.ok(['logs', 'web', '-c', 'sidecar']);
    expect(sidecar).toContain('started container "sidecar" (image "busybox:1.36")');
    expect(sidecar).not.toContain('one');
    expect(await k.ok(['logs', 'web', '-c', 'app', '--limit-bytes=3', '--tail=1'])).toBe('two');
  });

  it('-f follows until the pod goes away', async () => {
    await k.ok(['run', 'follow', '--image=busybox:1.36', '--restart=Never']);
    await k.ok(['wait', '--for=condition=Ready', 'pod/follow', '--timeout=20s']);
    const f = k.spawn(['logs', '-f', 'follow']);
    await eventually(() => f.output().includes('is ready'));
    await k.ok(['exec', 'follow', '--', 'sh', '-c', 'echo streamed > /proc/1/fd/1']);
    await eventually(() => f.output().includes('streamed\n'));
    await k.ok(['delete', 'pod', 'follow', '--wait=false']);
    const r = await f.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/is ready\nstreamed\n$/);
  });

  it('shows the failure of a failed container', async () => {
    await eventually(async () => (await k.run(['logs', 'done'])).stdout.includes('failed with exit code 1'));
    const r = await k.run(['logs', 'done']);
    expect(r.stdout).toContain(
      `kubeloop: container "app" failed with exit code 1 (${SIMULATE_ANNOTATION}: fail)`,
    );
  });

  it('--previous of a crash-looping container, and the error without one', async () => {
    await eventually(async () => (await k.ok(['logs', 'crash', '-p'])).includes('crashed with exit code 1'));
    const r = await k.run(['logs', 'web', '-c', 'app', '-p']);
    expect(r.stderr).toContain('previous terminated container "app" in pod "web" not found');
  });
});
