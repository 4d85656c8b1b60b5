/**
 * FooBar on a local control plane, every lesson of seed 000 as a test: the schema refuses a
 * FooBar without a target; an outage of the external registry is retried, a refusal is a
 * terminal error (one attempt, a Warning Event, Ready=False) until the spec changes; deleting a
 * FooBar waits for the registry's cleanup, through an outage; the status write that makes a
 * FooBar Ready triggers no reconcile; the internal FooBarTask does the work; a FooBar created
 * at v1 is stored at v2 and read at either, converted by the operator's webhook. The operator
 * runs under the ServiceAccount of its generated RBAC, which the last test finds minimal.
 */
import { startTestEnv, type TestEnv } from '@kubeloop/server/testing';
import { Client, CustomResourceDefinition, EventsV1Event } from 'kubeloop/client';
import { findCondition } from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FooBarTask } from '../src/api/test/v1/foobartask.js';
import { FooBar, FooBarV1 } from '../src/api/test/v2/foobar.js';
import { TASK_FINALIZER } from '../src/controller/foobar.js';
import { REGISTRY_FINALIZER } from '../src/controller/foobartask.js';
import {
  applyAsAdmin,
  eventually,
  generatedGrants,
  generatedRbac,
  installCrds,
  OPERATOR_USER,
  type RunningOperator,
  type RunningWebhooks,
  recordRequests,
  startOperator,
  startWebhooks,
} from './env.js';

let env: TestEnv;
let admin: Client;
let webhooks: RunningWebhooks;
let op: RunningOperator;
let recorder: ReturnType<typeof recordRequests>;
beforeAll(async () => {
  env = await startTestEnv({ authorizationMode: 'RBAC' });
  admin = new Client(env.clientConfig);
  webhooks = await startWebhooks();
  await installCrds(env, webhooks.server);
  await applyAsAdmin(env, generatedRbac());
  recorder = recordRequests(env, OPERATOR_USER);
  op = await startOperator(env);
  await eventually(() => op.manager.isLeader, 10_000, 'the operator to lead');
});
afterAll(async () => {
  await op?.stop();
  recorder?.stop();
  await webhooks?.stop();
  await admin?.close();
  await env?.stop();
});

const NS = 'default';
const v1 = (name: string, spec: FooBarV1['spec']): FooBarV1 => ({
  apiVersion: 'test.example.com/v1',
  kind: 'FooBar',
  metadata: { name, namespace: NS },
  spec,
});
const v2 = (name: string, spec: FooBar['spec']): FooBar => ({
  apiVersion: 'test.example.com/v2',
  kind: 'FooBar',
  metadata: { name, namespace: NS },
  spec,
});
const getFooBar = (name: string) => admin.get(FooBar, name, { namespace: NS });
const readyOf = async (name: string) => findCondition((await getFooBar(name)).status?.conditions, 'Ready');

/** Waits until the FooBar's Ready condition has `reason`, for its current generation. */
async function waitReady(name: string, reason: string): Promise<void> {
  await eventually(
    async () => {
      const fb = await getFooBar(name);
      const ready = findCondition(fb.status?.conditions, 'Ready');
      return fb.status?.observedGeneration === fb.metadata.generation && ready?.reason === reason;
    },
    20_000,
    `${name} Ready with reason ${reason}`,
  );
}

/**
 * Creates a FooBar and waits until it is Ready: every event of FooBars the API server sent
 * before its creation has reached the controller (one watch, in order) and, the queue being
 * first in first out, started its reconcile if it made one.
 */
let barriers = 0;
async function barrier(): Promise<void> {
  const name = `barrier-${++barriers}`;
  await admin.create(v2(name, { target: { name: `${name}.example.com` } }));
  await waitReady(name, 'Registered');
}

/** The reasons of the Events about an object. */
async function reasonsAbout(kind: string, name: string): Promise<string[]> {
  const events = await admin.api(EventsV1Event, NS).list();
  return events.items
    .filter((e) => e.regarding?.kind === kind && e.regarding?.name === name)
    .map((e) => e.reason ?? '');
}

