/**
 * The generated RBAC of the sample operator is minimal: run under its own ServiceAccount with
 * exactly the generated roles, the operator does its whole job (a Foo's Deployment created,
 * scaled, its status and events written, leadership taken and released; no node runs the pods,
 * which are the built-in controllers' business, not the operator's), and every request it
 * makes is recorded as the server's audit stage sees it — verb, API group, resource. Every
 * (group, resource) the generated roles grant must be used by one of those requests, and every
 * request must be granted by them.
 */
import { eventually, startTestEnv, type TestEnv } from '@kubeloop/server/testing';
import { Client, Deployment, EventsV1Event } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Foo } from '../src/api/foo.js';
import {
  applyAsAdmin,
  generatedRbac,
  generatedRules,
  installFooCrd,
  OPERATOR_SA,
  OPERATOR_USER,
  recordRequests,
  startOperatorAs,
} from './rbac-support.js';

let env: TestEnv;
let admin: Client;
beforeAll(async () => {
  env = await startTestEnv();
  admin = new Client(env.clientConfig);
  await installFooCrd(env);
  await applyAsAdmin(env, generatedRbac());
});
afterAll(async () => {
  await admin?.close();
  await env?.stop();
});

const foo = (name: string, replicas: number): Foo => ({
  apiVersion: 'samplecontroller.k8s.io/v1alpha1',
  kind: 'Foo',
  metadata: { name, namespace: 'default' },
  spec: { deploymentName: name, replicas },
});

/**
 * Generated grants no request of the sample's run uses, and why they are generated all the same.
 * Anything else unused fails the test: the generator grants it for nothing.
 */
const UNUSED_BY_DESIGN: Record<string, string> = {
  'samplecontroller.k8s.io foos/finalizers':
    'update on <kind>/finalizers is what OwnerReferencesPermissionEnforcement checks before a child with blockOwnerDeletion is created; kubeloop does not run that admission plugin, clusters that enable it (OpenShift) do',
};

/**
 * The verbs of used grants that the run does not use, each for a reason of the relation that
 * grants it; a verb the generator adds without a use shows up here and fails the test.
 */
const UNUSED_VERBS: Record<string, string[]> = {
  // An informer reads by a watch-list stream; `list` is its way on servers without watch-list,
  // `get` the cache's read-your-writes fallback. `update`/`patch`: the reconciled kind's
  // finalizers and labels, which the sample does not set.
  'samplecontroller.k8s.io foos': ['get', 'list', 'update', 'patch'],
  // Any status write (`updateStatus`, `getStatus`); the sample merge-patches.
  'samplecontroller.k8s.io foos/status': ['get', 'update'],
  'samplecontroller.k8s.io foos/finalizers': ['update'],
  // An owned kind's whole life cycle; the sample updates its Deployment and lets the garbage
  // collector delete it.
  'apps deployments': ['get', 'list', 'patch', 'delete'],
  'events.k8s.io events': [],
  'coordination.k8s.io leases': [],
};

describe('the generated RBAC of the sample operator', () => {
  it('is all used by the operator at work, and covers every request it makes', async () => {
    const recorder = recordRequests(env, OPERATOR_USER);
    const op = await startOperatorAs(env, { serviceAccount: `${OPERATOR_SA.namespace}/${OPERATOR_SA.name}` });
    try {
      await op.manager.ready();
      await eventually(() => op.manager.isLeader, 10_000, 'the operator to lead');
      await admin.create(foo('minimal', 1));
      // Reconciled: its Deployment created and its status written (no node runs pods here).
      await eventually(
        async () =>
          (await admin.get(Foo, 'minimal', { namespace: 'default' })).status?.availableReplicas === 0,
        30_000,
        'status.availableReplicas written',
      );
      await admin.patch(foo('minimal', 1), { spec: { replicas: 2 } });
      await eventually(
        async () => (await admin.get(Deployment, 'minimal', { namespace: 'default' })).spec?.replicas === 2,
        30_000,
        'the Deployment scaled to 2',
      );
      // The Synced event of the second reconcile: its series patched onto the first.
      await eventually(
        async () =>
          (await admin.api(EventsV1Event, 'default').list()).items.some(
            (e) => e.regarding?.name === 'minimal' && e.reason === 'Synced' && (e.series?.count ?? 0) >= 2,
          ),
        30_000,
        'the repeated Synced event',
      );
    } finally {
      await op.stop();
      recorder.stop();
    }

    const used = new Map<string, Set<string>>();
    for (const r of recorder.requests) {
      const key = `${r.group} ${r.resource}`;
      const verbs = used.get(key) ?? new Set<string>();
      verbs.add(r.verb);
      used.set(key, verbs);
    }
    const granted = new Map<string, string[]>();
    for (const { rule } of generatedRules())
      for (const group of rule.apiGroups ?? [''])
        for (const resource of rule.resources ?? []) granted.set(`${group} ${resource}`, rule.verbs);

    // Every request was granted by the generated roles.
    const ungranted = recorder.requests.filter(
      (r) => !granted.get(`${r.group} ${r.resource}`)?.includes(r.verb),
    );
    expect(ungranted).toEqual([]);

    // Every generated grant was used (or is listed, with its reason, as unused by design).
    const unused = [...granted.keys()].filter((key) => !used.has(key) && !(key in UNUSED_BY_DESIGN));
    expect(unused).toEqual([]);

    // The verbs of each grant the run did not use: only those its relation grants for other operators.
    const unusedVerbs = Object.fromEntries(
      [...granted].map(([key, verbs]) => [key, verbs.filter((v) => !used.get(key)?.has(v))]),
    );
    expect(unusedVerbs).toEqual(UNUSED_VERBS);
  });
});
