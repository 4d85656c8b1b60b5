/**
 * The sample-controller end to end, driven by the real kubectl against the local control plane
 * (with a simulated node, so that the Deployment's pods run and become Ready). The operator serves
 * its webhooks as main.ts does; the CRD names its `/convert`, since kubectl reads and writes Foo at
 * v1, the preferred version, while it is stored at v1alpha1.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import type { Deployment } from 'kubeloop/client';
import { Client, CustomResourceDefinition } from 'kubeloop/client';
import { withConversionWebhook } from 'kubeloop/manifests';
import type { Manager } from 'kubeloop/runtime';
import type { WebhookServer } from 'kubeloop/webhook';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Foo } from '../src/api/foo.js';
import { ERR_RESOURCE_EXISTS } from '../src/controller/foo.js';
import { createManager } from '../src/operator.js';
import { webhookServer } from '../src/webhooks.js';

let env: KubectlEnv;
let client: Client;
let manager: Manager;
let done: Promise<void>;
let hooks: WebhookServer;
let certDir: string;

const fooYaml = (name: string, deploymentName: string, replicas: number) => `
apiVersion: samplecontroller.k8s.io/v1alpha1
kind: Foo
metadata:
  name: ${name}
spec:
  deploymentName: ${deploymentName}
  replicas: ${replicas}
`;

async function getJson<T>(args: string[]): Promise<T | undefined> {
  const r = await env.run([...args, '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.stdout) as T) : undefined;
}

beforeAll(async () => {
  env = await startKubectlEnv({ nodes: { count: 1 } });
  client = new Client(env.cp.clientConfig);
  certDir = await mkdtemp(join(tmpdir(), 'kubeloop-sample-e2e-'));
  hooks = webhookServer({ port: 0, certDir });
  await hooks.listen();
  await client.apply(
    {
      ...withConversionWebhook(Foo.crd(), { target: { url: hooks.url }, caBundle: hooks.caBundle }),
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
    } as CustomResourceDefinition,
    { fieldManager: 'test', force: true },
  );
  await eventually(async () => {
    const crd = await client.get(CustomResourceDefinition, 'foos.samplecontroller.k8s.io');
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
  manager = createManager({
    client,
    logger: pino({ level: process.env.KUBELOOP_TEST_LOG ?? 'silent' }),
    healthProbeAddress: '127.0.0.1:0',
    metricsAddress: '127.0.0.1:0',
    handleSignals: false,
    gracefulShutdownTimeoutMs: 5_000,
    leaderElection: {
      id: 'sample-controller-test',
      leaseDurationMs: 1_500,
      renewDeadlineMs: 1_000,
      retryPeriodMs: 200,
    },
  });
  hooks.setupWithManager(manager);
  done = manager.start();
  done.catch(() => undefined);
  await manager.ready();
});

afterAll(async () => {
  await manager?.stop();
  await done;
  await hooks?.close();
  await env?.stop();
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

describe('sample-controller', () => {
  it('creates an owned Deployment, reports its available replicas, scales it, and is garbage-collected with it', async () => {
    await env.ok(['apply', '-f', '-'], { input: fooYaml('example-foo', 'example-foo', 2) });
    const foo = await eventually(() => getJson<Foo>(['get', 'foo', 'example-foo']));

    const dep = await eventually(() => getJson<Deployment>(['get', 'deployment', 'example-foo']));
    expect(dep.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'samplecontroller.k8s.io/v1alpha1',
        kind: 'Foo',
        name: 'example-foo',
        uid: foo.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(dep.spec?.replicas).toBe(2);

    // The pods run and become Ready, and the Foo's status follows the Deployment's.
    await eventually(
      async () => {
        const out = await env.ok([
          'get',
          'pods',
          '-l',
          'controller=example-foo',
          '-o',
          'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
        ]);
        return (
          out
            .trim()
            .split('\n')
            .filter((s) => s === 'True').length === 2
        );
      },
      30_000,
      'two Ready pods',
    );
    await eventually(
      async () => (await getJson<Foo>(['get', 'foo', 'example-foo']))?.status?.availableReplicas === 2,
      30_000,
      'status.availableReplicas = 2',
    );

    // At v1 (kubectl's preferred version), converted to the stored v1alpha1 by the operator.
    await env.ok([
      'patch',
      'foo',
      'example-foo',
      '--type=merge',
      '-p',
      '{"spec":{"deployment":{"replicas":3}}}',
    ]);
    await eventually(
      async () => (await getJson<Deployment>(['get', 'deployment', 'example-foo']))?.spec?.replicas === 3,
      30_000,
      'the Deployment scaled to 3',
    );
    await eventually(
      async () => (await getJson<Foo>(['get', 'foo', 'example-foo']))?.status?.availableReplicas === 3,
      30_000,
      'status.availableReplicas = 3',
    );
    expect(await env.ok(['get', 'foo', 'example-foo'])).toMatch(/example-foo\s+example-foo\s+3\s+3/);

    await env.ok(['delete', 'foo', 'example-foo']);
    await eventually(
      async () => (await env.run(['get', 'deployment', 'example-foo'])).stderr.includes('NotFound'),
      30_000,
      'the Deployment garbage-collected',
    );
  });

  it('leaves a Deployment it does not own alone and says so with an ErrResourceExists event', async () => {
    await env.ok(['create', 'deployment', 'taken', '--image=nginx', '--replicas=1']);
    const before = await eventually(() => getJson<Deployment>(['get', 'deployment', 'taken']));
    await env.ok(['apply', '-f', '-'], { input: fooYaml('intruder', 'taken', 4) });

    const note = await eventually(
      async () => {
        const out = await env.ok([
          'get',
          'events.v1.events.k8s.io',
          '--field-selector',
          'regarding.name=intruder',
          '-o',
          'jsonpath={range .items[*]}{.type} {.reason} {.note}{"\\n"}{end}',
        ]);
        return out.split('\n').find((l) => l.includes(ERR_RESOURCE_EXISTS));
      },
      30_000,
      'the ErrResourceExists event',
    );
    expect(note).toBe('Warning ErrResourceExists Resource "taken" already exists and is not managed by Foo');

    const after = await getJson<Deployment>(['get', 'deployment', 'taken']);
    expect(after?.metadata?.ownerReferences).toBeUndefined();
    expect(after?.spec?.replicas).toBe(1);
    expect(after?.metadata?.uid).toBe(before.metadata?.uid);
    expect((await getJson<Foo>(['get', 'foo', 'intruder']))?.status?.availableReplicas).toBeUndefined();
  });

  it('rejects an invalid Foo with the schema error Kubernetes gives', async () => {
    const r = await env.run(['apply', '-f', '-'], { input: fooYaml('too-many', 'too-many', 11) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'The Foo "too-many" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    );
    expect((await env.run(['get', 'deployment', 'too-many'])).stderr).toContain('NotFound');
  });
});