describe('the schema (seed 000 3.1: validation instead of a cache that never syncs)', () => {
  it('refuses a FooBar without a target, at either version', async () => {
    const noTarget = (await admin
      .create({ ...v1('no-target', { target: 'x' }), spec: { type: 'http' } } as unknown as FooBarV1)
      .catch((e: Error) => e)) as Error;
    expect(noTarget.message).toContain('spec.target: Required value');
    const noName = (await admin
      .create({
        ...v2('no-name', { target: { name: 'x' } }),
        spec: { target: { type: 'tcp' } },
      } as unknown as FooBar)
      .catch((e: Error) => e)) as Error;
    expect(noName.message).toContain('spec.target.name: Required value');
  });
});

describe('the internal FooBarTask and the status (seed 000 3.4, 3.5)', () => {
  it('registers a FooBar through an owned FooBarTask, and reports it Ready with observedGeneration', async () => {
    await admin.create(v1('web', { target: 'web.example.com', type: 'tcp' }));
    await waitReady('web', 'Registered');
    const fb = await getFooBar('web');
    expect(fb.status?.task).toBe('web');
    expect(fb.metadata.finalizers).toEqual([TASK_FINALIZER]);
    const task = await admin.get(FooBarTask, 'web', { namespace: NS });
    expect(task.spec).toEqual({ target: 'web.example.com', type: 'tcp' });
    expect(task.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'FooBar',
      uid: fb.metadata.uid,
      controller: true,
    });
    expect(task.metadata?.finalizers).toEqual([REGISTRY_FINALIZER]);
    expect(op.registry.get('default/web')).toEqual({ target: 'web.example.com', type: 'tcp' });
    expect(await reasonsAbout('FooBar', 'web')).toContain('Created');
    expect(await reasonsAbout('FooBarTask', 'web')).toContain('Registered');
  });

  it('makes no reconcile of a status write (only spec changes pass): zero', async () => {
    await barrier();
    const before = op.reconcilesOf('web');
    expect(before).toBeGreaterThan(0);
    // A status write, as the controller's own (or a `kubectl edit --subresource=status`):
    // the FooBar's resourceVersion moves, its generation does not.
    const fb = await getFooBar('web');
    const written = await admin.patchStatus(fb, { task: 'edited' } as never);
    expect(written.metadata?.resourceVersion).not.toBe(fb.metadata.resourceVersion);
    expect(written.metadata?.generation).toBe(fb.metadata.generation);
    await barrier();
    expect(op.reconcilesOf('web')).toBe(before);
    // Not corrected, then, until the next spec change (the next test's).
    expect((await getFooBar('web')).status?.task).toBe('edited');
  });

  it('follows a spec change at v2 into the task and the registry, observedGeneration following', async () => {
    const fb = await getFooBar('web');
    await admin.patch(fb, { spec: { target: { name: 'www.example.com' } } });
    await eventually(
      async () => op.registry.get('default/web')?.target === 'www.example.com',
      20_000,
      'the new target',
    );
    await waitReady('web', 'Registered');
    expect((await getFooBar('web')).status).toMatchObject({ observedGeneration: 2, task: 'web' });
    expect(op.registry.get('default/web')).toEqual({ target: 'www.example.com', type: 'tcp' });
  });
});

describe('errors (seed 000 3.2: only what is worth retrying is retried)', () => {
  it('retries an outage of the registry until it answers', async () => {
    op.registry.failNext('register', 'default/flaky', 2);
    await admin.create(v2('flaky', { target: { name: 'flaky.example.com' } }));
    await waitReady('flaky', 'Registered');
    expect(op.registry.callsOf('default/flaky')).toEqual([
      'register:unavailable',
      'register:unavailable',
      'register:ok',
    ]);
  });

  it('does not retry a refusal: one attempt, a TerminalError, a Warning Event, Ready=False; a new spec is tried', async () => {
    await admin.create(v1('udp', { target: 'dns.example.com', type: 'udp' }));
    await waitReady('udp', 'Refused');
    expect((await readyOf('udp'))?.message).toBe(
      'the registry does not serve type "udp" (it serves http, tcp)',
    );
    expect(await reasonsAbout('FooBarTask', 'udp')).toContain('Refused');
    expect(await reasonsAbout('FooBar', 'udp')).toContain('Refused');
    const terminal = op.lines.find(
      (l) => l.controller === 'foobartask' && l.name === 'udp' && l.err?.type === 'TerminalError',
    );
    expect(terminal?.msg).toBe('terminal reconcile error, not retrying');
    // Retries of a failed reconcile start within milliseconds: a later FooBar's whole life is ample time.
    await barrier();
    expect(op.registry.callsOf('default/udp')).toEqual(['register:refused']);

    await admin.patch(await admin.get(FooBarV1, 'udp', { namespace: NS }), { spec: { type: 'tcp' } });
    await waitReady('udp', 'Registered');
    expect(op.registry.callsOf('default/udp')).toEqual(['register:refused', 'register:ok']);
  });
});

