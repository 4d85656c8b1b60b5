/**
 * The sample operator deployed in-cluster to the local control plane, with no Docker: its image
 * built by `kubeloop build` into a local image store, its generated manifests (config/default:
 * CRD, RBAC, the Deployment) applied with kubectl with the image set to `kubeloop.local/…` and two
 * replicas. Its pods run as processes under their ServiceAccount token and in-cluster config, and
 * elect a leader; the leader reconciles a Foo; deleting it hands over to the other replica.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually, type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { Client, Lease, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Foo } from '../src/api/foo.js';
import { withoutCertManager } from './cluster-support.js';

const PROJECT = resolve(__dirname, '..');
const CLI = resolve(__dirname, '../../../packages/cli/dist/bin.js');
const NS = 'sample-controller-system';
const LEASE = 'sample-controller.samplecontroller.k8s.io';

let env: KubectlEnv;
let client: Client;
let store: string;
let applyToReadyMs = 0;
/** The content tag of the build (`kubeloop.local/sample-controller:sha-…`). */
let built = '';

beforeAll(async () => {
  store = mkdtempSync(join(tmpdir(), 'kubeloop-images-'));
  // dist/ is the workspace build's: store it as it is.
  const out = execFileSync(
    process.execPath,
    [CLI, 'build', PROJECT, '--no-compile', '--store', store, '--name', 'sample-controller'],
    { encoding: 'utf8' },
  );
  built = out.split('\n')[0] ?? '';
  env = await startKubectlEnv({ nodes: { count: 1, processes: { imageStore: store } } });
  client = new Client(env.cp.clientConfig);
  const manifests = withoutCertManager(await env.ok(['kustomize', join(PROJECT, 'config/default')]))
    .replace('image: sample-controller:latest', 'image: kubeloop.local/sample-controller:latest')
    .replace(/replicas: 1\n/, 'replicas: 2\n');
  const start = Date.now();
  await env.ok(['apply', '-f', '-'], { input: manifests });
  await eventually(
    async () => {
      const pods = await client.api(Pod, NS).list();
      return pods.items.some((p) =>
        p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
    },
    30_000,
    'a ready operator pod',
  );
  applyToReadyMs = Date.now() - start;
}, 120_000);
afterAll(async () => {
  await client?.close();
  await env?.stop();
  rmSync(store, { recursive: true, force: true });
});

/** The pod holding the leader Lease (identities are `<hostname>_<uuid>`, the hostname the pod's). */
async function leader(): Promise<string> {
  const lease = await client.api(Lease, NS).get(LEASE);
  return (lease.spec?.holderIdentity ?? '').split('_')[0] ?? '';
}

describe('the sample operator deployed as process-backed pods', () => {
  it('runs two replicas that elect one leader, which reconciles a Foo', async () => {
    process.stdout.write(`apply to a ready operator pod: ${applyToReadyMs} ms\n`);
    const pods = await eventually(
      async () => {
        const list = await client.api(Pod, NS).list();
        const ready = list.items.filter((p) =>
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
        return ready.length === 2 ? ready : undefined;
      },
      30_000,
      'two ready replicas',
    );
    for (const p of pods) expect(p.status?.podIP).toMatch(/^127\./);
    const holder = await eventually(() => leader().catch(() => ''), 30_000, 'a leader');
    expect(pods.map((p) => p.metadata?.name)).toContain(holder);

    await env.ok(['apply', '-f', join(PROJECT, 'config/samples/samplecontroller_v1alpha1_foo.yaml')]);
    await eventually(
      async () => {
        const foo = await client.api(Foo, 'default').get('example-foo');
        return foo.status?.availableReplicas === 1;
      },
      30_000,
      'the Foo reconciled',
    );
    const logs = await env.ok(['logs', '-n', NS, holder]);
    expect(logs).toContain('became leader');
  });

  it('hands over to the other replica when the leader pod is deleted', async () => {
    const before = await leader();
    await env.ok(['delete', 'pod', '-n', NS, before, '--wait=false']);
    const after = await eventually(
      async () => {
        const now = await leader().catch(() => '');
        return now && now !== before ? now : undefined;
      },
      // The lease duration (15 s) plus a retry period, should the old leader not release it.
      20_000,
      'a new leader',
    );
    expect(after).not.toBe(before);
    // The new leader reconciles: a Foo made now gets its Deployment.
    await client.api(Foo, 'default').create({
      apiVersion: 'samplecontroller.k8s.io/v1alpha1',
      kind: 'Foo',
      metadata: { name: 'after-handover' },
      spec: { deploymentName: 'after-handover', replicas: 1 },
    });
    await eventually(
      async () => {
        const foo = await client.api(Foo, 'default').get('after-handover');
        return foo.status?.availableReplicas === 1;
      },
      30_000,
      'the Foo reconciled by the new leader',
    );
  });

  it('rolls out a new build through the Deployment controller', async () => {
    expect(built).toMatch(/^kubeloop\.local\/sample-controller:sha-[0-9a-f]{12}$/);
    await env.ok([
      'set',
      'image',
      '-n',
      NS,
      'deployment/sample-controller-controller-manager',
      `manager=${built}`,
    ]);
    await env.ok(
      ['rollout', 'status', '-n', NS, 'deployment/sample-controller-controller-manager', '--timeout=90s'],
      {
        timeoutMs: 100_000,
      },
    );
    const pods = await eventually(
      async () => {
        const list = await client.api(Pod, NS).list();
        const live = list.items.filter((p) => !p.metadata?.deletionTimestamp);
        return live.length === 2 && live.every((p) => p.spec?.containers[0]?.image === built)
          ? live
          : undefined;
      },
      30_000,
      'the new pods alone',
    );
    const holder = await eventually(
      async () => {
        const h = await leader().catch(() => '');
        return pods.some((p) => p.metadata?.name === h) ? h : undefined;
      },
      30_000,
      'a leader among the new pods',
    );
    expect(holder).toBeTruthy();
  }, 120_000);
});
