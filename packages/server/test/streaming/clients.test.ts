/**
 * The streaming subresources through the official clients: the Python client
 * (`kubernetes.stream.stream` over `v4.channel.k8s.io`, `read_namespaced_pod_log`) and
 * @kubernetes/client-node (`Exec` over v5/v4, `Log`).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { eventually } from '../kubectl.js';

let cp: ControlPlane;
let client: Client;
let dir: string;
let kubeconfigPath: string;

beforeAll(async () => {
  cp = await startTestEnv({ nodes: { count: 1, timeScale: 0.01 } });
  client = new Client(cp.clientConfig);
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-clients-'));
  kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, cp.kubeconfig, { mode: 0o600 });
  const pods = client.api(Pod, 'default');
  await pods.create({
    metadata: { name: 'one' },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27', env: [{ name: 'COLOR', value: 'blue' }] }] },
  });
  await pods.create({
    metadata: { name: 'two' },
    spec: {
      containers: [
        { name: 'a', image: 'busybox:1.36' },
        { name: 'b', image: 'busybox:1.36' },
      ],
    },
  });
  await eventually(async () => {
    const p = await pods.get('one');
    return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  });
}, 60_000);
afterAll(async () => {
  await client?.close();
  await cp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a Python snippet with the official client configured from the test env's kubeconfig. */
function python(code: string): Promise<{ stdout: string; stderr: string; code: number }> {
  const script = `
import json, sys
from kubernetes import client, config
from kubernetes.stream import stream
config.load_kube_config(config_file=${JSON.stringify(kubeconfigPath)})
api = client.CoreV1Api()
${code}
`;
  return new Promise((resolve) => {
    execFile('/usr/bin/python3', ['-c', script], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 });
    });
  });
}

describe('the official Python client', () => {
  it('execs with kubernetes.stream.stream and reads the exit code from the v4 error channel', async () => {
    const r = await python(`
out = stream(api.connect_get_namespaced_pod_exec, 'one', 'default', command=['sh', '-c', 'echo $COLOR'],
             stderr=True, stdin=False, stdout=True, tty=False)
print(json.dumps({'out': out}))
resp = stream(api.connect_get_namespaced_pod_exec, 'one', 'default', command=['sh', '-c', 'echo oops >&2; exit 7'],
              stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
resp.run_forever(timeout=20)
print(json.dumps({'code': resp.returncode, 'stderr': resp.read_stderr()}))
`);
    expect(r.stderr).toBe('');
    const [first, second] = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(first).toEqual({ out: 'blue\n' });
    expect(second).toEqual({ code: 7, stderr: 'oops\n' });
  });

  it('writes stdin through the stream and reads it back', async () => {
    const r = await python(`
resp = stream(api.connect_get_namespaced_pod_exec, 'one', 'default', command=['tar', 'xf', '-', '-C', '/tmp'],
              stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
import tarfile, io
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode='w') as t:
    data = b'from python\\n'
    info = tarfile.TarInfo('py.txt'); info.size = len(data)
    t.addfile(info, io.BytesIO(data))
resp.write_stdin(buf.getvalue().decode('latin1'))
resp.close()
out = stream(api.connect_get_namespaced_pod_exec, 'one', 'default', command=['cat', '/tmp/py.txt'],
             stderr=True, stdin=False, stdout=True, tty=False)
print(json.dumps(out))
`);
    // v4 has no way to close stdin: the client closing the connection ends it, which ends tar's input.
    expect(JSON.parse(r.stdout.trim().split('\n').pop() ?? 'null')).toBe('from python\n');
  });

  it('reads logs, and gets the apiserver errors for a multi-container pod and an unknown one', async () => {
    const r = await python(`
print(json.dumps(api.read_namespaced_pod_log('one', 'default')))
print(json.dumps(api.read_namespaced_pod_log('one', 'default', tail_lines=1, timestamps=True)))
for kw in [dict(name='two'), dict(name='two', container='c'), dict(name='nope')]:
    try:
        api.read_namespaced_pod_log(namespace='default', **kw)
    except client.exceptions.ApiException as e:
        print(json.dumps({'status': e.status, 'body': json.loads(e.body)}))
`);
    expect(r.stderr).toBe('');
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toContain('kubeloop: started container "app" (image "nginx:1.27")\n');
    expect(lines[1]).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z kubeloop: container "app" is ready\n$/,
    );
    expect(lines[2]).toMatchObject({
      status: 400,
      body: {
        reason: 'BadRequest',
        message: 'a container name must be specified for pod two, choose one of: [a b]',
      },
    });
    expect(lines[3]).toMatchObject({
      status: 400,
      body: { message: 'container c is not valid for pod two' },
    });
    expect(lines[4]).toMatchObject({
      status: 404,
      body: { reason: 'NotFound', message: 'pods "nope" not found' },
    });
  });
});

