/**
 * The EtcdCluster operator end to end, driven by the real kubectl against the local control plane
 * (one simulated node, so the StatefulSet's pods run and become Ready), with the operator
 * installed as `kubectl apply -k config/default` installs it and run under that generated RBAC
 * (its ServiceAccount's token). Every request it makes is recorded as the server authorizes it:
 * the test fails if the generated roles miss a request or grant something the run does not use.
 *
 * The member API is the in-process fake, wrapped to note, at each membership change, how many
 * of the cluster's pods were ready: the operator must only change the membership of a healthy
 * cluster, one member at a time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { Client, Pod } from 'kubeloop/client';
import type { PolicyRule } from 'kubeloop/manifests';
import type { Manager } from 'kubeloop/runtime';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../src/api/etcd/v1alpha1/etcdcluster.js';
import { createManager, LEADER_ELECTION_ID } from '../src/manager.js';
import { type ClusterRef, InMemoryMemberApi, type MemberApi } from '../src/members.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SA = { namespace: 'etcd-cluster-system', name: 'etcd-cluster-controller-manager' };
const USER = `system:serviceaccount:${SA.namespace}:${SA.name}`;

let env: KubectlEnv;
let admin: Client;
let operatorClient: Client;
let manager: Manager;
let done: Promise<void>;
const fake = new InMemoryMemberApi();
/** Each membership change with the members and ready pods the cluster had when it was made. */
const changes: { op: string; member: string; members: number; readyPods: number }[] = [];
const requests: { verb: string; group: string; resource: string }[] = [];
let stopRecording: () => void;

async function readyPods(c: ClusterRef): Promise<number> {
  const pods = await admin.api(Pod, c.namespace).list({ labelSelector: { 'etcd.cloud.io/cluster': c.name } });
  return pods.items.filter(
    (p) =>
      !p.metadata?.deletionTimestamp &&
      p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
  ).length;
}

/** The fake, noting the cluster's health at each change. */
const members: MemberApi = {
  list: (c) => fake.list(c),
  async add(c, name, url) {
    changes.push({
      op: 'add',
      member: name,
      members: (await fake.list(c)).length,
      readyPods: await readyPods(c),
    });
    return fake.add(c, name, url);
  },
  async remove(c, id) {
    const member = (await fake.list(c)).find((m) => m.id === id)?.name ?? id;
    changes.push({
      op: 'remove',
      member,
      members: (await fake.list(c)).length,
      readyPods: await readyPods(c),
    });
    return fake.remove(c, id);
  },
};

async function cluster(name: string): Promise<EtcdCluster> {
  return JSON.parse(await env.ok(['get', 'etcdcluster', name, '-o', 'json'])) as EtcdCluster;
}

/** Waits until the cluster is Running with `size` ready members. */
async function running(name: string, size: number): Promise<EtcdCluster> {
  return eventually(
    async () => {
      const c = await cluster(name);
      const s = c.status;
      return s?.phase === 'Running' &&
        s.size === size &&
        s.readyMembers === size &&
        s.observedGeneration === c.metadata?.generation
        ? c
        : undefined;
    },
    30_000,
    `${name} Running with ${size} members`,
  );
}

beforeAll(async () => {
  env = await startKubectlEnv({ nodes: { count: 1 } });
  admin = new Client(env.cp.clientConfig);
  // The operator as deployed: CRD, namespace, ServiceAccount, roles and bindings, its Deployment.
  await env.ok(['apply', '-k', join(root, 'config/default')]);
  await env.ok(['wait', '--for=condition=Established', 'crd/etcdclusters.etcd.cloud.io']);
  stopRecording = env.cp.audit.subscribe(({ user, info }) => {
    if (user.username !== USER || !info.isResourceRequest) return;
    requests.push({
      verb: info.verb,
      group: info.group,
      resource: info.subresource ? `${info.resource}/${info.subresource}` : info.resource,
    });
  });
  operatorClient = new Client(
    await env.cp.clientConfigFor({ serviceAccount: `${SA.namespace}/${SA.name}` }),
    {
      retry: { baseDelayMs: 1 },
    },
  );
  manager = createManager({
    client: operatorClient,
    members,
    logger: pino({ level: process.env.KUBELOOP_TEST_LOG ?? 'silent' }),
    healthProbeAddress: false,
    metricsAddress: false,
    handleSignals: false,
    gracefulShutdownTimeoutMs: 5_000,
    leaderElection: {
      id: LEADER_ELECTION_ID,
      leaseDurationMs: 1_500,
      renewDeadlineMs: 1_000,
      retryPeriodMs: 200,
    },
  });
  done = manager.start().catch(() => undefined);
  await manager.ready();
});

