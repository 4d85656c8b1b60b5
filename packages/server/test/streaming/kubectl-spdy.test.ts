/**
 * `kubectl exec`, `cp` and `attach` over SPDY/3.1: kubectl 1.32 with
 * KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false (the name kubectl's cmdutil.RemoteCommandWebsockets
 * reads) uses client-go's SPDY executor only, as Go operators and older kubectl do.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATE_ANNOTATION } from '../../src/index.js';
import { manifest } from '../e2e/support.js';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;

beforeAll(async () => {
  // startKubectlEnv copies the environment kubectl runs with once, here.
  const previous = process.env.KUBECTL_REMOTE_COMMAND_WEBSOCKETS;
  process.env.KUBECTL_REMOTE_COMMAND_WEBSOCKETS = 'false';
  try {
    k = await startKubectlEnv({ nodes: { count: 1, timeScale: 0.01 } });
  } finally {
    if (previous === undefined) delete process.env.KUBECTL_REMOTE_COMMAND_WEBSOCKETS;
    else process.env.KUBECTL_REMOTE_COMMAND_WEBSOCKETS = previous;
  }
  await k.ok(['apply', '-f', '-'], {
    input: manifest(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default' },
        spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'crash',
          namespace: 'default',
          annotations: { [SIMULATE_ANNOTATION]: 'crashloop' },
        },
        spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] },
      },
    ),
  });
  await k.ok(['wait', '--for=condition=Ready', 'pod/web', '--timeout=20s']);
}, 60_000);
afterAll(async () => {
  await k?.stop();
});

describe('kubectl exec over SPDY', () => {
  it('runs echo, upgrading a POST to SPDY/3.1 with v4.channel.k8s.io', async () => {
    const r = await k.run(['exec', 'web', '-v=6', '--', 'echo', 'hi']);
    expect(r.stdout).toBe('hi\n');
    expect(r.code).toBe(0);
    // The SPDY executor POSTs the upgrade (the WebSocket one would GET it).
    expect(r.stderr).toMatch(
      /POST https:\S+\/pods\/web\/exec\?command=echo&command=hi\S* 101 Switching Protocols/,
    );
    expect(r.stderr).not.toMatch(/GET https:\S+\/exec/);
  });

  it('keeps stdout and stderr apart and exits with the command exit code and kube message', async () => {
    const r = await k.run(['exec', 'web', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toBe('err\ncommand terminated with exit code 3\n');
    expect(r.code).toBe(3);
  });

  it('feeds -i stdin to cat and ends it when kubectl closes stdin', async () => {
    const r = await k.run(['exec', '-i', 'web', '--', 'cat'], { input: 'line one\nline two\n' });
    expect(r.stdout).toBe('line one\nline two\n');
    expect(r.code).toBe(0);
    const sh = await k.run(['exec', '-i', 'web', '--', 'sh'], { input: 'echo first\nexit 4\necho never\n' });
    expect(sh.stdout).toBe('first\n');
    expect(sh.code).toBe(4);
  });

  it('reports a program that cannot start with the runtime message in an InternalError', async () => {
    const r = await k.run(['exec', 'web', '--', 'foo']);
    expect(r.stderr).toContain(
      'Internal error occurred: error executing command in container: failed to exec in container: failed to start exec',
    );
    expect(r.stderr).toContain('exec: "foo": executable file not found in $PATH: unknown');
    expect(r.code).toBe(1);
  });

  it('relays the kubelet refusal for a container that is not running', async () => {
    const r = await k.run(['exec', 'crash', '--', 'true']);
    expect(r.stderr).toContain('container not found ("app")');
    expect(r.code).not.toBe(0);
  });
});

describe('kubectl cp over SPDY', () => {
  it('copies a file in and out (tar over stdin, ended by a half-close)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cp-spdy-'));
    writeFileSync(join(dir, 'in.txt'), 'copied over spdy\n');
    await k.ok(['cp', join(dir, 'in.txt'), 'web:/tmp/in.txt']);
    expect(await k.ok(['exec', 'web', '--', 'cat', '/tmp/in.txt'])).toBe('copied over spdy\n');
    await k.ok(['cp', 'web:/tmp/in.txt', join(dir, 'out.txt')]);
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('copied over spdy\n');
  });

  it('keeps a large binary file intact both ways', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cp-spdy-'));
    const data = randomBytes(3 * 1024 * 1024 + 77);
    writeFileSync(join(dir, 'blob.bin'), data);
    await k.ok(['cp', join(dir, 'blob.bin'), 'web:/tmp/blob.bin'], { timeoutMs: 60_000 });
    await k.ok(['cp', 'web:/tmp/blob.bin', join(dir, 'back.bin')], { timeoutMs: 60_000 });
    expect(readFileSync(join(dir, 'back.bin')).equals(data)).toBe(true);
  });
});

describe('kubectl attach over SPDY', () => {
  it('streams what the container writes from then on', async () => {
    const a = k.spawn(['attach', 'web']);
    await eventually(async () => {
      await k.ok(['exec', 'web', '--', 'sh', '-c', 'echo attached > /proc/1/fd/1']);
      return a.output().includes('attached\n');
    });
    const r = await a.stop();
    expect(r.stderr).not.toContain('unable to upgrade');
  });
});
