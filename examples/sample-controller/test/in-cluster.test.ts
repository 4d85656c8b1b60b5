/**
 * The sample operator deployed in-cluster to the local control plane, with no Docker, as
 * kubebuilder's `make deploy` does: `kubeloop deploy` compiles it, stores its build in a local
 * image store (`kubeloop.local/…:sha-…`, as `kubeloop build`), renders config/default with that
 * image (two replicas, declared in its src/manifests.ts) and applies it with its generated RBAC.
 * Its pods run as processes under their ServiceAccount token and in-cluster config, and elect a
 * leader; the leader reconciles a Foo; deleting it hands over to the other replica; deploying a
 * changed build rolls it out through the Deployment controller.
 *
 * The project is a copy of the sample in a scratch folder (its node_modules the workspace's), as
 * deploy writes config/ and dist/ the way `make deploy` does.
 */
import { execFile } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually, type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { Client, Lease, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Foo } from '../src/api/foo.js';

const SAMPLE = resolve(__dirname, '..');
const ROOT = resolve(__dirname, '../../..');
const CLI = resolve(ROOT, 'packages/cli/dist/bin.js');
const NS = 'sample-controller-system';
const LEASE = 'sample-controller.samplecontroller.k8s.io';
const DEPLOYMENT = 'deployment/sample-controller-controller-manager';

let env: KubectlEnv;
let client: Client;
let store: string;
let project: string;
let deployToReadyMs = 0;
let deployCommandMs = 0;
/** The image the first deploy stored and deployed (`kubeloop.local/…:sha-…`). */
let firstImage = '';

/** A copy of the sample that compiles on its own (a tsconfig without the workspace's project references). */
function copySample(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'kubeloop-deploy-sample-')));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const f of ['package.json', 'src', 'scripts', 'config'])
    cpSync(join(SAMPLE, f), join(dir, f), { recursive: true });
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.base.json'),
      compilerOptions: { rootDir: 'src', outDir: 'dist', tsBuildInfoFile: 'dist/.tsbuildinfo' },
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.test.ts'],
    }),
  );
  // Two replicas, as a user would declare them for leader election to matter; without the
  // webhooks (no cert-manager here, and these tests are about the operator's pods): none in
  // config/, and ENABLE_WEBHOOKS=false as kubebuilder runs a manager without them.
  const manifests = join(dir, 'src/manifests.ts');
  const text = readFileSync(manifests, 'utf8');
  writeFileSync(
    manifests,
    text
      .replace(
        'samples: [sampleFoo],',
        "samples: [sampleFoo],\n  manager: { replicas: 2, env: [{ name: 'ENABLE_WEBHOOKS', value: 'false' }] },",
      )
      .replace(/\n {2}webhooks,\n/, '\n'),
  );
  expect(readFileSync(manifests, 'utf8')).not.toBe(text);
  return dir;
}

/** `kubeloop deploy` of the project to the test control plane; its output. */
function deploy(): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      [CLI, 'deploy', project, '--kubeconfig', env.kubeconfigPath],
      { env: { ...process.env, KUBELOOP_IMAGE_STORE: store }, timeout: 90_000 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolvePromise(stdout),
    );
  });
}

const imageOf = (output: string) => /^image (\S+)$/m.exec(output)?.[1] ?? '';

beforeAll(async () => {
  store = mkdtempSync(join(tmpdir(), 'kubeloop-images-'));
  project = copySample();
  env = await startKubectlEnv({ nodes: { count: 1, processes: { imageStore: store } } });
  client = new Client(env.cp.clientConfig);
  const start = Date.now();
  firstImage = imageOf(await deploy());
  deployCommandMs = Date.now() - start;
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
  deployToReadyMs = Date.now() - start;
}, 150_000);
afterAll(async () => {
  await client?.close();
  await env?.stop();
  rmSync(store, { recursive: true, force: true });
  if (project) rmSync(project, { recursive: true, force: true });
});

/** The pod holding the leader Lease (identities are `<hostname>_<uuid>`, the hostname the pod's). */
async function leader(): Promise<string> {
  const lease = await client.api(Lease, NS).get(LEASE);
  return (lease.spec?.holderIdentity ?? '').split('_')[0] ?? '';
}

describe('the sample operator deployed as process-backed pods', () => {
  it('runs two replicas that elect one leader, which reconciles a Foo', async () => {
    process.stdout.write(
      `kubeloop deploy (a first compile included) to a ready operator pod: ${deployToReadyMs} ms, of which the command ${deployCommandMs} ms\n`,
    );
    expect(firstImage).toMatch(/^kubeloop\.local\/example-sample-controller:sha-[0-9a-f]{12}$/);
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

    await env.ok(['apply', '-f', join(project, 'config/samples/samplecontroller_v1alpha1_foo.yaml')]);
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

  it('rolls out a changed build, deployed again, through the Deployment controller', async () => {
    appendFileSync(join(project, 'src/main.ts'), '// a change of the build\n');
    const built = imageOf(await deploy());
    expect(built).toMatch(/^kubeloop\.local\/example-sample-controller:sha-[0-9a-f]{12}$/);
    expect(built).not.toBe(firstImage);
    await env.ok(['rollout', 'status', '-n', NS, DEPLOYMENT, '--timeout=90s'], { timeoutMs: 100_000 });
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
  }, 150_000);
});