afterAll(async () => {
  await manager?.stop();
  await done;
  stopRecording?.();
  await operatorClient?.close();
  await admin?.close();
  await env?.stop();
});

describe('the EtcdCluster operator, with kubectl', () => {
  it('creates a 3-member cluster, scales it 3 → 5 → 3 one member at a time, and replaces a member whose pod was deleted', async () => {
    await env.ok(['apply', '-f', join(root, 'config/samples/etcd_v1alpha1_etcdcluster.yaml')]);
    let c = await running('example', 3);
    expect(c.status?.members?.map((m) => m.name)).toEqual(['example-0', 'example-1', 'example-2']);

    // What it runs on: a StatefulSet of the members, a headless peer Service, a client Service,
    // a PodDisruptionBudget keeping a majority.
    const sts = JSON.parse(await env.ok(['get', 'statefulset', 'example', '-o', 'json']));
    expect(sts.spec.replicas).toBe(3);
    expect(sts.spec.serviceName).toBe('example');
    expect(await env.ok(['get', 'service', 'example', '-o', 'jsonpath={.spec.clusterIP}'])).toBe('None');
    expect(await env.ok(['get', 'service', 'example-client', '-o', 'jsonpath={.spec.ports[0].port}'])).toBe(
      '2379',
    );
    expect(await env.ok(['get', 'pdb', 'example', '-o', 'jsonpath={.spec.minAvailable}'])).toBe('2');

    await env.ok(['scale', 'etcdcluster/example', '--replicas=5']);
    c = await running('example', 5);
    expect(c.status?.members?.map((m) => m.name)).toEqual([
      'example-0',
      'example-1',
      'example-2',
      'example-3',
      'example-4',
    ]);
    expect(await env.ok(['get', 'pdb', 'example', '-o', 'jsonpath={.spec.minAvailable}'])).toBe('3');

    await env.ok(['patch', 'etcdcluster', 'example', '--type=merge', '-p', '{"spec":{"size":3}}']);
    c = await running('example', 3);
    expect(c.status?.members?.map((m) => m.name)).toEqual(['example-0', 'example-1', 'example-2']);
    await eventually(
      async () =>
        (await env.ok(['get', 'pods', '-l', 'etcd.cloud.io/cluster=example', '-o', 'name']))
          .trim()
          .split('\n').length === 3,
    );

    // Each change was made on a healthy cluster (every member's pod ready), one member at a time.
    expect(changes).toEqual([
      { op: 'add', member: 'example-0', members: 0, readyPods: 0 },
      { op: 'add', member: 'example-1', members: 1, readyPods: 1 },
      { op: 'add', member: 'example-2', members: 2, readyPods: 2 },
      { op: 'add', member: 'example-3', members: 3, readyPods: 3 },
      { op: 'add', member: 'example-4', members: 4, readyPods: 4 },
      { op: 'remove', member: 'example-4', members: 5, readyPods: 5 },
      { op: 'remove', member: 'example-3', members: 4, readyPods: 4 },
    ]);

    // A member's pod deleted: the StatefulSet recreates it, and the operator replaces the member
    // whose data went with the old pod.
    const before = c.status?.members?.find((m) => m.name === 'example-1');
    await env.ok(['delete', 'pod', 'example-1']);
    c = await eventually(
      async () => {
        const now = await running('example', 3);
        const m = now.status?.members?.find((x) => x.name === 'example-1');
        return m && m.id !== before?.id && m.podUID !== before?.podUID ? now : undefined;
      },
      30_000,
      'example-1 replaced',
    );
    expect(
      fake.history.slice(-2).map((h) => `${h.op} ${h.member} ${h.id === before?.id ? 'old' : 'new'}`),
    ).toEqual(['remove example-1 old', 'add example-1 new']);
    expect(
      await env.ok(['get', 'events', '--field-selector', 'reason=MemberReplaced', '-o', 'name']),
    ).not.toBe('');
    expect(
      await env.ok([
        'get',
        'etcdcluster',
        'example',
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Available")].status}',
      ]),
    ).toBe('True');
  });

  it('runs under exactly its generated RBAC: every request granted, every grant used', async () => {
    await manager.stop();
    await done;
    stopRecording();
    const rules = [
      ...(JSON.parse(await env.ok(['get', 'clusterrole', 'etcd-cluster-manager-role', '-o', 'json']))
        .rules as PolicyRule[]),
      ...(JSON.parse(
        await env.ok(['get', 'role', 'etcd-cluster-leader-election-role', '-n', SA.namespace, '-o', 'json']),
      ).rules as PolicyRule[]),
    ];
    const granted = new Map<string, string[]>();
    for (const rule of rules)
      for (const group of rule.apiGroups ?? [''])
        for (const resource of rule.resources ?? []) granted.set(`${group} ${resource}`, [...rule.verbs]);
    const used = new Map<string, Set<string>>();
    for (const r of requests) {
      const key = `${r.group} ${r.resource}`;
      used.set(key, (used.get(key) ?? new Set()).add(r.verb));
    }

    // Every request was granted by the generated roles.
    for (const [key, verbs] of used)
      for (const verb of verbs) expect(granted.get(key), `${verb} ${key}`).toContain(verb);
    // Every granted resource was used, but for what is granted by design with no use in this run.
    const unusedByDesign: Record<string, string> = {
      'etcd.cloud.io etcdclusters/finalizers':
        'what OwnerReferencesPermissionEnforcement checks before a child with blockOwnerDeletion is created; kubeloop does not run that plugin',
    };
    const unusedResources = [...granted.keys()].filter((k) => !used.has(k)).sort();
    expect(unusedResources).toEqual(Object.keys(unusedByDesign).sort());
    // And the verbs of used grants the run does not use, each for a reason of the relation granting it.
    const unusedVerbs = Object.fromEntries(
      [...used.keys()].sort().map((k) => [k, (granted.get(k) ?? []).filter((v) => !used.get(k)?.has(v))]),
    );
    expect(unusedVerbs).toEqual({
      // An informer reads by a watch-list stream; `list` is its way on servers without watch-list,
      // `get` the cache's read-your-writes fallback.
      ' pods': ['get', 'list'],
      // An owned kind's whole life cycle: the operator creates its Services and leaves them be (their
      // spec never changes), merge-patches the StatefulSet and the budget, and lets the garbage collector delete them.
      ' services': ['get', 'list', 'update', 'patch', 'delete'],
      'apps statefulsets': ['get', 'list', 'update', 'delete'],
      'policy poddisruptionbudgets': ['get', 'list', 'update', 'delete'],
      'coordination.k8s.io leases': [],
      // `update`/`patch`: the reconciled kind's finalizers and labels, which this operator does not set.
      'etcd.cloud.io etcdclusters': ['get', 'list', 'update', 'patch'],
      // Any status write (`updateStatus`, `getStatus`); the operator merge-patches.
      'etcd.cloud.io etcdclusters/status': ['get', 'update'],
      // A repeated event's series; each event of this run is said once.
      'events.k8s.io events': ['patch'],
    });
  });
});

/**
 * `kubeloop dev examples/etcd-cluster` (run after the tests above in this file: it regenerates
 * config/, which they read): its own control plane, the CRD, the operator under its generated RBAC,
 * the sample applied and brought to Running with its 3 members.
 */
describe('kubeloop dev examples/etcd-cluster', () => {
  it('runs the operator and brings the sample to Running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etcd-dev-'));
    const bin = join(root, '../../packages/cli/bin/kubeloop.js');
    const child = spawn(
      process.execPath,
      [
        bin,
        'dev',
        root,
        '--port=0',
        `--kubeconfig=${join(dir, 'kubeconfig')}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        '--no-watch',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } },
    );
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const running = new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        output += d.toString();
        if (/default\/example .*status\.phase=Running status\.size=3 status\.readyMembers=3/.test(output))
          resolve();
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((code) => reject(new Error(`kubeloop dev exited (${code}):\n${output}`)));
    });
    try {
      await running;
      expect(output).toContain(
        'running the operator as system:serviceaccount:etcd-cluster-system:etcd-cluster-controller-manager',
      );
      expect(output).not.toMatch(/forbidden/i);
    } finally {
      child.kill('SIGINT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