/**
 * Runs an ES module with @kubernetes/client-node in a child process: under vitest its `ws`
 * dependency resolves to the browser build (no WebSocket in Node 20), in plain Node to `ws`.
 */
function nodeScript(code: string): Promise<{ stdout: string; stderr: string; code: number }> {
  const script = `
import * as k8s from '@kubernetes/client-node';
import { PassThrough, Writable } from 'node:stream';
const kc = new k8s.KubeConfig();
kc.loadFromFile(${JSON.stringify(kubeconfigPath)});
const collect = () => {
  const chunks = [];
  const stream = new Writable({ write(c, _e, cb) { chunks.push(Buffer.from(c)); cb(); } });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
};
const exec = (...args) => new Promise((resolve, reject) => new k8s.Exec(kc).exec(...args, resolve).catch(reject));
${code}
`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { timeout: 60_000, cwd: process.cwd() },
      (err, stdout, stderr) => {
        resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 });
      },
    );
  });
}

describe('@kubernetes/client-node', () => {
  it('Exec streams stdout and stderr and reports the Status', async () => {
    const r = await nodeScript(`
const out = collect(), err = collect();
const status = await exec('default', 'one', 'app', ['sh', '-c', 'echo hi; echo bad >&2; exit 2'], out.stream, err.stream, null, false);
console.log(JSON.stringify({ out: out.text(), err: err.text(), status }));
`);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({
      out: 'hi\n',
      err: 'bad\n',
      status: {
        status: 'Failure',
        reason: 'NonZeroExitCode',
        details: { causes: [{ reason: 'ExitCode', message: '2' }] },
      },
    });
  });

  it('Exec sends stdin and closes it (v5), so cat ends', async () => {
    const r = await nodeScript(`
const out = collect();
const input = new PassThrough();
const done = exec('default', 'one', 'app', ['cat'], out.stream, null, input, false);
input.end('piped through cat\\n');
const status = await done;
console.log(JSON.stringify({ out: out.text(), status }));
`);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ out: 'piped through cat\n', status: { status: 'Success' } });
  });

  it('Log reads a container log, and follows it until the container writes more', async () => {
    const r = await nodeScript(`
const log = new k8s.Log(kc);
const out = collect();
await new Promise((resolve, reject) => { out.stream.on('finish', resolve); log.log('default', 'one', 'app', out.stream, { follow: false }).catch(reject); });
const followed = new PassThrough();
let seen = '';
followed.on('data', (d) => { seen += d.toString(); });
const req = await log.log('default', 'one', 'app', followed, { follow: true, tailLines: 1 });
await exec('default', 'one', 'app', ['sh', '-c', 'echo written later > /proc/1/fd/1'], collect().stream, null, null, false);
const deadline = Date.now() + 10000;
while (!seen.includes('written later') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
req.abort();
console.log(JSON.stringify({ all: out.text(), seen }));
`);
    expect(r.stderr).toBe('');
    const { all, seen } = JSON.parse(r.stdout);
    expect(all).toContain('kubeloop: container "app" is ready\n');
    expect(seen).toBe('kubeloop: container "app" is ready\nwritten later\n');
  });
});