describe('deletion (seed 000 3.3: a finalizer for what lives outside the cluster)', () => {
  it('keeps a deleted FooBar until the registry removed its target, through an outage of the registry', async () => {
    op.registry.failNext('unregister', 'default/flaky', 2);
    await admin.delete(await getFooBar('flaky'));
    // Gone only once the registry answered: the FooBar waited for its task, the task for the registry.
    await eventually(
      async () => (await getFooBar('flaky').catch(() => undefined)) === undefined,
      20_000,
      'flaky gone',
    );
    expect(op.registry.get('default/flaky')).toBeUndefined();
    expect(op.registry.callsOf('default/flaky').slice(-3)).toEqual([
      'unregister:unavailable',
      'unregister:unavailable',
      'unregister:ok',
    ]);
    expect(await admin.get(FooBarTask, 'flaky', { namespace: NS }).catch(() => undefined)).toBeUndefined();
  });
});

describe('two versions (seed 000 3.6), converted by the webhook', () => {
  it('stores at v2 a FooBar created at v1, and serves it at both', async () => {
    const crd = await admin.get(CustomResourceDefinition, 'foobars.test.example.com');
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ['v1', true, false],
      ['v2', true, true],
    ]);
    expect(crd.status?.storedVersions).toEqual(['v2']);
    const asV2 = await getFooBar('web');
    expect(asV2.apiVersion).toBe('test.example.com/v2');
    expect(asV2.spec).toEqual({ target: { name: 'www.example.com', type: 'tcp' } });
    const asV1 = await admin.get(FooBarV1, 'web', { namespace: NS });
    expect(asV1.apiVersion).toBe('test.example.com/v1');
    expect(asV1.spec).toEqual({ target: 'www.example.com', type: 'tcp' });
    expect(asV1.status).toEqual(asV2.status);
  });
});

describe('RBAC', () => {
  it('the operator made only requests its generated RBAC grants, and used every grant', async () => {
    await op.stop();
    recorder.stop();
    expect(op.lines.filter((l) => l.msg.startsWith('forbidden: '))).toEqual([]);
    const granted = generatedGrants();
    expect([...recorder.requests].filter((r) => !granted.has(r))).toEqual([]);
    const key = (g: string) => g.slice(g.indexOf(' ') + 1);
    const unusedVerbs: Record<string, string[]> = {};
    for (const g of granted) {
      if (recorder.requests.has(g)) continue;
      const verbs = unusedVerbs[key(g)] ?? [];
      verbs.push(g.slice(0, g.indexOf(' ')));
      unusedVerbs[key(g)] = verbs;
    }
    expect(unusedVerbs).toEqual(UNUSED_VERBS);
  });
});

/**
 * The verbs of each grant the run does not use, each for a reason; a grant the generator adds
 * without a use shows up here and fails the test.
 */
const UNUSED_VERBS: Record<string, string[]> = {
  // A repeated event's series is patched onto the first; this run emits no event twice.
  'events.k8s.io events': ['patch'],
  // Read by an informer's watch-list stream (`list` is its way on servers without watch-list,
  // `get` the cache's read-your-writes fallback); the finalizer is patched in, not updated.
  'test.example.com foobars': ['get', 'list', 'update'],
  // `update` on <kind>/finalizers is what OwnerReferencesPermissionEnforcement checks before a
  // child with blockOwnerDeletion is created, or a finalizer set; kubeloop does not run that
  // admission plugin, clusters that enable it (OpenShift) do.
  'test.example.com foobars/finalizers': ['update'],
  // Any status write (`updateStatus`, `getStatus`); the operator merge-patches.
  'test.example.com foobars/status': ['get', 'update'],
  // The owned kind, read by its informer as above.
  'test.example.com foobartasks': ['get', 'list'],
  'test.example.com foobartasks/finalizers': ['update'],
  'test.example.com foobartasks/status': ['get', 'update'],
};
