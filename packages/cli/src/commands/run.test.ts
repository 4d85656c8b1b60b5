import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ControlPlane, startTestEnv } from '@kubeloop/server';
import { Client, type KubeObject } from 'kubeloop/client';
import { afterEach, describe, expect, it } from 'vitest';

// The CLI is tested as a user runs it: the built bin and example (`npm test` builds first).
const bin = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));
const example = fileURLToPath(new URL('../../../../examples/sample-controller', import.meta.url));

describe('kubeloop run', () => {
  let cp: ControlPlane | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs the CRDs with --install, runs the operator on the kubeconfig, and stops on SIGINT', async () => {
    cp = await startTestEnv({ nodes: { count: 1 } });
    dir = mkdtempSync(join(tmpdir(), 'kubeloop-run-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, cp.kubeconfig, { mode: 0o600 });
    const child = spawn(
      process.execPath,
      [
        bin,
        'run',
        example,
        '--install',
        '--no-build',
        '--kubeconfig',
        kubeconfig,
        '--',
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const waiters: Array<() => void> = [];
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (const w of waiters) w();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const waitFor = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (re.test(out)) resolve();
        };
        waiters.push(check);
        check();
        exited.then((code) => reject(new Error(`kubeloop run exited with ${code}:\n${out}`)));
      });
    try {
      await waitFor(/caches synced/);
      const client = new Client(cp.clientConfig);
      const foo: KubeObject & { spec: unknown } = {
        apiVersion: 'samplecontroller.k8s.io/v1alpha1',
        kind: 'Foo',
        metadata: { name: 'from-run', namespace: 'default' },
        spec: { deploymentName: 'from-run', replicas: 1 },
      };
      await client.create(foo);
      await waitFor(/Foo default\/from-run: updated status {2}availableReplicas=1/);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});
