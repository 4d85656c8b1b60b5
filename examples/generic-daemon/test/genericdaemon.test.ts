/**
 * The GenericDaemon on a local control plane with three simulated nodes, the operator running
 * under the ServiceAccount of its generated RBAC, as deployed: its DaemonSet owned, the daemon
 * following the nodes' `daemon` label as they are labelled, relabelled and unlabelled (the
 * control plane's DaemonSet controller and scheduler place the pods; the operator only keeps
 * the node selector right), `status.installed` from the DaemonSet. Seed 003's story first: the
 * same operator deployed as the namespace's default ServiceAccount, without bindings, is refused
 * with the server's own forbidden error. Last, the generated RBAC is minimal: every request of
 * the run is granted, every grant is used.
 */
import { startTestEnv, type TestEnv } from '@kubeloop/server/testing';
import { Client, DaemonSet, EventsV1Event, Node, Pod } from 'kubeloop/client';
import type { PolicyRule } from 'kubeloop/manifests';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenericDaemon } from '../src/api/mydomain/v1beta1/genericdaemon.js';
import { DAEMON_LABEL } from '../src/controller/genericdaemon.js';
import {
  applyAsAdmin,
  CRD_DIR,
  eventually,
  generatedRbac,
  OPERATOR_USER,
  type RunningOperator,
  readyzOf,
  recordRequests,
  startOperator,
  startOperatorAs,
} from './env.js';

let env: TestEnv;
let admin: Client;
beforeAll(async () => {
  // RBAC is the control plane's default mode; named here because the story depends on it.
  env = await startTestEnv({ authorizationMode: 'RBAC', crdDirectoryPaths: [CRD_DIR], nodes: { count: 3 } });
  admin = new Client(env.clientConfig);
});
afterAll(async () => {
  await admin?.close();
  await env?.stop();
});

const NODES = ['kubeloop-node-1', 'kubeloop-node-2', 'kubeloop-node-3'];
const DEFAULT_SA = 'system:serviceaccount:default:default';

const daemon = (name: string, spec: GenericDaemon['spec']): GenericDaemon => ({
  apiVersion: 'mydomain.com/v1beta1',
  kind: 'GenericDaemon',
  metadata: { name, namespace: 'default' },
  spec,
});

/** Sets (or, with null, removes) a node's `daemon` label. */
async function labelNode(node: string, value: string | null): Promise<void> {
  await admin.patch(await admin.get(Node, node), { metadata: { labels: { daemon: value } } });
}

/** The nodes running a GenericDaemon's pods (not terminating), sorted. */
async function nodesRunning(name: string): Promise<string[]> {
  const pods = await admin.api(Pod, 'default').list({ labelSelector: `${DAEMON_LABEL}=${name}` });
  return pods.items
    .filter((p) => !p.metadata?.deletionTimestamp && p.spec?.nodeName)
    .map((p) => p.spec?.nodeName ?? '')
    .sort();
}

/** Waits until the daemon runs on exactly `nodes`, and its status says so. */
async function expectOn(name: string, nodes: string[]): Promise<void> {
  await eventually(
    async () => JSON.stringify(await nodesRunning(name)) === JSON.stringify(nodes),
    30_000,
    `the daemon on ${nodes.join(', ') || 'no node'}`,
  );
  await eventually(
    async () =>
      (await admin.get(GenericDaemon, name, { namespace: 'default' })).status?.installed === nodes.length,
    30_000,
    `status.installed = ${nodes.length}`,
  );
}

describe("seed 003: the operator deployed as the namespace's default ServiceAccount, without bindings", () => {
  it("fails with the server's forbidden error on its GenericDaemons and DaemonSets, and is not ready", async () => {
    const op = await startOperatorAs(env, { serviceAccount: 'default/default' });
    try {
      const refusal = (resource: string) =>
        op.lines.find((l) => l.resource === resource && l.msg.startsWith('forbidden: '));
      await eventually(
        () => refusal('genericdaemons') && refusal('daemonsets'),
        15_000,
        'both informers refused',
      );
      // The seed's log lines, in kube 1.32's words.
      expect(refusal('genericdaemons')?.msg).toMatch(
        new RegExp(
          `^forbidden: genericdaemons\\.mydomain\\.com is forbidden: User "${DEFAULT_SA}" cannot (list|watch) resource "genericdaemons" in API group "mydomain\\.com" at the cluster scope$`,
        ),
      );
      expect(refusal('daemonsets')?.msg).toMatch(
        new RegExp(
          `^forbidden: daemonsets\\.apps is forbidden: User "${DEFAULT_SA}" cannot (list|watch) resource "daemonsets" in API group "apps" at the cluster scope$`,
        ),
      );
      expect(refusal('genericdaemons')?.hint).toMatch(
        /^the manager declares "(list|watch)" on "genericdaemons"/,
      );
      await eventually(async () => op.manager.healthUrl !== undefined, 10_000, 'the health endpoint');
      expect(await readyzOf(op.manager)).toBe(500);
    } finally {
      await op.stop();
    }
  });
});

