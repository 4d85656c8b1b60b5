import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestEnv, type TestEnv } from '@kubeloop/server';
import { Client, ClusterRoleBinding, CustomResourceDefinition, type KubeObject } from 'kubeloop/client';
import { afterEach, describe, expect, it } from 'vitest';

// The CLI is tested as a user runs it: the built bin and example (`npm test` builds first).
const bin = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));
const example = fileURLToPath(new URL('../../../../examples/sample-controller', import.meta.url));

/** The ServiceAccount config/default gives the sample's manager. */
const OPERATOR = 'system:serviceaccount:sample-controller-system:sample-controller-controller-manager';

describe('kubeloop run', () => {
  let cp: TestEnv | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `kubeloop run <example> --install --no-build …` against a fresh env; who makes which request is recorded. */
  async function runExample(extra: string[]) {
    cp = await startTestEnv({ nodes: { count: 1 } });
    // Who created the Foo's Deployment, as the server authenticated it.
    const creators: string[] = [];
    cp.audit.subscribe(({ user, info }) => {
      if (info.verb === 'create' && info.resource === 'deployments') creators.push(user.username);
    });
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
        ...extra,
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
    const reconcileOneFoo = async (name: string) => {
      await waitFor(/caches synced/);
      const client = new Client(cp!.clientConfig);
      const foo: KubeObject & { spec: unknown } = {
        apiVersion: 'samplecontroller.k8s.io/v1alpha1',
        kind: 'Foo',
        metadata: { name, namespace: 'default' },
        spec: { deploymentName: name, replicas: 1 },
      };
      await client.create(foo);
      await client.close();
      // Its status written: reconciled (whether the pods run yet is the node's business).
      await waitFor(new RegExp(`Foo default/${name}: updated status {2}availableReplicas=`));
    };
    return { child, exited, waitFor, reconcileOneFoo, creators, output: () => out };
  }

  it('installs the CRDs with --install, runs the operator under its own ServiceAccount on a kubeloop plane, and stops on SIGINT', async () => {
    const run = await runExample([]);
    try {
      await run.waitFor(new RegExp(`running the operator as ${OPERATOR}`));
      await run.reconcileOneFoo('from-run');
      // The RBAC of config/rbac, named and placed as config/default does.
      const client = new Client(cp!.clientConfig);
      const binding = await client.get(ClusterRoleBinding, 'sample-controller-manager-rolebinding');
      expect(binding.roleRef.name).toBe('sample-controller-manager-role');
      expect(binding.subjects).toEqual([
        {
          kind: 'ServiceAccount',
          name: 'sample-controller-controller-manager',
          namespace: 'sample-controller-system',
        },
      ]);
      expect(run.creators).toEqual([OPERATOR]);
      // The sample has webhooks: off against a cluster, said with the reason, and the CRD
      // installed without a conversion webhook nothing would answer.
      expect(run.output()).toContain(
        "webhooks: off (ENABLE_WEBHOOKS=false). A cluster's API server cannot call",
      );
      const crd = await client.get(CustomResourceDefinition, 'foos.samplecontroller.k8s.io');
      expect(crd.spec.conversion?.strategy).toBe('None');
      await client.close();
    } finally {
      run.child.kill('SIGINT');
    }
    expect(await run.exited).toBe(0);
  });

  it('runs the operator with the kubeconfig credentials with --as-admin', async () => {
    const run = await runExample(['--as-admin']);
    try {
      await run.reconcileOneFoo('as-admin');
      expect(run.creators).toEqual(['kubeloop-admin']);
      expect(run.output()).not.toContain('running the operator as');
    } finally {
      run.child.kill('SIGINT');
    }
    expect(await run.exited).toBe(0);
  });
});