describe('the operator under the ServiceAccount of its generated RBAC', () => {
  let op: RunningOperator;
  let recorder: ReturnType<typeof recordRequests>;
  beforeAll(async () => {
    await applyAsAdmin(env, generatedRbac());
    recorder = recordRequests(env, OPERATOR_USER);
    op = await startOperator(env);
    await op.manager.ready();
    await eventually(() => op.manager.isLeader, 10_000, 'the operator to lead');
  });
  afterAll(async () => {
    await op?.stop();
    recorder?.stop();
  });

  it('is refused a GenericDaemon without an image by the schema (the seed CRD requires it)', async () => {
    const err = await admin
      .create({
        ...daemon('no-image', { image: '' }),
        // The seed's required field missing, as a client without the type would send it.
        spec: { label: 'logs' },
      } as unknown as GenericDaemon)
      .catch((e: Error) => e);
    expect(String((err as Error).message)).toContain('spec.image: Required value');
  });

  it('runs the daemon by an owned DaemonSet on the labelled nodes, following them as they are relabelled', async () => {
    await admin.create(daemon('syslog', { label: 'logs', image: 'mbessler/syslogdocker' }));
    const ds = await eventually(() =>
      admin.get(DaemonSet, 'syslog-daemon', { namespace: 'default' }).catch(() => undefined),
    );
    const gd = await admin.get(GenericDaemon, 'syslog', { namespace: 'default' });
    expect(ds.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'mydomain.com/v1beta1',
        kind: 'GenericDaemon',
        name: 'syslog',
        uid: gd.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(ds.spec?.template?.spec?.nodeSelector).toEqual({ daemon: 'logs' });
    expect(ds.spec?.template?.spec?.containers?.[0]?.image).toBe('mbessler/syslogdocker');
    // No node is labelled yet: nowhere to run.
    await expectOn('syslog', []);

    await labelNode(NODES[0] as string, 'logs');
    await expectOn('syslog', [NODES[0] as string]);
    await labelNode(NODES[1] as string, 'logs');
    await expectOn('syslog', [NODES[0] as string, NODES[1] as string]);
    // Relabelled: the daemon leaves node 1.
    await labelNode(NODES[0] as string, 'metrics');
    await expectOn('syslog', [NODES[1] as string]);
    // Unlabelled: it leaves node 2.
    await labelNode(NODES[1] as string, null);
    await expectOn('syslog', []);
  });

  it('follows its spec: a new label moves the daemon, a new image rolls it, each change an Event', async () => {
    await admin.patch(daemon('syslog', { image: 'x' }), { spec: { label: 'metrics' } });
    await expectOn('syslog', [NODES[0] as string]);
    await admin.patch(daemon('syslog', { image: 'x' }), { spec: { image: 'busybox:1.36' } });
    await eventually(
      async () => {
        const pods = await admin.api(Pod, 'default').list({ labelSelector: `${DAEMON_LABEL}=syslog` });
        const live = pods.items.filter((p) => !p.metadata?.deletionTimestamp);
        return live.length === 1 && live[0]?.spec?.containers?.[0]?.image === 'busybox:1.36';
      },
      30_000,
      'the pod rolled to the new image',
    );
    const events = await admin.api(EventsV1Event, 'default').list();
    const reasons = events.items.filter((e) => e.regarding?.name === 'syslog').map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Created', 'Updated']));
  });

  it('is deleted with its DaemonSet (the garbage collector follows the owner reference)', async () => {
    await admin.delete(daemon('syslog', { image: 'x' }));
    await eventually(
      async () =>
        !(await admin.get(DaemonSet, 'syslog-daemon', { namespace: 'default' }).catch(() => undefined)),
      30_000,
      'the DaemonSet collected',
    );
  });

  it('made only requests its generated RBAC grants, and used every grant', async () => {
    await op.stop();
    recorder.stop();
    expect(op.lines.filter((l) => l.msg.startsWith('forbidden: '))).toEqual([]);
    const granted = new Set<string>();
    for (const o of generatedRbac())
      for (const rule of (o.rules as PolicyRule[] | undefined) ?? [])
        for (const group of rule.apiGroups ?? [''])
          for (const resource of rule.resources ?? [])
            for (const verb of rule.verbs) granted.add(`${verb} ${group} ${resource}`);
    // Every request granted.
    expect([...recorder.requests].filter((r) => !granted.has(r))).toEqual([]);
    // Every (group, resource) granted is used, but those listed with why they are granted all the same.
    const key = (g: string) => g.slice(g.indexOf(' ') + 1);
    const usedKeys = new Set([...recorder.requests].map(key));
    const unusedKeys = [...new Set([...granted].map(key))].filter((k) => !usedKeys.has(k));
    expect(unusedKeys).toEqual(Object.keys(UNUSED_BY_DESIGN));
    // The verbs granted and unused: only those the relation grants for other operators.
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
 * Granted and unused by this run, each for a reason; anything else unused fails the test (the
 * generator would grant it for nothing).
 */
const UNUSED_BY_DESIGN: Record<string, string> = {
  'mydomain.com genericdaemons/finalizers':
    'update on <kind>/finalizers is what OwnerReferencesPermissionEnforcement checks before a child with blockOwnerDeletion is created; kubeloop does not run that admission plugin, clusters that enable it (OpenShift) do',
};

/**
 * The verbs of each grant the run does not use, each for a reason of the relation that grants it;
 * a verb the generator adds without a use shows up here and fails the test.
 */
const UNUSED_VERBS: Record<string, string[]> = {
  // An owned kind's whole life cycle: an informer reads by a watch-list stream (`list` is its way on
  // servers without watch-list, `get` the cache's read-your-writes fallback); the operator updates
  // its DaemonSet rather than patching it, and lets the garbage collector delete it.
  'apps daemonsets': ['get', 'list', 'patch', 'delete'],
  // A repeated event's series is patched onto the first; this run emits no event twice.
  'events.k8s.io events': ['patch'],
  // The reconciled kind: read by its informer as above; `update`/`patch` are for its finalizers and
  // labels, which the GenericDaemon does not set.
  'mydomain.com genericdaemons': ['get', 'list', 'update', 'patch'],
  // Any status write (`updateStatus`, `getStatus`); the operator merge-patches.
  'mydomain.com genericdaemons/status': ['get', 'update'],
  'mydomain.com genericdaemons/finalizers': ['update'],
};
